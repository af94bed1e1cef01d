/** The analyzer protocol client (scripts/policy/analyzer.ts), under the name the policy tests import it by. */
export * from "../../scripts/policy/analyzer";
