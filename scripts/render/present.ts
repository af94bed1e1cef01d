/**
 * Turns values as the engine received them into what `pulumi preview` shows: secrets as
 * "[secret]", values unknown before deploy as "[unknown]", keys in a stable order.
 */
import * as pulumi from "@pulumi/pulumi";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";

export const SECRET = "[secret]";
export const UNKNOWN = "[unknown]";

/** Kubernetes objects lead with these keys, as manifests conventionally do. */
const LEADING_KEYS = ["apiVersion", "kind", "metadata"];

export function isSecretValue(value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<string, unknown>)[specialSigKey] === specialSecretSig;
}

/** Orders keys: apiVersion, kind, metadata first, then alphabetically, so output is byte-stable. */
export function orderedKeys(object: object): string[] {
    const keys = Object.keys(object);
    const leading = LEADING_KEYS.filter((k) => keys.includes(k));
    const rest = keys.filter((k) => !LEADING_KEYS.includes(k)).sort();
    return [...leading, ...rest];
}

export function present(value: unknown): unknown {
    if (pulumi.isUnknown(value)) {
        return UNKNOWN;
    }
    if (isSecretValue(value)) {
        return SECRET;
    }
    if (Array.isArray(value)) {
        return value.map(present);
    }
    if (pulumi.asset.Asset.isInstance(value) || pulumi.asset.Archive.isInstance(value)) {
        return describeAsset(value);
    }
    if (pulumi.Resource.isInstance(value)) {
        return `[resource ${(value as unknown as { __name?: string }).__name ?? ""}]`;
    }
    if (value !== null && typeof value === "object") {
        const out: Record<string, unknown> = {};
        for (const key of orderedKeys(value)) {
            const inner = (value as Record<string, unknown>)[key];
            if (inner !== undefined) {
                out[key] = present(inner);
            }
        }
        return out;
    }
    return value;
}

function describeAsset(value: pulumi.asset.Asset | pulumi.asset.Archive): string {
    const v = value as unknown as { path?: Promise<string>; text?: Promise<string>; uri?: Promise<string> };
    return v.path ? "[asset file]" : v.text ? "[asset text]" : v.uri ? "[asset uri]" : "[archive]";
}

/** True when `value` is a marker this module writes in place of a value. */
export function isMarker(value: unknown): boolean {
    return value === SECRET || value === UNKNOWN;
}
