/**
 * Deterministic names for the objects an operator install generates, as OLM names them.
 *
 * OLM names CSV-derived Roles `<csv>-<serviceAccount>-<hash>` and ClusterRoles `<csv>-<hash>`
 * (operator-framework/operator-lifecycle-manager `pkg/controller/registry/resolver/rbac.go`,
 * `generateName`). Since November 2023 (commit 658a6a60d, "use a stable hash") the hash is
 * `pkg/lib/kubernetes/pkg/util/hash/hash.go`, `DeepHashObject`: SHA-224 of Go's `encoding/json`
 * encoding of a small struct (json.Encoder: struct fields in declaration order, HTML characters
 * escaped, a trailing newline), written in base 62 (`big.Int.Text(62)`). That is reproducible
 * here (`olmRbacName`); before it, OLM hashed a Go deep-print with FNV-32a, which is not.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../shared/canonical-json";

/** OLM's limit for generated RBAC names (`maxNameLength`). */
export const MAX_GENERATED_NAME_LENGTH = 63;

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

/** `math/big`'s digits for bases above 36. */
const BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** `big.Int.Text(62)` of the big-endian bytes. */
export function base62(bytes: Uint8Array): string {
    let value = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
    if (value === 0n) {
        return "0";
    }
    let out = "";
    while (value > 0n) {
        out = BASE62[Number(value % 62n)] + out;
        value /= 62n;
    }
    return out;
}

/**
 * A string as Go's json.Encoder writes it: `\n`, `\r`, `\t`, other control characters as
 * `\u00XX`, and `<`, `>`, `&`, U+2028, U+2029 escaped (`SetEscapeHTML` defaults to true).
 */
export function goJsonString(text: string): string {
    return JSON.stringify(text)
        .replace(/\\[bf]/g, (escape) => (escape === "\\b" ? "\\u0008" : "\\u000c"))
        .replace(/[<>&\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** One field of a Go struct: `"key":value`, left out when `omitEmpty` and the value is empty. */
type GoField = readonly [key: string, value: string | readonly string[] | undefined, omitEmpty: boolean];

function goStringList(list: readonly string[] | undefined): string {
    return list === undefined ? "null" : `[${list.map(goJsonString).join(",")}]`;
}

function goFields(fields: readonly GoField[]): string {
    const written = fields
        .filter(([, value, omitEmpty]) => !(omitEmpty && (value === undefined || value.length === 0)))
        .map(([key, value]) => `${goJsonString(key)}:${typeof value === "string" ? goJsonString(value) : goStringList(value)}`);
    return `{${written.join(",")}}`;
}

/** A CSV permission as Go encodes `v1alpha1.StrategyDeploymentPermissions` with `rbacv1.PolicyRule`s (their json tags, in order). */
export function permissionGoJson(permission: {
    serviceAccountName: string;
    rules: readonly {
        verbs: readonly string[];
        apiGroups?: readonly string[];
        resources?: readonly string[];
        resourceNames?: readonly string[];
        nonResourceURLs?: readonly string[];
    }[];
}): string {
    const rules = permission.rules.map((rule) =>
        goFields([
            ["verbs", rule.verbs, false],
            ["apiGroups", rule.apiGroups, true],
            ["resources", rule.resources, true],
            ["resourceNames", rule.resourceNames, true],
            ["nonResourceURLs", rule.nonResourceURLs, true],
        ]),
    );
    return `{${goJsonString("serviceAccountName")}:${goJsonString(permission.serviceAccountName)},${goJsonString("rules")}:[${rules.join(",")}]}`;
}

/**
 * OLM's current `generateName(base, o)`: `<base>-<base62(sha224(json(o) + "\n"))>`, the base cut
 * when base and hash exceed 63 characters (OLM's test ignores the dash: a name can reach 64).
 * `encoded` is Go's JSON encoding of `o` (without the encoder's newline).
 */
export function olmRbacName(base: string, encoded: string): string {
    const hash = base62(createHash("sha224").update(`${encoded}\n`, "utf8").digest());
    const trimmed =
        base.length + hash.length > MAX_GENERATED_NAME_LENGTH ? base.slice(0, MAX_GENERATED_NAME_LENGTH - hash.length - 1) : base;
    return `${trimmed}-${hash}`;
}

/** A short content hash for names that must change when content changes (hex, `length` chars). */
export function contentHash(value: unknown, length = 10): string {
    return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, length);
}
