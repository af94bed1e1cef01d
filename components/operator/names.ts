/**
 * Deterministic names for the objects an operator install generates, in OLM's shapes.
 *
 * OLM names CSV-derived Roles `<csv>-<serviceAccount>-<hash>` and ClusterRoles `<csv>-<hash>`,
 * where the hash is FNV-1a (32 bit) of a Go deep-print of the permission, encoded with
 * apimachinery's `rand.SafeEncodeString`, and the base is cut so the name fits 63 characters.
 * A Go deep-print cannot be reproduced outside Go, so the hash here is FNV-1a of the canonical
 * JSON of the same inputs: the same shape, length and alphabet, stable across runs and
 * machines, and changing exactly when the permission (or CSV name) changes.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../shared/canonical-json";

/** OLM's limit for generated RBAC names (`maxNameLength`). */
export const MAX_GENERATED_NAME_LENGTH = 63;

/** apimachinery's `rand.SafeEncodeString` alphabet: no vowels, no confusable characters. */
const SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789";

/** FNV-1a, 32 bit, over the UTF-8 bytes of `text`. */
export function fnv32a(text: string): number {
    let hash = 0x811c9dc5;
    for (const byte of Buffer.from(text, "utf8")) {
        hash ^= byte;
        hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash >>> 0;
}

/** FNV-1a, 64 bit, over the UTF-8 bytes of `text` (OLM's API-key hash). */
export function fnv64a(text: string): bigint {
    const mask = (1n << 64n) - 1n;
    let hash = 0xcbf29ce484222325n;
    for (const byte of Buffer.from(text, "utf8")) {
        hash ^= BigInt(byte);
        hash = (hash * 0x100000001b3n) & mask;
    }
    return hash;
}

/** apimachinery's `rand.SafeEncodeString`: each character mapped into the safe alphabet. */
export function safeEncode(text: string): string {
    let out = "";
    for (const char of text) {
        out += SAFE_ALPHANUMS[char.charCodeAt(0) % SAFE_ALPHANUMS.length];
    }
    return out;
}

/**
 * OLM's `generateName(base, o)`: `<base>-<hash>`, the base cut when base and hash exceed 63
 * characters. OLM's test ignores the dash, so a name can reach 64 characters; RBAC names allow
 * 253, and matching OLM's names matters more than the extra character.
 */
export function generateName(base: string, hashInput: unknown): string {
    const hash = safeEncode(String(fnv32a(canonicalJson(hashInput))));
    const room = MAX_GENERATED_NAME_LENGTH - hash.length - 1;
    const trimmed = base.length + hash.length > MAX_GENERATED_NAME_LENGTH ? base.slice(0, room) : base;
    return `${trimmed}-${hash}`;
}

/** A short content hash for names that must change when content changes (hex, `length` chars). */
export function contentHash(value: unknown, length = 10): string {
    return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, length);
}
