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

function normalizedConfig(config: PackConfig | undefined): Record<string, { enforcementLevel?: EnforcementLevel } & Record<string, unknown>> {
    return Object.fromEntries(Object.entries(config ?? {}).map(([name, value]) => [name, typeof value === "string" ? { enforcementLevel: value } : value]));
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

/** What both the resource and the stack validations see of a resource: a fresh proxy over its properties each time, as the server builds. */
function resourceView(resource: EngineResource): Pick<PolicyResource, "type" | "props" | "urn" | "name" | "opts" | "provider" | "isType"> & { asType: (resourceClass: unknown) => Record<string, unknown> | undefined } {
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

/** Compiled once per pack, as the server does at start-up. */
export class PolicyEngine {
    private readonly config: ReturnType<typeof normalizedConfig>;
    private readonly resourcePolicies: ResourceValidationPolicy[];
    private readonly stackPolicies: StackValidationPolicy[];

    constructor(private readonly pack: PackUnderTest) {
        this.config = normalizedConfig(pack.config);
        this.resourcePolicies = pack.policies.filter((p): p is ResourceValidationPolicy => "validateResource" in p && p.validateResource !== undefined);
        this.stackPolicies = pack.policies.filter((p): p is StackValidationPolicy => "validateStack" in p);
    }

    private levelOf(policy: { name: string; enforcementLevel?: EnforcementLevel }): EnforcementLevel {
        return this.config[policy.name]?.enforcementLevel ?? policy.enforcementLevel ?? this.pack.enforcementLevel ?? "advisory";
    }

    private reporter(policy: { name: string; description: string }, level: EnforcementLevel, into: Diagnostic[]): ReportViolation {
        const effective = level === "remediate" ? "mandatory" : level;
        return (violation: string, urn?: string) =>
            into.push({
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
        for (const policy of this.resourcePolicies) {
            const level = this.levelOf(policy);
            if (level === "disabled") {
                continue;
            }
            const report = this.reporter(policy, level, result.diagnostics);
            const validations = Array.isArray(policy.validateResource) ? policy.validateResource : [policy.validateResource];
            for (const validate of validations) {
                if (!validate) {
                    continue;
                }
                try {
                    const view = resourceView(resource);
                    const args: ResourceValidationArgs = {
                        ...view,
                        asType: view.asType as ResourceValidationArgs["asType"],
                        stackTags: new Map(),
                        getConfig: getConfigFor(this.config, policy.name),
                        notApplicable: (reason?: string): never => {
                            throw new NotApplicable(reason);
                        },
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
            const policyResource: PolicyResource = { ...view, asType: view.asType as PolicyResource["asType"], dependencies: [], propertyDependencies: {} };
            byUrn.set(resource.urn, policyResource);
            return policyResource;
        });
        resources.forEach((resource, i) => {
            const parent = resource.parent ? byUrn.get(resource.parent) : undefined;
            if (parent) {
                policyResources[i].parent = parent;
            }
        });
        for (const policy of this.stackPolicies) {
            const level = this.levelOf(policy);
            if (level === "disabled") {
                continue;
            }
            const args: StackValidationArgs = {
                resources: policyResources,
                getConfig: getConfigFor(this.config, policy.name),
                stackTags: new Map(),
                notApplicable: (reason?: string): never => {
                    throw new NotApplicable(reason);
                },
            };
            try {
                synchronous(policy.validateStack(args, this.reporter(policy, level, result.diagnostics)), policy.name);
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
        for (let parent = resource.parent ? byName.get(resource.parent) : undefined; parent; parent = parent.parent ? byName.get(parent.parent) : undefined) {
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
            opts: { ignoreChanges: r.options.ignoreChanges, protect: r.options.protect, additionalSecretOutputs: r.options.additionalSecretOutputs },
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
