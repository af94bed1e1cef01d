/**
 * Reads a stack config for an offline render: either a Pulumi stack file
 * (`config: {cluster-platform:cluster: …}`) or a plain YAML of the same top-level keys.
 * Produces the flat string map the Pulumi engine hands a program.
 */
import * as fs from "node:fs";
import { parse } from "yaml";
import { CONFIG_NAMESPACE } from "../../components/shared/problems";

export interface FlatConfig {
    /** `namespace:key` → value as the engine passes it (objects as JSON text). */
    values: Record<string, string>;
    /** Keys whose value (or part of it) was a `secure:` entry; they reach the program as secrets. */
    secretKeys: string[];
}

/** Placeholder for `secure:` values, which only the stack's secrets provider can decrypt. */
export const UNDECRYPTED_SECRET = "[secret]";

export function readConfigFile(file: string): FlatConfig {
    const document = parse(fs.readFileSync(file, "utf8")) ?? {};
    if (typeof document !== "object" || Array.isArray(document)) {
        throw new Error(`${file}: expected a YAML mapping of config keys`);
    }
    const isStackFile = "config" in document && typeof document.config === "object";
    const entries: Record<string, unknown> = isStackFile ? (document.config ?? {}) : document;
    return flattenConfig(entries);
}

export function flattenConfig(entries: Record<string, unknown>): FlatConfig {
    const values: Record<string, string> = {};
    const secretKeys: string[] = [];
    for (const [rawKey, rawValue] of Object.entries(entries)) {
        const key = rawKey.includes(":") ? rawKey : `${CONFIG_NAMESPACE}:${rawKey}`;
        const { value, secret } = replaceSecure(rawValue);
        values[key] = typeof value === "string" ? value : JSON.stringify(value);
        if (secret) {
            secretKeys.push(key);
        }
    }
    return { values, secretKeys };
}

function replaceSecure(value: unknown): { value: unknown; secret: boolean } {
    if (value === null || typeof value !== "object") {
        return { value, secret: false };
    }
    const keys = Object.keys(value);
    if (!Array.isArray(value) && keys.length === 1 && keys[0] === "secure") {
        return { value: UNDECRYPTED_SECRET, secret: true };
    }
    let secret = false;
    const out: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
    for (const [k, v] of Object.entries(value)) {
        const inner = replaceSecure(v);
        secret ||= inner.secret;
        (out as Record<string, unknown>)[k] = inner.value;
    }
    return { value: out, secret };
}
