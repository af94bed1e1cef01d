/** Builders for the decision's inputs, and the third-party AdmissionReviews from ../shared. */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ObjectReference } from "../../../webhook/api";
import type { AccessDecision, BundleInfo, InjectionInput, KeySets, ReferencedKind } from "../../../webhook/decision";
import type { Container, Pod, Volume } from "../../../webhook/pod";

/** `../shared` beside the repository root (CI clones it there). */
export const SHARED_TESTDATA = path.resolve(__dirname, "../../../../shared/testdata");

export interface ThirdPartyReview {
    file: string;
    /** Always a full AdmissionReview (bare AdmissionRequests are wrapped in a v1 review). */
    review: { apiVersion: string; kind: string; request: Record<string, unknown> };
    /** Whether the file held a bare AdmissionRequest. */
    bare: boolean;
}

export function thirdPartyReviews(): ThirdPartyReview[] {
    const directory = path.join(SHARED_TESTDATA, "admission-reviews");
    return fs
        .readdirSync(directory)
        .filter((file) => file.endsWith(".json"))
        .sort()
        .map((file) => {
            const parsed = JSON.parse(fs.readFileSync(path.join(directory, file), "utf8")) as Record<string, unknown>;
            const bare = parsed.kind !== "AdmissionReview";
            const review = bare
                ? { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: parsed }
                : (parsed as ThirdPartyReview["review"]);
            return { file, review, bare };
        });
}

type Ref = string | ObjectReference;
const ref = (value: Ref): ObjectReference => (typeof value === "string" ? { name: value } : value);

export interface BundleOptions {
    generation?: number;
    alwaysInject?: boolean;
    entitlements?: Ref[];
    yumRepositories?: Ref[];
}

export function bundle(namespace: string, name: string, options: BundleOptions = {}): BundleInfo {
    return {
        name,
        namespace,
        generation: options.generation ?? 1,
        alwaysInject: options.alwaysInject ?? false,
        entitlements: (options.entitlements ?? [`${name}-entitlement`]).map(ref),
        yumRepositories: (options.yumRepositories ?? []).map(ref),
    };
}

export function clusterBundle(name: string, options: BundleOptions = {}): BundleInfo {
    return {
        name,
        generation: options.generation ?? 1,
        alwaysInject: options.alwaysInject ?? false,
        entitlements: (options.entitlements ?? [{ name: `${name}-entitlement`, namespace: "openshift-config" }]).map(ref),
        yumRepositories: (options.yumRepositories ?? []).map(ref),
    };
}

export function byName(bundles: BundleInfo[]): Map<string, BundleInfo> {
    return new Map(bundles.map((item) => [item.name, item]));
}

/** Key sets from `{"Secret/ns/name": ["key", ...]}`. */
export function keySets(objects: Record<string, string[]>): KeySets {
    return {
        keysOf: (kind: ReferencedKind, namespace: string, name: string) => objects[`${kind}/${namespace}/${name}`],
    };
}

export function allow(...names: string[]): Map<string, AccessDecision> {
    return new Map(names.map((name) => [name, { allowed: true } as AccessDecision]));
}

export interface PodOptions {
    annotations?: Record<string, string>;
    containers?: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
    volumes?: Volume[];
    serviceAccountName?: string;
}

export const TOKEN_MOUNT = { name: "kube-api-access-x1", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true };
export const TOKEN_VOLUME: Volume = { name: "kube-api-access-x1", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } };

/** A pod as the API server sends it after the ServiceAccount plugin (token volume mounted everywhere). */
export function pod(options: PodOptions = {}): Pod {
    const result: Pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { generateName: "app-", namespace: "team-a", ...(options.annotations ? { annotations: options.annotations } : {}) },
        spec: {
            containers: options.containers ?? [{ name: "app", image: "registry.access.redhat.com/ubi9/ubi", volumeMounts: [TOKEN_MOUNT] }],
            volumes: options.volumes ?? [TOKEN_VOLUME],
            serviceAccountName: options.serviceAccountName ?? "builder",
        },
    };
    if (options.initContainers) result.spec.initContainers = options.initContainers;
    if (options.ephemeralContainers) result.spec.ephemeralContainers = options.ephemeralContainers;
    return result;
}

export function input(podValue: Pod, parts: Partial<Omit<InjectionInput, "pod">> = {}): InjectionInput {
    return {
        pod: podValue,
        namespace: parts.namespace ?? "team-a",
        bundles: parts.bundles ?? new Map(),
        clusterBundles: parts.clusterBundles ?? new Map(),
        keys: parts.keys ?? keySets({}),
        access: parts.access ?? new Map(),
    };
}

/** A fixed cluster for the admission handler (everything synced). */
export function staticCluster(
    bundles: BundleInfo[],
    clusterBundles: BundleInfo[],
    keys: KeySets,
): import("../../../webhook/admission").ClusterView {
    const byNamespace = new Map<string, Map<string, BundleInfo>>();
    for (const item of bundles) {
        const namespace = item.namespace ?? "";
        if (!byNamespace.has(namespace)) byNamespace.set(namespace, new Map());
        byNamespace.get(namespace)?.set(item.name, item);
    }
    const cluster = byName(clusterBundles);
    return {
        bundlesIn: (namespace) => byNamespace.get(namespace) ?? new Map(),
        clusterBundleMap: () => cluster,
        keysOf: (kind, namespace, name) => keys.keysOf(kind, namespace, name),
        whenKeysSynced: () => undefined,
        unsyncedCaches: () => [],
    };
}

/** Access decisions by ClusterBundle name, the same for every service account. */
export function staticAccess(decisions: Map<string, AccessDecision>): import("../../../webhook/admission").AccessView {
    return { decisions: (_serviceAccount, names) => new Map(names.map((name) => [name, decisions.get(name) ?? { allowed: false }])) };
}

/** An AdmissionReview of a pod CREATE, as the API server sends it; `request` adds or overrides fields (object included). */
export function podCreateReview(
    uid: string,
    namespace: string,
    object: unknown,
    request: Record<string, unknown> = {},
    apiVersion = "admission.k8s.io/v1",
) {
    return {
        apiVersion,
        kind: "AdmissionReview",
        request: {
            uid,
            kind: { group: "", version: "v1", kind: "Pod" },
            resource: { group: "", version: "v1", resource: "pods" },
            namespace,
            operation: "CREATE",
            object,
            ...request,
        },
    };
}
