/**
 * How every policy of this repository's packs is declared: mandatory unless configured
 * otherwise, with a description, a severity, remediation steps and, where it has knobs, a config
 * schema whose defaults are the single source of the knob's default value.
 */
import type {
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
} from "@pulumi/policy";
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";

export interface PolicyMeta {
    /** Unique in the pack; what `--policy-pack-config` files and Pulumi Cloud name the policy by. */
    name: string;
    description: string;
    severity: Severity;
    remediationSteps: string;
    /** Mandatory unless said otherwise: advisory for policies that report what they could not judge. */
    enforcementLevel?: "advisory" | "mandatory";
    /** The knobs: every property has a `default` (applied when the config does not set it) and a `description`. */
    config?: Record<string, PolicyConfigJSONSchema>;
}

/** The knobs' defaults, from their schemas. */
export function defaultsOf(meta: Pick<PolicyMeta, "config">): Record<string, unknown> {
    return Object.fromEntries(Object.entries(meta.config ?? {}).map(([key, schema]) => [key, schema.default]));
}

/**
 * The config keys of `set` the policy does not declare, as problems naming each and the keys it
 * has. The CLI validates `--policy-pack-config` against each policy's schema, but the schema it
 * receives carries only `properties` and `required` (no `additionalProperties`), so a misspelled
 * knob would otherwise be ignored in silence.
 */
export function unknownConfigKeyProblems(policy: string, known: readonly string[], set: Readonly<Record<string, unknown>>): string[] {
    const expected = known.length === 0 ? "it takes no config besides enforcementLevel" : `its keys: ${known.join(", ")}`;
    return Object.keys(set)
        .filter((key) => key !== "enforcementLevel" && !known.includes(key))
        .map((key) => `${policy}.${key}: ${JSON.stringify(key)} is not a config key of policy ${policy} (${expected})`);
}

/** The policy's knobs: `defaults`, overridden by what the pack's config sets; an unknown key stops the run. */
export function configOf<T>(policy: string, defaults: Readonly<Record<string, unknown>>, args: { getConfig<U extends object>(): U }): T {
    const set = args.getConfig<Record<string, unknown>>();
    let config: Record<string, unknown> | undefined;
    for (const key of Object.keys(set)) {
        if (!(key in defaults)) {
            throw new PolicyConfigError(policy, unknownConfigKeyProblems(policy, Object.keys(defaults), set));
        }
        if (set[key] !== undefined) {
            config ??= { ...defaults };
            config[key] = set[key];
        }
    }
    return (config ?? defaults) as T;
}

function schemaOf(meta: PolicyMeta): PolicyConfigSchema | undefined {
    return meta.config ? { properties: meta.config } : undefined;
}

function base(meta: PolicyMeta) {
    return {
        name: meta.name,
        description: meta.description,
        severity: meta.severity,
        remediationSteps: meta.remediationSteps,
        enforcementLevel: meta.enforcementLevel ?? ("mandatory" as const),
        ...(meta.config ? { configSchema: schemaOf(meta) } : {}),
    };
}

export type ResourceCheck<C> = (args: ResourceValidationArgs, config: C, report: ReportViolation) => void;
export type StackCheck<C> = (args: StackValidationArgs, config: C, report: ReportViolation) => void;

/** A resource policy whose check receives the policy's config with defaults applied. */
export function resourcePolicy<C = Record<string, never>>(meta: PolicyMeta, check: ResourceCheck<C>): ResourceValidationPolicy {
    const defaults = defaultsOf(meta);
    return {
        ...base(meta),
        validateResource: (args, report) => check(args, configOf<C>(meta.name, defaults, args), report),
    };
}

/** A stack policy whose check receives the policy's config with defaults applied. */
export function stackPolicy<C = Record<string, never>>(meta: PolicyMeta, check: StackCheck<C>): StackValidationPolicy {
    const defaults = defaultsOf(meta);
    return {
        ...base(meta),
        validateStack: (args, report) => check(args, configOf<C>(meta.name, defaults, args), report),
    };
}

/**
 * Thrown when a policy's config breaks a rule the JSON schema cannot express. The engine turns
 * it into an error that stops the preview, naming the policy, every bad value and its rule.
 */
export class PolicyConfigError extends Error {
    constructor(policy: string, problems: readonly string[]) {
        super(
            `invalid config for policy ${policy}: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n${problems.map((p) => `  - ${p}`).join("\n")}`,
        );
        this.name = "PolicyConfigError";
    }
}

/** A string list knob. */
export function stringList(description: string, items: PolicyConfigJSONSchema = { type: "string" }): PolicyConfigJSONSchema {
    return { type: "array", items, uniqueItems: true, default: [], description };
}

/** A boolean knob, off by default. */
export function flag(description: string): PolicyConfigJSONSchema {
    return { type: "boolean", default: false, description };
}
