/**
 * Values as Go's encoding/json writes them, so a value the program parsed can be compared with one
 * a Go oracle decoded (tests/catalog/oracle/): map keys sorted byte-wise (UTF-8), HTML characters
 * left as they are (`SetEscapeHTML(false)`), U+2028 and U+2029 escaped, numbers as float64 in
 * ECMAScript's format (which Go's encoder follows), and the SHA-256 of that text.
 */
import { createHash } from "node:crypto";

export function goJson(value: unknown): string {
    if (value === null || value === undefined) return "null";
    if (typeof value === "number") return Object.is(value, -0) ? "-0" : JSON.stringify(value);
    if (typeof value === "boolean") return value ? "true" : "false";
    if (typeof value === "string")
        return JSON.stringify(value)
            .replace(/\u2028/g, "\\u2028")
            .replace(/\u2029/g, "\\u2029");
    if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort((a, b) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));
    return `{${keys.map((k) => `${goJson(k)}:${goJson(record[k])}`).join(",")}}`;
}

export function goJsonSha256(value: unknown): string {
    return createHash("sha256").update(goJson(value), "utf8").digest("hex");
}
