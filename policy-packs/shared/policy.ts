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
import { schemaProblems } from "./config-schema";

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
    /** Rules across knobs that a JSON schema cannot state (an exemption naming an operator the stack declares): problems, each naming key, value and rule. */
    check?: (config: Record<string, unknown>) => string[];
}

/** Where a policy object keeps its PolicyMeta, for the pack's Configure check (pack.ts). */
export const POLICY_META = Symbol.for("cluster-platform.policy-meta");

/** The PolicyMeta a policy of these packs was declared with. */
export function metaOf(policy: object): PolicyMeta | undefined {
    return (policy as { [POLICY_META]?: PolicyMeta })[POLICY_META];
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

/**
 * Every problem of a policy's config, all at once: keys it does not declare, values its schema
 * refuses (type, range, enum, items), and its own cross-knob rules (`check`, on the config with
 * defaults applied).
 */
export function configProblems(meta: Pick<PolicyMeta, "name" | "config" | "check">, set: Readonly<Record<string, unknown>>): string[] {
    const declared = Object.keys(meta.config ?? {});
    const problems = unknownConfigKeyProblems(meta.name, declared, set);
    for (const key of declared) {
        if (set[key] !== undefined) {
            problems.push(...schemaProblems(`${meta.name}.${key}`, set[key], (meta.config ?? {})[key]));
        }
    }
    if (problems.length === 0 && meta.check) {
        problems.push(...meta.check({ ...defaultsOf(meta), ...withoutUndefined(set) }));
    }
    return problems;
}

const withoutUndefined = (set: Readonly<Record<string, unknown>>) =>
    Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));

/**
 * The policy's knobs: `defaults`, overridden by what the pack's config sets; any problem stops the
 * run. The server hands each call a fresh copy of the same values, so the last config checked is
 * remembered by its values' identity and a run checks it once.
 */
function configReader<T>(meta: PolicyMeta): (args: { getConfig<U extends object>(): U }) => T {
    const defaults = defaultsOf(meta);
    let last: { set: Record<string, unknown>; config: T } | undefined;
    const same = (a: Record<string, unknown>, b: Record<string, unknown>) => {
        const keys = Object.keys(a);
        return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
    };
    return (args) => {
        const set = args.getConfig<Record<string, unknown>>();
        if (last && same(last.set, set)) {
            return last.config;
        }
        const problems = configProblems(meta, set);
        if (problems.length > 0) {
            throw new PolicyConfigError(meta.name, problems);
        }
        const config = { ...defaults, ...withoutUndefined(set) } as T;
        last = { set, config };
        return config;
    };
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
    const read = configReader<C>(meta);
    return withMeta(meta, {
        ...base(meta),
        validateResource: (args, report) => check(args, read(args), report),
    });
}

/** A stack policy whose check receives the policy's config with defaults applied. */
export function stackPolicy<C = Record<string, never>>(meta: PolicyMeta, check: StackCheck<C>): StackValidationPolicy {
    const read = configReader<C>(meta);
    return withMeta(meta, {
        ...base(meta),
        validateStack: (args, report) => check(args, read(args), report),
    });
}

function withMeta<P extends object>(meta: PolicyMeta, policy: P): P {
    Object.defineProperty(policy, POLICY_META, { value: meta, enumerable: false });
    return policy;
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
