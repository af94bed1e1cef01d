/**
 * The vocabulary of the pure admission decision: what it is given (cluster state as plain data)
 * and what it returns (a JSON Patch with warnings, or a denial with a reason and a message).
 */
import type { ObjectReference } from "./api";
import type { JsonPatchOperation } from "./json-patch";
import type { Pod } from "./pod";

/** A Bundle or ClusterBundle as the webhook sees it: names, generation and references, nothing else. */
export interface BundleInfo {
    name: string;
    /** The Bundle's namespace; undefined for a ClusterBundle. */
    namespace?: string;
    /** metadata.generation, recorded in the bundle-generations annotation. */
    generation: number;
    /** Labelled `subscription.openshift.io/always-inject: "true"`. */
    alwaysInject: boolean;
    entitlements: readonly ObjectReference[];
    yumRepositories: readonly ObjectReference[];
}

export type ReferencedKind = "Secret" | "ConfigMap";

/** Per kind, namespace → names of the objects whose key names a decision reads. */
export type KeyLookups = Record<ReferencedKind, Map<string, Set<string>>>;

/** Key names of the Secrets and ConfigMaps bundles reference (never their values). */
export interface KeySets {
    /** The object's key names, or undefined when the object does not exist. */
    keysOf(kind: ReferencedKind, namespace: string, name: string): readonly string[] | undefined;
    /**
     * Why the server cannot read this object's key names (its RBAC refuses them), or undefined
     * when it can (default: it can).
     */
    unreadable?(kind: ReferencedKind, namespace: string, name: string): string | undefined;
    /**
     * Where the copies of ClusterBundle sources are (webhook/api.ts `sourceCopyName`): their key
     * names are read there, as the Shared Resource CSI driver mounts them. Undefined: read in place.
     */
    readonly sourceNamespace?: string;
}

/** Whether the pod's service account may use a ClusterBundle (webhook/driver-access.ts: its SubjectAccessReviews). */
export type AccessDecision = { allowed: true } | { allowed: false; reason?: string } | { error: string };

export type DenialReason =
    | "InvalidPod"
    | "InvalidAnnotation"
    | "BundleNotFound"
    | "AccessDenied"
    | "AccessCheckFailed"
    | "CacheNotSynced"
    | "InvalidBundle"
    | "ReferenceNotFound"
    | "KeysUnreadable"
    | "KeyOverlap"
    | "MountConflict"
    | "InternalError";

export const DENIAL_REASONS: readonly DenialReason[] = [
    "InvalidPod",
    "InvalidAnnotation",
    "BundleNotFound",
    "AccessDenied",
    "AccessCheckFailed",
    "CacheNotSynced",
    "InvalidBundle",
    "ReferenceNotFound",
    "KeysUnreadable",
    "KeyOverlap",
    "MountConflict",
    "InternalError",
];

export interface Denial {
    allowed: false;
    reason: DenialReason;
    /** HTTP-style code the API server reports to the client (400, 403, 404, 409, 500, 503). */
    code: number;
    message: string;
}

export interface Admission {
    allowed: true;
    /** Empty when the pod needs no change (nothing to inject, or already injected). */
    patch: JsonPatchOperation[];
    /** Shown to the client by the API server (kubectl prints them). */
    warnings: string[];
    /** Generations of what was injected, as recorded in the bundle-generations annotation. */
    injected: InjectedGenerations;
    /** Always-inject bundles left out because they could not be used (each also has a warning). */
    skipped?: SkippedBundle[];
}

export interface SkippedBundle {
    kind: "Bundle" | "ClusterBundle";
    /** `namespace/name` for a Bundle, the name for a ClusterBundle. */
    bundle: string;
    /** The denial it would have caused had the pod asked for it. */
    reason: DenialReason;
}

export type InjectionDecision = Admission | Denial;

export interface InjectedGenerations {
    bundles: Record<string, number>;
    clusterBundles: Record<string, number>;
}

export interface InjectionInput {
    pod: Pod;
    /** The namespace the pod is created in (the request's namespace). */
    namespace: string;
    /** The Bundles in the pod's namespace, by name. */
    bundles: ReadonlyMap<string, BundleInfo>;
    /** All ClusterBundles, by name. */
    clusterBundles: ReadonlyMap<string, BundleInfo>;
    keys: KeySets;
    /** Access of the pod's service account to each selected ClusterBundle, by name. */
    access: ReadonlyMap<string, AccessDecision>;
}

export function deny(reason: DenialReason, code: number, message: string): Denial {
    return { allowed: false, reason, code, message };
}

/** At most `limit` items of a list for a message, quoted, with a count of the rest. */
export function listForMessage(items: readonly string[], limit = 5): string {
    const shown = items.slice(0, limit).map((item) => JSON.stringify(item.length > 80 ? `${item.slice(0, 80)}…` : item));
    const rest = items.length - shown.length;
    return rest > 0 ? `${shown.join(", ")} and ${rest} more` : shown.join(", ");
}

/** At most `limit` already-formatted phrases joined with "; ", with a count of the rest. */
export function joinForMessage(phrases: readonly string[], limit = 3): string {
    const rest = phrases.length - limit;
    return rest > 0 ? `${phrases.slice(0, limit).join("; ")}; and ${rest} more` : phrases.join("; ");
}
