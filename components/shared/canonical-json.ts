/**
 * JSON with object keys sorted at every level, undefined members dropped and no whitespace:
 * equal values always serialise to the same bytes, whatever order their keys were set in. Used
 * where text is hashed (generated names, image digests).
 */
export function canonicalJson(value: unknown): string {
    return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
    if (Array.isArray(value)) {
        return value.map(sortKeys);
    }
    if (value !== null && typeof value === "object") {
        // No prototype: a member named "__proto__" (valid JSON, e.g. from JSON.parse) stays a member
        // instead of setting the prototype and vanishing from the text.
        const out: Record<string, unknown> = Object.create(null);
        for (const key of Object.keys(value).sort()) {
            const v = (value as Record<string, unknown>)[key];
            if (v !== undefined) {
                out[key] = sortKeys(v);
            }
        }
        return out;
    }
    return value;
}
