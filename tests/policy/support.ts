/**
 * Unit tests of one policy call the policy's own `validateResource` / `validateStack` with the
 * arguments @pulumi/policy's public API declares (scripts/policy/direct.ts). Nothing of the server
 * is re-implemented: what the server adds (the description before each message, enforcement
 * levels, "can't run during preview" for unknown values) is tested through the analyzer process itself (analyzer-process.ts,
 * tests/helpers/policy-packs.ts).
 */
import { Policy, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { AWS_TAGS_POLICIES } from "../../policy-packs/aws-tags/policies";
import { analyzeAll, EngineResource, UNKNOWN_VALUE, urnOf } from "../../scripts/policy/analyzer";
import { validateResource, validateStack } from "../../scripts/policy/direct";
import { sharedPacks } from "../helpers/policy-packs";

export { UNKNOWN_VALUE };

/** A resource of `type` as the engine sends it, named `name` in the stack "test". */
export function resource(type: string, name: string, props: Record<string, unknown>, extra: Partial<EngineResource> = {}): EngineResource {
    return { type, name, urn: urnOf("test", "cluster-platform", [type], name), props, ...extra };
}

const K8S_TYPES: Record<string, string> = {
    ClusterRole: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
    ClusterRoleBinding: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    Role: "kubernetes:rbac.authorization.k8s.io/v1:Role",
    RoleBinding: "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    MutatingWebhookConfiguration: "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
    ValidatingWebhookConfiguration: "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
    ValidatingWebhookConfigurationPatch: "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfigurationPatch",
    Deployment: "kubernetes:apps/v1:Deployment",
    DeploymentPatch: "kubernetes:apps/v1:DeploymentPatch",
    Pod: "kubernetes:core/v1:Pod",
    Service: "kubernetes:core/v1:Service",
    CronJob: "kubernetes:batch/v1:CronJob",
    PodDisruptionBudget: "kubernetes:policy/v1:PodDisruptionBudget",
};

/** A Kubernetes object as the engine sends it: type from its kind (`typeKind` for patches), Pulumi name = object name. */
export function k8s<T extends { kind: string; metadata: { name: string; namespace?: string } }>(
    object: T,
    typeKind: string = object.kind,
): EngineResource {
    const type = K8S_TYPES[typeKind];
    if (!type) {
        throw new Error(`support.k8s: add a type token for ${typeKind}`);
    }
    return resource(type, object.metadata.name, object as unknown as Record<string, unknown>);
}

/** The violations (as reported, without the description) one resource policy reports for `target`. */
export function violations(policy: ResourceValidationPolicy, target: EngineResource, config?: object): string[] {
    const found: string[] = [];
    validateResource(policy, target, config, (message) => found.push(message));
    return found;
}

/** The violations a stack policy reports for `resources`, each with the URN it names. */
export function stackViolations(
    policy: StackValidationPolicy,
    resources: EngineResource[],
    config?: object,
): { violation: string; urn?: string }[] {
    const found: { violation: string; urn?: string }[] = [];
    validateStack(policy, resources, config, (violation, urn) => found.push({ violation, ...(urn === undefined ? {} : { urn }) }));
    return found;
}

/**
 * What the pack holding `policy`, run as the CLI runs it, reports for `target` with only that
 * policy enabled (configured with `config`): the violation alone, or for a diagnostic the server
 * makes advisory (a policy that reads a value unknown during a preview) `advisory: <message>`.
 */
export async function analyzed(policy: Policy, target: EngineResource, config?: object): Promise<string[]> {
    const pack = AWS_TAGS_POLICIES.some((p) => p.name === policy.name) ? "aws-tags" : "k8s-rbac";
    const running = (await sharedPacks())[pack];
    const policies = pack === "aws-tags" ? AWS_TAGS_POLICIES : (await import("../../policy-packs/k8s-rbac/policies")).K8S_RBAC_POLICIES;
    const others = Object.fromEntries(policies.filter((p) => p.name !== policy.name).map((p) => [p.name, "disabled" as const]));
    const result = await analyzeAll(running, [target], { ...others, [policy.name]: { enforcementLevel: "mandatory", ...(config ?? {}) } });
    return result.diagnostics.map((d) => (d.enforcementLevel === "advisory" ? `advisory: ${d.message}` : d.violation));
}

export type { Policy };
