/**
 * The one plain-object guard of the repository. It lives in webhook/ because dist/webhook is
 * packaged alone (its files may import only webhook/ files), while components and policy packs
 * may import from here. No Pulumi imports: components/shared/records.ts adds the Output check.
 */

/** A JSON-object-like value: an object that is neither null nor an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value as a record, or undefined when it is not one (see isRecord). */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
    return isRecord(value) ? value : undefined;
}
