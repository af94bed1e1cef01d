import type { Policy, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { EngineResource, PackConfig, PolicyEngine, UNKNOWN_VALUE, urnOf } from "../../scripts/policy/engine";

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

function engineFor(policy: Policy, config?: object): PolicyEngine {
    const pack: PackConfig = config === undefined ? {} : { [policy.name]: config as Record<string, unknown> };
    return new PolicyEngine({
        name: "test-pack",
        policies: [policy as ResourceValidationPolicy | StackValidationPolicy],
        enforcementLevel: "mandatory",
        config: pack,
    });
}

/** The violations (as reported, without the description) one resource policy reports for `target`. */
export function violations(policy: ResourceValidationPolicy, target: EngineResource, config?: object): string[] {
    return engineFor(policy, config)
        .analyze(target)
        .diagnostics.map((d) => (d.enforcementLevel === "advisory" ? `advisory: ${d.message}` : d.violation));
}

/** The violations a stack policy reports for `resources`, each with the URN it names. */
export function stackViolations(
    policy: StackValidationPolicy,
    resources: EngineResource[],
    config?: object,
): { violation: string; urn?: string }[] {
    return engineFor(policy, config)
        .analyzeStack(resources)
        .diagnostics.map((d) => ({ violation: d.violation, ...(d.urn === undefined ? {} : { urn: d.urn }) }));
}
