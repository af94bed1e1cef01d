/**
 * A policy's own `validateResource` / `validateStack`, called with the arguments @pulumi/policy's
 * public API declares (`ResourceValidationArgs`, `StackValidationArgs`), the properties behind its
 * exported `unknownCheckingProxy` as the analyzer server puts them. The policy unit tests
 * (tests/policy/support.ts) and `npm run bench:policy`'s measure of the rules alone use it; what
 * the server adds (descriptions, enforcement levels, "can't run during preview") is only ever
 * tested through the analyzer process (analyzer.ts).
 */
import {
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    unknownCheckingProxy,
} from "@pulumi/policy";
import type { EngineResource } from "./analyzer";

// The SDK's index re-exports it from a module whose declarations omit it, so it types as any.
const proxy = unknownCheckingProxy as <T>(value: T) => T;

const NO_TIMEOUTS = { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 };

const notApplicable = (reason?: string): never => {
    throw new Error(`notApplicable: ${reason ?? ""}`);
};

/**
 * What a policy sees of one resource. A class rather than an object of closures: the benchmark
 * builds one for each of 10,000 resources per round, and the policies only read it.
 */
class ResourceView {
    readonly type: string;
    readonly props: Record<string, unknown>;
    readonly urn: string;
    readonly name: string;
    readonly opts: ResourceValidationArgs["opts"];
    readonly provider?: ResourceValidationArgs["provider"];

    constructor(resource: EngineResource) {
        this.type = resource.type;
        this.props = proxy(resource.props);
        this.urn = resource.urn;
        this.name = resource.name;
        this.opts = {
            protect: false,
            ignoreChanges: [],
            aliases: [],
            customTimeouts: NO_TIMEOUTS,
            additionalSecretOutputs: [],
            ...resource.opts,
            ...(resource.parent ? { parent: resource.parent } : {}),
        } as ResourceValidationArgs["opts"];
        if (resource.provider) {
            this.provider = { ...resource.provider, props: proxy(resource.provider.props) } as ResourceValidationArgs["provider"];
        }
    }

    isType(resourceClass: { __pulumiType?: unknown }): boolean {
        return resourceClass.__pulumiType === this.type;
    }

    asType(resourceClass: { __pulumiType?: unknown }): Record<string, unknown> | undefined {
        return this.isType(resourceClass) ? this.props : undefined;
    }
}

/** The arguments of one resource policy call: the resource, and the knobs `config` gives for the policy being called. */
class ResourceArgs extends ResourceView {
    readonly stackTags = new Map<string, string>();
    readonly notApplicable = notApplicable;
    private readonly config: () => object | undefined;

    constructor(resource: EngineResource, config: () => object | undefined) {
        super(resource);
        this.config = config;
    }

    getConfig<T extends object>(): T {
        return { ...(this.config() ?? {}) } as T;
    }
}

/**
 * The arguments a resource policy is called with for `target`; `config` gives the knobs of the
 * policy being called (so one set of arguments can serve every policy of a pack in turn).
 */
export function resourceArgs(target: EngineResource, config: () => object | undefined): ResourceValidationArgs {
    return new ResourceArgs(target, config) as unknown as ResourceValidationArgs;
}

/** Every validation of a resource policy with `args`. */
export function runResourcePolicy(policy: ResourceValidationPolicy, args: ResourceValidationArgs, report: ReportViolation): void {
    const validations = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
    for (const validate of validations) {
        validate?.(args, report);
    }
}

/** One resource policy over `target`, configured with `config` (its knobs, as getConfig returns them). */
export function validateResource(
    policy: ResourceValidationPolicy,
    target: EngineResource,
    config: object | undefined,
    report: ReportViolation,
): void {
    runResourcePolicy(
        policy,
        resourceArgs(target, () => config),
        report,
    );
}

/** One stack policy over `resources` (parents linked by URN, as the server links them). */
export function validateStack(
    policy: StackValidationPolicy,
    resources: readonly EngineResource[],
    config: object | undefined,
    report: ReportViolation,
): void {
    const byUrn = new Map<string, PolicyResource>();
    const policyResources = resources.map((r) => {
        const resource = Object.assign(new ResourceView(r), { dependencies: [], propertyDependencies: {} }) as unknown as PolicyResource;
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
    policy.validateStack(args, report);
}
