/** The JSON Patch (RFC 6902) operations the webhook emits, and RFC 6901 pointer escaping. */

export type JsonPatchOperation =
    | { op: "add"; path: string; value: unknown }
    | { op: "replace"; path: string; value: unknown };

/** Escapes one reference token of a JSON Pointer (`~` → `~0`, `/` → `~1`). */
export function pointerToken(token: string): string {
    return token.replace(/~/g, "~0").replace(/\//g, "~1");
}
