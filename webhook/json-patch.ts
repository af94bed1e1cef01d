/** The JSON Patch (RFC 6902) operations the webhook emits, and RFC 6901 pointer escaping. */

export type JsonPatchOperation = { op: "add"; path: string; value: unknown } | { op: "replace"; path: string; value: unknown };

/** Escapes one reference token of a JSON Pointer (`~` → `~0`, `/` → `~1`). */
export function pointerToken(token: string): string {
    return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** JSON text of long-lived values (the mounts and volumes of a cached plan), serialised once. */
const knownTexts = new WeakMap<object, string>();

/** Serialises `value` now and remembers the text for `serializePatch`; the value must not change afterwards. */
export function freezeJson<T extends object>(value: T): T {
    knownTexts.set(value, JSON.stringify(value));
    return value;
}

function text(value: unknown): string {
    if (typeof value !== "object" || value === null) return JSON.stringify(value);
    const known = knownTexts.get(value);
    if (known !== undefined) return known;
    return Array.isArray(value) ? `[${value.map(text).join(",")}]` : JSON.stringify(value);
}

/** The patch as JSON text, reusing the remembered text of frozen values. */
export function serializePatch(operations: readonly JsonPatchOperation[]): string {
    return `[${operations.map((operation) => `{"op":"${operation.op}","path":${JSON.stringify(operation.path)},"value":${text(operation.value)}}`).join(",")}]`;
}
