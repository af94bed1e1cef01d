/**
 * The one plain-object guard of the repository. A neutral module: it imports nothing, so the
 * program, the policy packs and the admission server (whose image carries it, see
 * components/webhook-image/index.ts WEBHOOK_INPUT_PATHS) all import it. resolved-records.ts adds
 * the Pulumi Output check for transformations.
 */

/** A JSON-object-like value: an object that is neither null nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value as a record, or undefined when it is not one (see isRecord). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
    return isRecord(value) ? value : undefined;
}
