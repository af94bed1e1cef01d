/**
 * The operator room's rules that stack config checks (components/config/schema.ts): what an
 * operator's pod overrides may not set. Pure and import-free, so config depends on this module
 * alone, never on the room's planners (tests/toolchain/import-rules.test.ts holds that).
 */

/**
 * Variables the stack derives and an override may not replace: OLM's `OPERATOR_CONDITION_NAME`
 * (the CSV name, `pkg/controller/install/deployment.go`) and `WATCH_NAMESPACE`, which the
 * operator reads to know its namespaces (targetNamespaces/rbacNamespaces say which).
 */
export const STACK_ENV_NAMES = ["OPERATOR_CONDITION_NAME", "WATCH_NAMESPACE"] as const;
