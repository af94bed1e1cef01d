/**
 * Reading resource properties that may be unknown. During a preview the engine sends values
 * that depend on other resources' outputs as unknowns; the policy SDK's proxy throws when one is
 * read, and the engine reports the whole policy as "can't run during preview" (advisory). Where a
 * policy can still judge the known part of a resource, it reads the uncertain parts with `known`.
 */
import { asRecord } from "../../components/shared/records";

/** Stands for a value the engine does not know yet. */
export const UNKNOWN = Symbol("unknown");
export type Unknown = typeof UNKNOWN;

/**
 * The SDK's UnknownValueError, recognised by its shape rather than its class: run from a checkout,
 * a pack's index.ts loads @pulumi/policy from the pack's node_modules while these shared modules
 * would load the repository's copy, and `instanceof` fails across two copies of a class.
 */
export function isUnknownValueError(error: unknown): boolean {
    return error instanceof Error && "unknownTypeSentinel" in error && Array.isArray((error as { props?: unknown }).props);
}

/** The value `read` returns, or UNKNOWN when it reads a value that is not known yet. */
export function known<T>(read: () => T): T | Unknown {
    try {
        return read();
    } catch (error) {
        if (isUnknownValueError(error)) {
            return UNKNOWN;
        }
        throw error;
    }
}

export function isKnown<T>(value: T | Unknown): value is T {
    return value !== UNKNOWN;
}

export type Obj = Record<string, unknown>;

export const asObject: (value: unknown) => Obj | undefined = asRecord;

export function asArray(value: unknown): unknown[] {
    return Array.isArray(value) ? value : [];
}

/**
 * A plain copy of an array (empty for anything else), each element read once: through the policy
 * SDK's proxy every read of an index or of `length` costs a new proxy, and spreading or iterating
 * reads `length` again at every step. An element unknown during a preview throws here.
 */
export function arrayCopy(value: unknown): unknown[] {
    if (!Array.isArray(value)) {
        return [];
    }
    const length = value.length;
    const out = new Array<unknown>(length);
    for (let i = 0; i < length; i++) {
        out[i] = value[i];
    }
    return out;
}

/** A map of strings whose values may be unknown one by one: unknown values become UNKNOWN. */
export function knownStringMap(value: unknown): Record<string, string | Unknown> | undefined {
    const map = asObject(value);
    if (!map) {
        return undefined;
    }
    const out: Record<string, string | Unknown> = {};
    for (const key of Object.keys(map)) {
        const entry = known(() => map[key]);
        out[key] = entry === UNKNOWN ? UNKNOWN : String(entry);
    }
    return out;
}

/** Only the known entries of a map (for label sets, where an unknown value matches nothing). */
export function knownEntries(map: Record<string, string | Unknown> | undefined): Record<string, string> {
    return Object.fromEntries(Object.entries(map ?? {}).filter((e): e is [string, string] => e[1] !== UNKNOWN));
}
