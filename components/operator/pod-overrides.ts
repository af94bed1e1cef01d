/**
 * Per-operator pod overrides (`operators[].config`), the part of OLM's Subscription `spec.config`
 * this stack applies (operator-framework/api `pkg/operators/v1alpha1/subscription_types.go`,
 * `SubscriptionConfig`), with OLM's merge rules on every container of every Deployment of the
 * operator (operator-framework/operator-lifecycle-manager
 * `pkg/controller/operators/olm/overrides/inject/inject.go`):
 * - env: `mergeEnvVars`, by name, the override wins; a container's own names keep their place,
 *   new names follow in the override's order;
 * - tolerations: `mergeTolerations`, appended unless an identical toleration is there;
 * - resources: `InjectResourcesIntoDeployment`, the whole ResourceRequirements replaced;
 * - nodeSelector: `InjectNodeSelectorIntoDeployment`, the whole map replaced.
 * Pure; the rules of the values live in the config schema (components/config/schema.ts).
 */
import type { PodOverridesConfig } from "../config/schema";

export type EnvEntry = { name: string; [key: string]: unknown };
type Container = { name: string; env?: EnvEntry[]; [key: string]: unknown };
type PodSpec = { containers: Container[]; [key: string]: unknown };

/** Kubernetes' rule for a label key (apimachinery `validation.IsQualifiedName`): `[prefix/]name`. */
export const LABEL_KEY_RULE =
    "must be a label key: an optional DNS-1123 subdomain prefix of at most 253 characters and '/', then a name of at most 63 characters of [A-Za-z0-9-_.] starting and ending with an alphanumeric character";
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isLabelKey(key: string): boolean {
    const slash = key.lastIndexOf("/");
    const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
        return false;
    }
    return name.length <= 63 && LABEL_NAME.test(name);
}

/** Kubernetes' rule for a label value (apimachinery `validation.IsValidLabelValue`). */
export const LABEL_VALUE_RULE =
    "must be a label value: at most 63 characters of [A-Za-z0-9-_.], starting and ending with an alphanumeric character, or empty";
export function isLabelValue(value: string): boolean {
    return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}

/** A resource quantity as apimachinery `resource.ParseQuantity` accepts it (`100m`, `1.5Gi`, `2e3`). */
export const QUANTITY_RULE = "must be a Kubernetes quantity such as 100m, 1, 1.5, 512Mi or 2Gi";
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;
export function isQuantity(value: string): boolean {
    return QUANTITY.test(value);
}

/** Kubernetes' rule for an environment variable name (apimachinery `validation.IsEnvVarName`). */
export const ENV_VAR_NAME_RULE = "must be an environment variable name: [-._a-zA-Z][-._a-zA-Z0-9]*";
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
export function isEnvVarName(name: string): boolean {
    return ENV_VAR_NAME.test(name);
}

/**
 * Variables the stack derives and an override may not replace: OLM's `OPERATOR_CONDITION_NAME`
 * (the CSV name, `pkg/controller/install/deployment.go`) and `WATCH_NAMESPACE`, which the
 * operator reads to know its namespaces (targetNamespaces/rbacNamespaces say which).
 */
export const STACK_ENV_NAMES = ["OPERATOR_CONDITION_NAME", "WATCH_NAMESPACE"] as const;

/** OLM's proxy variables (pkg/lib/proxy/envvar.go): an override naming one drops the cluster's proxy variables (`proxy.IsOverridden`). */
export function overridesProxy(config: PodOverridesConfig | undefined, proxyNames: readonly string[]): boolean {
    return (config?.env ?? []).some((e) => proxyNames.includes(e.name));
}

/** The pod spec with the overrides applied by OLM's rules (see the module comment). */
export function withPodOverrides<S extends PodSpec>(spec: S, config: PodOverridesConfig | undefined): S {
    if (!config) {
        return spec;
    }
    let result: S = { ...spec };
    if (config.env && config.env.length > 0) {
        const overrides = config.env.map((e) => JSON.parse(JSON.stringify(e)) as EnvEntry);
        result = { ...result, containers: result.containers.map((c) => ({ ...c, env: mergedEnv(c.env ?? [], overrides) })) };
    }
    if (config.resources) {
        const resources = JSON.parse(JSON.stringify(config.resources)) as Record<string, unknown>;
        result = { ...result, containers: result.containers.map((c) => ({ ...c, resources })) };
    }
    if (config.nodeSelector) {
        result = { ...result, nodeSelector: { ...config.nodeSelector } };
    }
    if (config.tolerations && config.tolerations.length > 0) {
        const own = (Array.isArray(result.tolerations) ? result.tolerations : []) as Record<string, unknown>[];
        const added = config.tolerations.filter((t) => !own.some((o) => sameToleration(o, t)));
        result = { ...result, tolerations: [...own, ...added.map((t) => ({ ...t }))] };
    }
    return result;
}

/**
 * OLM's `mergeEnvVars` (pkg/controller/operators/olm/overrides/inject/inject.go), for the
 * Subscription config's env and the cluster proxy's variables alike: every name the container
 * has keeps its place with the added value where one is added (the last of a repeated name), then
 * the added names the container lacks follow in the order given.
 */
export function mergedEnv<E extends EnvEntry>(own: readonly E[], added: readonly E[]): E[] {
    const byName = new Map(added.map((e) => [e.name, e]));
    const kept = own.map((e) => byName.get(e.name) ?? e);
    const ownNames = new Set(own.map((e) => e.name));
    return [...kept, ...added.filter((e) => !ownNames.has(e.name))];
}

/**
 * Go's `reflect.DeepEqual` on two `corev1.Toleration`s: an absent string field is Go's zero value
 * `""`; `tolerationSeconds` is a pointer, so absent equals absent only.
 */
function sameToleration(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
    const text = (t: Record<string, unknown>, k: string) => (t[k] === undefined ? "" : t[k]);
    return ["key", "operator", "value", "effect"].every((k) => text(a, k) === text(b, k)) && a.tolerationSeconds === b.tolerationSeconds;
}
