/**
 * Unit tests of one policy call the policy's own `validateResource` / `validateStack` with the
 * arguments @pulumi/policy's public API declares (`ResourceValidationArgs`,
 * `StackValidationArgs`), the properties behind its exported `unknownCheckingProxy` as the
 * analyzer server puts them. Nothing of the server is re-implemented: what the server adds (the
 * description before each message, enforcement levels, "can't run during preview" for unknown
 * values) is tested through the analyzer process itself (analyzer-process.ts,
 * tests/helpers/policy-packs.ts).
 */
import {
    Policy,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    unknownCheckingProxy,
} from "@pulumi/policy";
import { AWS_TAGS_POLICIES } from "../../policy-packs/aws-tags/policies";
import { analyzeAll, EngineResource, UNKNOWN_VALUE, urnOf } from "../../scripts/policy/analyzer";
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

// The SDK's index re-exports it from a module whose declarations omit it, so it types as any.
const proxy = unknownCheckingProxy as <T>(value: T) => T;

const options = (resource: EngineResource) => ({
    protect: false,
    ignoreChanges: [],
    aliases: [],
    customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
    additionalSecretOutputs: [],
    ...resource.opts,
    ...(resource.parent ? { parent: resource.parent } : {}),
});

const isType = (type: string) => (resourceClass: { __pulumiType?: unknown }) => resourceClass.__pulumiType === type;

function view(resource: EngineResource) {
    const props = proxy(resource.props);
    return {
        type: resource.type,
        props,
        urn: resource.urn,
        name: resource.name,
        opts: options(resource),
        isType: isType(resource.type) as ResourceValidationArgs["isType"],
        asType: ((resourceClass: { __pulumiType?: unknown }) =>
            isType(resource.type)(resourceClass) ? props : undefined) as ResourceValidationArgs["asType"],
        ...(resource.provider ? { provider: { ...resource.provider, props: proxy(resource.provider.props) } } : {}),
    };
}

const notApplicable = (reason?: string): never => {
    throw new Error(`notApplicable: ${reason ?? ""}`);
};

/** The violations (as reported, without the description) one resource policy reports for `target`. */
export function violations(policy: ResourceValidationPolicy, target: EngineResource, config?: object): string[] {
    const found: string[] = [];
    const report: ReportViolation = (message) => found.push(message);
    const args: ResourceValidationArgs = {
        ...view(target),
        stackTags: new Map(),
        getConfig: <T extends object>() => ({ ...(config ?? {}) }) as T,
        notApplicable,
    };
    const validations = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
    for (const validate of validations) {
        validate?.(args, report);
    }
    return found;
}

/** The violations a stack policy reports for `resources`, each with the URN it names. */
export function stackViolations(
    policy: StackValidationPolicy,
    resources: EngineResource[],
    config?: object,
): { violation: string; urn?: string }[] {
    const found: { violation: string; urn?: string }[] = [];
    const byUrn = new Map<string, PolicyResource>();
    const policyResources = resources.map((r) => {
        const resource: PolicyResource = { ...view(r), dependencies: [], propertyDependencies: {} };
        byUrn.set(r.urn, resource);
        return resource;
    });
    resources.forEach((r, i) => {
        const parent = r.parent ? byUrn.get(r.parent) : undefined;
        if (parent) policyResources[i].parent = parent;
    });
    const args: StackValidationArgs = {
        resources: policyResources,
        stackTags: new Map(),
        getConfig: <T extends object>() => ({ ...(config ?? {}) }) as T,
        notApplicable,
    };
    policy.validateStack(args, (violation, urn) => found.push({ violation, ...(urn === undefined ? {} : { urn }) }));
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
