/**
 * Runs a policy pack's policies in-process, with arguments shaped exactly as the policy SDK's
 * analyzer server builds them from the engine's requests: the type token, the properties behind
 * the SDK's unknown-checking proxy, the URN, name and options, the provider, `getConfig`,
 * `isType`/`asType` and `notApplicable`. Diagnostics follow the server's rules too: the message
 * is the policy's description then the violation, the enforcement level comes from the pack
 * config, then the policy, then the pack, and a policy that reads an unknown value during a
 * preview yields an advisory "can't run" diagnostic. Used by the policy tests, the whole-program
 * compliance test and `npm run bench:policy`; the real gRPC server is tested separately.
 */
import {
    EnforcementLevel,
    Policies,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
    unknownCheckingProxy,
    UnknownValueError,
} from "@pulumi/policy";
import { unknownValue } from "@pulumi/pulumi/runtime/rpc";
import type { RenderedResource } from "../render/render";
import { UNKNOWN } from "../render/present";

/** A resource as the engine sends it to an analyzer. */
export interface EngineResource {
    type: string;
    name: string;
    urn: string;
    /** Inputs as the engine knows them; unknown values are the wire sentinel `UNKNOWN_VALUE`. */
    props: Record<string, unknown>;
    opts?: Partial<PolicyResourceOptions>;
    provider?: { type: string; name: string; urn: string; props: Record<string, unknown> };
    /** URN of the parent resource. */
    parent?: string;
}

/** How the engine sends a value that is unknown during a preview. */
export const UNKNOWN_VALUE: string = unknownValue;

/** `{policy: level}` or `{policy: {enforcementLevel?, ...knobs}}`, as a `--policy-pack-config` file holds. */
export type PackConfig = Record<string, EnforcementLevel | ({ enforcementLevel?: EnforcementLevel } & Record<string, unknown>)>;

export interface PackUnderTest {
    name: string;
    version?: string;
    policies: Policies;
    /** The pack's default enforcement level (the SDK's default is advisory). */
    enforcementLevel?: EnforcementLevel;
    config?: PackConfig;
}

export interface Diagnostic {
    policyName: string;
    policyPackName: string;
    /** What the engine prints: the policy's description, a newline and the violation. */
    message: string;
    /** The violation alone, as the policy reported it. */
    violation: string;
    enforcementLevel: EnforcementLevel;
    urn?: string;
}

export interface AnalysisResult {
    diagnostics: Diagnostic[];
    notApplicable: { policyName: string; reason?: string }[];
}

class NotApplicable extends Error {
    constructor(readonly reason?: string) {
        super(reason ?? "Policy does not apply");
    }
}

// The SDK's index re-exports these from a module whose declarations omit them, so they type as any.
const proxy = unknownCheckingProxy as <T>(value: T) => T;
const UnknownValue = UnknownValueError as new (...args: never[]) => Error;

function normalizedConfig(
    config: PackConfig | undefined,
): Record<string, { enforcementLevel?: EnforcementLevel } & Record<string, unknown>> {
    return Object.fromEntries(
        Object.entries(config ?? {}).map(([name, value]) => [name, typeof value === "string" ? { enforcementLevel: value } : value]),
    );
}

function getConfigFor(config: ReturnType<typeof normalizedConfig>, policy: string) {
    return <T extends object>(): T => {
        const { enforcementLevel: _level, ...properties } = config[policy] ?? {};
        return properties as T;
    };
}

/** The server awaits what a validation returns; this engine runs the packs' policies, which all return nothing. */
function synchronous(returned: unknown, policy: string): void {
    if (returned !== undefined) {
        throw new Error(`policy ${policy} returned a value; the policies of this repository's packs are synchronous`);
    }
}

function isTypeOf(type: string, resourceClass: unknown): boolean {
    const pulumiType = (resourceClass as { __pulumiType?: unknown }).__pulumiType;
    if (typeof pulumiType === "string") {
        return pulumiType === type;
    }
    const isInstance = (resourceClass as { isInstance?: (o: unknown) => boolean }).isInstance;
    return typeof isInstance === "function" && isInstance({ __pulumiType: type }) === true;
}

function options(resource: EngineResource): PolicyResourceOptions {
    return {
        protect: false,
        ignoreChanges: [],
        aliases: [],
        customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
        additionalSecretOutputs: [],
        ...resource.opts,
        ...(resource.parent ? { parent: resource.parent } : {}),
    };
}

const NO_STACK_TAGS: ReadonlyMap<string, string> = new Map();

function throwNotApplicable(reason?: string): never {
    throw new NotApplicable(reason);
}

/** What both the resource and the stack validations see of a resource, behind the SDK's unknown-checking proxy. */
function resourceView(resource: EngineResource): Pick<
    PolicyResource,
    "type" | "props" | "urn" | "name" | "opts" | "provider" | "isType"
> & {
    asType: (resourceClass: unknown) => Record<string, unknown> | undefined;
} {
    const props = proxy(resource.props);
    return {
        type: resource.type,
        props,
        urn: resource.urn,
        name: resource.name,
        opts: options(resource),
        isType: (resourceClass) => isTypeOf(resource.type, resourceClass),
        asType: (resourceClass: unknown) => (isTypeOf(resource.type, resourceClass) ? props : undefined),
        ...(resource.provider ? { provider: { ...resource.provider, props: proxy(resource.provider.props) } } : {}),
    };
}

interface Compiled<P> {
    policy: P;
    /** A resource policy's validation functions, in order. */
    validations: ResourceValidation[];
    getConfig: <T extends object>() => T;
    /** Reports into the diagnostics of the analysis under way. */
    report: ReportViolation;
}

/**
 * Compiled once per pack, as the server does at start-up: each enabled policy with its level,
 * config and reporter. Each analysis builds one view of the resource (one proxy) for all
 * policies; the server builds one per policy, which no policy can tell apart.
 */
export class PolicyEngine {
    private readonly resourcePolicies: Compiled<ResourceValidationPolicy>[];
    private readonly stackPolicies: Compiled<StackValidationPolicy>[];
    /** Where the reporters write: the diagnostics of the analysis under way. */
    private sink: Diagnostic[] = [];

    constructor(private readonly pack: PackUnderTest) {
        const config = normalizedConfig(pack.config);
        const compile = <P extends ResourceValidationPolicy | StackValidationPolicy>(policy: P): Compiled<P> | undefined => {
            const level = config[policy.name]?.enforcementLevel ?? policy.enforcementLevel ?? pack.enforcementLevel ?? "advisory";
            if (level === "disabled") {
                return undefined;
            }
            const validate = "validateResource" in policy ? policy.validateResource : undefined;
            const validations = (Array.isArray(validate) ? validate : [validate]).filter((v): v is ResourceValidation => v !== undefined);
            return { policy, validations, getConfig: getConfigFor(config, policy.name), report: this.reporter(policy, level) };
        };
        this.resourcePolicies = pack.policies
            .filter((p): p is ResourceValidationPolicy => "validateResource" in p && p.validateResource !== undefined)
            .map(compile)
            .filter((c): c is Compiled<ResourceValidationPolicy> => c !== undefined);
        this.stackPolicies = pack.policies
            .filter((p): p is StackValidationPolicy => "validateStack" in p)
            .map(compile)
            .filter((c): c is Compiled<StackValidationPolicy> => c !== undefined);
    }

    private reporter(policy: { name: string; description: string }, level: EnforcementLevel): ReportViolation {
        const effective = level === "remediate" ? "mandatory" : level;
        return (violation: string, urn?: string) =>
            this.sink.push({
                policyName: policy.name,
                policyPackName: this.pack.name,
                message: violation ? `${policy.description}\n${violation}` : policy.description,
                violation,
                enforcementLevel: effective,
                ...(urn === undefined ? {} : { urn }),
            });
    }

    private caught(error: unknown, policy: { name: string }, result: AnalysisResult): void {
        if (error instanceof UnknownValue) {
            result.diagnostics.push({
                policyName: policy.name,
                policyPackName: this.pack.name,
                message: `can't run policy '${policy.name}' from policy pack '${this.pack.name}@v${this.pack.version ?? "0.1.0"}' during preview: ${error.message}`,
                violation: error.message,
                enforcementLevel: "advisory",
            });
        } else if (error instanceof NotApplicable) {
            result.notApplicable.push({ policyName: policy.name, ...(error.reason === undefined ? {} : { reason: error.reason }) });
        } else {
            throw error;
        }
    }

    /** What `Analyze` answers for one resource. */
    analyze(resource: EngineResource): AnalysisResult {
        const result: AnalysisResult = { diagnostics: [], notApplicable: [] };
        this.sink = result.diagnostics;
        const view = resourceView(resource);
        const asType = view.asType as ResourceValidationArgs["asType"];
        for (const { policy, validations, getConfig, report } of this.resourcePolicies) {
            for (const validate of validations) {
                try {
                    const args: ResourceValidationArgs = {
                        type: view.type,
                        props: view.props,
                        urn: view.urn,
                        name: view.name,
                        opts: view.opts,
                        ...(view.provider ? { provider: view.provider } : {}),
                        isType: view.isType,
                        asType,
                        stackTags: NO_STACK_TAGS,
                        getConfig,
                        notApplicable: throwNotApplicable,
                    };
                    synchronous(validate(args, report), policy.name);
                } catch (error) {
                    this.caught(error, policy, result);
                }
            }
        }
        return result;
    }

    /** What `AnalyzeStack` answers for the whole stack. */
    analyzeStack(resources: readonly EngineResource[]): AnalysisResult {
        const result: AnalysisResult = { diagnostics: [], notApplicable: [] };
        if (this.stackPolicies.length === 0) {
            return result;
        }
        const byUrn = new Map<string, PolicyResource>();
        const policyResources = resources.map((resource) => {
            const view = resourceView(resource);
            const policyResource: PolicyResource = {
                ...view,
                asType: view.asType as PolicyResource["asType"],
                dependencies: [],
                propertyDependencies: {},
            };
            byUrn.set(resource.urn, policyResource);
            return policyResource;
        });
        resources.forEach((resource, i) => {
            const parent = resource.parent ? byUrn.get(resource.parent) : undefined;
            if (parent) {
                policyResources[i].parent = parent;
            }
        });
        this.sink = result.diagnostics;
        for (const { policy, getConfig, report } of this.stackPolicies) {
            const args: StackValidationArgs = {
                resources: policyResources,
                getConfig,
                stackTags: NO_STACK_TAGS,
                notApplicable: throwNotApplicable,
            };
            try {
                synchronous(policy.validateStack(args, report), policy.name);
            } catch (error) {
                this.caught(error, policy, result);
            }
        }
        return result;
    }

    /** Every resource through `analyze`, then the stack through `analyzeStack`, as a preview does. */
    analyzeAll(resources: readonly EngineResource[]): AnalysisResult {
        const all: AnalysisResult = { diagnostics: [], notApplicable: [] };
        for (const resource of resources) {
            const one = this.analyze(resource);
            all.diagnostics.push(...one.diagnostics.map((d) => ({ urn: resource.urn, ...d })));
            all.notApplicable.push(...one.notApplicable);
        }
        const stack = this.analyzeStack(resources);
        all.diagnostics.push(...stack.diagnostics);
        all.notApplicable.push(...stack.notApplicable);
        return all;
    }
}

// ---------------------------------------------------------------- rendered resources

/** `urn:pulumi:<stack>::<project>::<parent types $-joined>$<type>::<name>`, as the engine forms it. */
export function urnOf(stack: string, project: string, typeChain: readonly string[], name: string): string {
    return `urn:pulumi:${stack}::${project}::${typeChain.join("$")}::${name}`;
}

/** The render's markers back into what the engine sends: unknowns as the wire sentinel. */
function engineValue(value: unknown): unknown {
    if (value === UNKNOWN) {
        return UNKNOWN_VALUE;
    }
    if (Array.isArray(value)) {
        return value.map(engineValue);
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, engineValue(v)]));
    }
    return value;
}

export interface FromRenderOptions {
    stack?: string;
    project?: string;
}

/**
 * The resources of a render (`npm run render`, `renderProgram`) as the engine would send them to
 * an analyzer: URNs with the parent type chain, unknown values as sentinels (secrets stay
 * "[secret]"; policies never need their values), reads left out (the engine does not analyze
 * them), and each AWS resource given the stack's AWS provider when there is exactly one.
 */
export function engineResourcesFromRender(resources: readonly RenderedResource[], options: FromRenderOptions = {}): EngineResource[] {
    const stack = options.stack ?? "render";
    const project = options.project ?? "cluster-platform";
    const byName = new Map<string, RenderedResource>();
    for (const resource of resources) {
        if (!byName.has(resource.name)) {
            byName.set(resource.name, resource);
        }
    }
    const chainOf = (resource: RenderedResource): string[] => {
        const chain = [resource.type];
        for (
            let parent = resource.parent ? byName.get(resource.parent) : undefined;
            parent;
            parent = parent.parent ? byName.get(parent.parent) : undefined
        ) {
            chain.unshift(parent.type);
        }
        return chain;
    };
    const urns = new Map(resources.map((r) => [r, urnOf(stack, project, chainOf(r), r.name)]));
    const awsProviders = resources.filter((r) => r.type === "pulumi:providers:aws");
    const awsProvider = awsProviders.length === 1 ? awsProviders[0] : undefined;
    return resources
        .filter((r) => r.read === undefined)
        .map((r) => ({
            type: r.type,
            name: r.name,
            urn: urns.get(r) as string,
            props: engineValue(r.inputs) as Record<string, unknown>,
            opts: {
                ignoreChanges: r.options.ignoreChanges,
                protect: r.options.protect,
                additionalSecretOutputs: r.options.additionalSecretOutputs,
            },
            ...(r.parent && byName.has(r.parent) ? { parent: urns.get(byName.get(r.parent) as RenderedResource) } : {}),
            ...(awsProvider && r.type.startsWith("aws:")
                ? {
                      provider: {
                          type: awsProvider.type,
                          name: awsProvider.name,
                          urn: urns.get(awsProvider) as string,
                          props: engineValue(awsProvider.inputs) as Record<string, unknown>,
                      },
                  }
                : {}),
        }));
}
