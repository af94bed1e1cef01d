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

/** What a value breaks of the JSON-schema subset the knobs use (type, enum, items, minimum, maximum), as a rule; undefined when it holds. */
function knobRuleBroken(schema: PolicyConfigJSONSchema, value: unknown): string | undefined {
    const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    const items = typeof schema.items === "object" && !Array.isArray(schema.items) ? schema.items : undefined;
    const is: Record<string, (v: unknown) => boolean> = {
        array: Array.isArray,
        boolean: (v) => typeof v === "boolean",
        integer: Number.isInteger,
        number: (v) => typeof v === "number",
        object: (v) => typeof v === "object" && v !== null && !Array.isArray(v),
        string: (v) => typeof v === "string",
    };
    if (types.length > 0 && !types.some((t) => is[t]?.(value))) {
        const item = items?.type;
        return `must be ${types.map((t) => (t === "array" && typeof item === "string" ? `a list of ${item}s` : `a ${t}`)).join(" or ")}`;
    }
    if (schema.enum && !schema.enum.some((allowed) => allowed === value)) {
        return `must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    if (typeof value === "number" && schema.minimum !== undefined && value < schema.minimum) {
        return `must be at least ${schema.minimum}`;
    }
    if (typeof value === "number" && schema.maximum !== undefined && value > schema.maximum) {
        return `must be at most ${schema.maximum}`;
    }
    if (Array.isArray(value) && items !== undefined) {
        const broken = value.map((v, i) => [i, knobRuleBroken(items, v)] as const).filter(([, rule]) => rule !== undefined);
        if (broken.length > 0) {
            return broken.map(([i, rule]) => `item ${i} (${JSON.stringify(value[i])}) ${rule}`).join("; ");
        }
    }
    return undefined;
}

/**
 * The knobs of `set` whose values break their schema, each naming the key, the value and the rule.
 * The CLI validates `--policy-pack-config` against these schemas (pulumi/pulumi
 * pkg/resource/analyzer/config.go `validatePolicyPackConfig`), but an analyzer configured another
 * way (a programmatic config, an older CLI) would otherwise fail on the first use with a TypeError.
 */
export function configValueProblems(
    policy: string,
    schemas: Readonly<Record<string, PolicyConfigJSONSchema>>,
    set: Readonly<Record<string, unknown>>,
): string[] {
    return Object.entries(set).flatMap(([key, value]) => {
        const schema = schemas[key];
        const rule = schema === undefined || value === undefined ? undefined : knobRuleBroken(schema, value);
        return rule === undefined ? [] : [`${policy}.${key}: ${JSON.stringify(value)} ${rule}`];
    });
}

/** Configs whose values were checked (the analyzer hands each policy the same object for every resource). */
const valuesChecked = new WeakSet<object>();

/** The policy's knobs: `defaults`, overridden by what the pack's config sets; an unknown key or a value breaking its schema stops the run, every problem at once. */
export function configOf<T>(
    policy: string,
    defaults: Readonly<Record<string, unknown>>,
    args: { getConfig<U extends object>(): U },
    schemas: Readonly<Record<string, PolicyConfigJSONSchema>> = {},
): T {
    const set = args.getConfig<Record<string, unknown>>();
    let config: Record<string, unknown> | undefined;
    for (const key of Object.keys(set)) {
        if (!(key in defaults)) {
            throw new PolicyConfigError(policy, [
                ...unknownConfigKeyProblems(policy, Object.keys(defaults), set),
                ...configValueProblems(policy, schemas, set),
            ]);
        }
        if (set[key] !== undefined) {
            config ??= { ...defaults };
            config[key] = set[key];
        }
    }
    if (config !== undefined && !valuesChecked.has(set)) {
        const problems = configValueProblems(policy, schemas, set);
        valuesChecked.add(set);
        if (problems.length > 0) {
            throw new PolicyConfigError(policy, problems);
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
        validateResource: (args, report) => check(args, configOf<C>(meta.name, defaults, args, meta.config), report),
    };
}

/** A stack policy whose check receives the policy's config with defaults applied. */
export function stackPolicy<C = Record<string, never>>(meta: PolicyMeta, check: StackCheck<C>): StackValidationPolicy {
    const defaults = defaultsOf(meta);
    return {
        ...base(meta),
        validateStack: (args, report) => check(args, configOf<C>(meta.name, defaults, args, meta.config), report),
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
