/**
 * Resource props as a transformation sees them: a field may still be a `pulumi.Output`, whose
 * contents are unknown until it resolves, so a guard that reads props must not take an Output
 * for a record (it is an object, and reading its keys would read the Output's internals).
 */
import * as pulumi from "@pulumi/pulumi";
import { isRecord } from "./records";

/** A record whose keys can be read now: a plain object that is not a `pulumi.Output`. */
export function isResolvedRecord(value: unknown): value is Record<string, unknown> {
    return isRecord(value) && !pulumi.Output.isInstance(value);
}

/** The value as a record whose keys can be read now, or undefined (see isResolvedRecord). */
export function asResolvedRecord(value: unknown): Record<string, unknown> | undefined {
    return isResolvedRecord(value) ? value : undefined;
}
