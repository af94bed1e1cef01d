/**
 * The cluster as the webhook needs it, from watches: Bundles and ClusterBundles (as BundleInfo),
 * and the key names of the Secrets and ConfigMaps they reference, watched per namespace that some
 * bundle references where the server may list, else per object by name (started and stopped as
 * bundles change). Values never stay in memory: each
 * Secret/ConfigMap is reduced to its name and key names before the cache stores it.
 */
import {
    AuthorizationV1Api,
    CoreV1Api,
    CustomObjectsApi,
    type KubeConfig,
    type KubernetesListObject,
    type KubernetesObject,
} from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { ServiceAccountRef, ReviewFunction } from "./access-reviews";
import {
    ALWAYS_INJECT_LABEL,
    BUNDLE_PLURAL,
    CLUSTER_BUNDLE_PLURAL,
    type ObjectReference,
    SUBSCRIPTION_GROUP,
    SUBSCRIPTION_VERSION,
} from "./api";
import type { AccessDecision, BundleInfo, KeyLookups, KeySets, ReferencedKind } from "./decision";
import { type AccessReviewSpec, type ShareRef, clusterBundleAccessReviews, describeReview } from "./driver-access";
import { Informer, type ListPage, describeError, errorStatus } from "./informer";
import { clusterBundleShares } from "./mounts";
import type { WebhookMetrics } from "./metrics";
import { isRecord } from "../components/shared/records";

/** What the cache keeps of a Secret or ConfigMap. */
export interface KeyNames extends KubernetesObject {
    metadata: { name: string; namespace: string; resourceVersion?: string };
    keys: string[];
}

interface BundleObject extends KubernetesObject {
    spec?: unknown;
}

/** Reduces a Secret (data) or ConfigMap (data, binaryData) to its key names. */
export function keyNames(object: unknown): KeyNames {
    const record = isRecord(object) ? object : {};
    if (Array.isArray(record.keys) && record.data === undefined && record.binaryData === undefined) return record as unknown as KeyNames;
    const metadata = isRecord(record.metadata) ? record.metadata : {};
    const keys = new Set<string>();
    for (const field of ["data", "binaryData"]) {
        const data = record[field];
        if (isRecord(data)) for (const key of Object.keys(data)) keys.add(key);
    }
    return {
        metadata: {
            name: String(metadata.name ?? ""),
            namespace: String(metadata.namespace ?? ""),
            resourceVersion: typeof metadata.resourceVersion === "string" ? metadata.resourceVersion : undefined,
        },
        keys: [...keys].sort(),
    };
}

function references(value: unknown): ObjectReference[] {
    if (!Array.isArray(value)) return [];
    return value
        .filter((ref): ref is Record<string, unknown> => isRecord(ref) && typeof ref.name === "string" && ref.name !== "")
        .map((ref) =>
            typeof ref.namespace === "string" && ref.namespace
                ? { name: ref.name as string, namespace: ref.namespace }
                : { name: ref.name as string },
        );
}

/** A Bundle or ClusterBundle object as BundleInfo (malformed references are dropped). */
export function bundleInfo(object: BundleObject): BundleInfo {
    const metadata = object.metadata ?? {};
    const spec = isRecord(object.spec) ? object.spec : {};
    return {
        name: metadata.name ?? "",
        namespace: metadata.namespace || undefined,
        generation: typeof metadata.generation === "number" ? metadata.generation : 0,
        alwaysInject: metadata.labels?.[ALWAYS_INJECT_LABEL] === "true",
        entitlements: references(spec.entitlements),
        yumRepositories: references(spec.yumRepositories),
    };
}

export interface ClusterStateOptions {
    kubeConfig: KubeConfig;
    metrics: WebhookMetrics;
    logger: Logger;
    retry?: { initialMs: number; maxMs: number };
    /** Items per list page for Secrets and ConfigMaps. */
    pageSize?: number;
    /** Namespaces whose Secrets/ConfigMaps the server may list; undefined: every namespace. */
    readNamespaces?: readonly string[];
}

const KIND_RESOURCES: Record<ReferencedKind, string> = { Secret: "secrets", ConfigMap: "configmaps" };

/** One key cache: its informer, its metric labels, and whether RBAC refused its list. */
interface KeyCache {
    informer: Informer<KeyNames>;
    labels: { resource: string; namespace: string; name: string };
    /** Resolves once the cache has synced or RBAC has refused it. */
    settled: Promise<void>;
    /** Set while the last list was refused (401/403): why the keys cannot be read. */
    forbidden?: string;
}

/** `secrets in team-a` (namespace-wide cache) or `secrets team-a/name` (one object). */
function describeCache(id: string): string {
    const [kind, namespace, name] = id.split("/") as [ReferencedKind, string, string | undefined];
    return name === undefined ? `${KIND_RESOURCES[kind]} in ${namespace}` : `${KIND_RESOURCES[kind]} ${namespace}/${name}`;
}

export class ClusterState implements KeySets {
    private readonly core: CoreV1Api;
    private readonly custom: CustomObjectsApi;
    private readonly bundles: Informer<BundleObject>;
    private readonly clusterBundles: Informer<BundleObject>;
    private readonly bundleIndex = new Map<string, Map<string, BundleInfo>>();
    private readonly clusterIndex = new Map<string, BundleInfo>();
    private readonly keyCaches = new Map<string, KeyCache>();
    private started = false;
    private changes = 0;
    private readonly readableNamespaces: ReadonlySet<string> | undefined;
    /** Share lists per indexed ClusterBundle object (a new object on every change). */
    private readonly shareLists = new WeakMap<BundleInfo, readonly ShareRef[]>();

    constructor(private readonly options: ClusterStateOptions) {
        this.core = options.kubeConfig.makeApiClient(CoreV1Api);
        this.custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
        this.readableNamespaces = options.readNamespaces ? new Set(options.readNamespaces) : undefined;
        this.bundles = this.bundleInformer(BUNDLE_PLURAL, (event, object) => this.indexBundle(event, object));
        this.clusterBundles = this.bundleInformer(CLUSTER_BUNDLE_PLURAL, (event, object) => this.indexClusterBundle(event, object));
    }

    private bundleInformer(
        plural: string,
        onChange: (event: "add" | "update" | "delete", object: BundleObject) => void,
    ): Informer<BundleObject> {
        return new Informer<BundleObject>({
            name: plural,
            kubeConfig: this.options.kubeConfig,
            path: `/apis/${SUBSCRIPTION_GROUP}/${SUBSCRIPTION_VERSION}/${plural}`,
            list: () => this.custom.listClusterCustomObject(SUBSCRIPTION_GROUP, SUBSCRIPTION_VERSION, plural) as Promise<ListPage>,
            shrink: (object) => {
                const bundle = object as BundleObject;
                if (bundle.metadata) delete bundle.metadata.managedFields;
                return bundle;
            },
            onRequest: (verb) => this.options.metrics.recordKubeApiRequest(verb, plural),
            onChange: (event, object) => {
                this.changes++;
                onChange(event, object);
                if (this.started) this.reconcileKeyInformers();
            },
            logger: this.options.logger,
            retry: this.options.retry,
        });
    }

    private indexBundle(event: string, object: BundleObject): void {
        const info = bundleInfo(object);
        const namespace = info.namespace ?? "";
        let index = this.bundleIndex.get(namespace);
        if (event === "delete") {
            index?.delete(info.name);
            if (index?.size === 0) this.bundleIndex.delete(namespace);
            return;
        }
        if (!index) this.bundleIndex.set(namespace, (index = new Map()));
        index.set(info.name, info);
    }

    private indexClusterBundle(event: string, object: BundleObject): void {
        const info = bundleInfo(object);
        if (event === "delete") this.clusterIndex.delete(info.name);
        else this.clusterIndex.set(info.name, info);
    }

    /**
     * The key caches the bundles need: per kind, a namespace-wide one where the server may list
     * (readNamespaces), else one per referenced object, selected by name. A name-field-selected
     * list or watch carries the object's name for authorization (kubernetes staging/src/k8s.io/
     * apiserver/pkg/endpoints/request/requestinfo.go: `metadata.name` field selector → requestInfo.Name),
     * so a Role with `resourceNames` allows it (plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`):
     * the stack's webhook ClusterRole grants exactly that for the conventional object names, and a
     * team can grant it for its own (docs/subscriptions.md).
     */
    private referencedCaches(): Set<string> {
        const needed = new Set<string>();
        const note = (kind: ReferencedKind, namespace: string | undefined, name: string) =>
            namespace && needed.add(this.cacheId(kind, namespace, name));
        for (const index of this.bundleIndex.values()) {
            for (const bundle of index.values()) {
                // A Bundle may only use its own namespace; other references are denied, not watched.
                for (const ref of bundle.entitlements)
                    if ((ref.namespace ?? bundle.namespace) === bundle.namespace) note("Secret", bundle.namespace, ref.name);
                for (const ref of bundle.yumRepositories)
                    if ((ref.namespace ?? bundle.namespace) === bundle.namespace) note("ConfigMap", bundle.namespace, ref.name);
            }
        }
        for (const bundle of this.clusterIndex.values()) {
            for (const ref of bundle.entitlements) note("Secret", ref.namespace, ref.name);
            for (const ref of bundle.yumRepositories) note("ConfigMap", ref.namespace, ref.name);
        }
        return needed;
    }

    /** `Secret/<namespace>` (namespace-wide) or `Secret/<namespace>/<name>` (one object). */
    private cacheId(kind: ReferencedKind, namespace: string, name: string): string {
        return this.readable(namespace) ? `${kind}/${namespace}` : `${kind}/${namespace}/${name}`;
    }

    private reconcileKeyInformers(): void {
        const needed = this.referencedCaches();
        for (const id of needed) if (!this.keyCaches.has(id)) this.startKeyCache(id);
        for (const [id, cache] of this.keyCaches) {
            if (!needed.has(id)) this.stopKeyCache(id, cache);
        }
        this.updateSyncedGauge();
    }

    private stopKeyCache(id: string, cache: KeyCache): void {
        cache.informer.stop();
        this.keyCaches.delete(id);
        this.options.metrics.keyCacheSynced.remove(cache.labels);
    }

    private startKeyCache(id: string): KeyCache {
        const [kind, namespace, name] = id.split("/") as [ReferencedKind, string, string | undefined];
        const resource = KIND_RESOURCES[kind];
        const fieldSelector = name === undefined ? undefined : `metadata.name=${name}`;
        const labels = { resource, namespace, name: name ?? "" };
        const what = name === undefined ? `${resource} in namespace ${namespace}` : `${resource} ${namespace}/${name}`;
        let settle!: () => void;
        const cache: KeyCache = {
            labels,
            settled: new Promise((resolve) => (settle = resolve)),
            informer: new Informer<KeyNames>({
                name: name === undefined ? `${resource}/${namespace}` : `${resource}/${namespace}/${name}`,
                kubeConfig: this.options.kubeConfig,
                path: `/api/v1/namespaces/${namespace}/${resource}`,
                fieldSelector,
                list: () => this.listPaged(kind, namespace, fieldSelector),
                shrink: keyNames,
                onRequest: (verb) => this.options.metrics.recordKubeApiRequest(verb, resource),
                onChange: () => void this.changes++,
                onListFailure: (error) => {
                    const status = errorStatus(error);
                    if (status !== 401 && status !== 403) return;
                    const permission = `list and watch ${resource} in namespace ${namespace}${name === undefined ? "" : ` (resourceNames: ${name})`}`;
                    if (cache.forbidden === undefined)
                        this.options.logger.warn(
                            { namespace, resource, name, permission, err: describeError(error) },
                            `key cache cannot sync: the webhook's service account may not ${permission}; only pods using ${what} are affected`,
                        );
                    cache.forbidden = `the webhook may not read ${what} (its service account needs ${permission})`;
                    settle();
                },
                logger: this.options.logger,
                retry: this.options.retry,
            }),
        };
        this.keyCaches.set(id, cache);
        this.options.metrics.keyCacheSynced.set(labels, 0);
        cache.informer.start();
        void cache.informer.whenSynced().then(() => {
            cache.forbidden = undefined;
            settle();
            if (this.keyCaches.get(id) === cache) this.options.metrics.keyCacheSynced.set(labels, 1);
            this.updateSyncedGauge();
        });
        return cache;
    }

    /** Lists page by page, shrinking each page before fetching the next (later pages count as reads too). */
    private async listPaged(kind: ReferencedKind, namespace: string, fieldSelector: string | undefined): Promise<ListPage> {
        const limit = this.options.pageSize ?? 500;
        const items: KeyNames[] = [];
        let page: ListPage;
        let next: string | undefined;
        let first = true;
        do {
            if (!first) this.options.metrics.recordKubeApiRequest("list", KIND_RESOURCES[kind]);
            first = false;
            page = (
                kind === "Secret"
                    ? await this.core.listNamespacedSecret(namespace, undefined, undefined, next, fieldSelector, undefined, limit)
                    : await this.core.listNamespacedConfigMap(namespace, undefined, undefined, next, fieldSelector, undefined, limit)
            ) as ListPage;
            for (const item of page.body.items) items.push(keyNames(item));
            next = page.body.metadata?._continue || undefined;
        } while (next);
        const body: KubernetesListObject<KeyNames> = { ...page.body, items };
        return { response: page.response, body } as ListPage;
    }

    /**
     * Starts every informer; resolves once the bundle caches are synced and every key cache has
     * either synced or been refused by RBAC (one that keeps failing otherwise is not waited for
     * beyond its first answer: `start` never depends on one namespace).
     */
    async start(): Promise<void> {
        this.bundles.start();
        this.clusterBundles.start();
        await Promise.all([this.bundles.whenSynced(), this.clusterBundles.whenSynced()]);
        this.started = true;
        this.reconcileKeyInformers();
        this.updateSyncedGauge();
        await Promise.all([...this.keyCaches.values()].map((cache) => cache.settled));
    }

    private updateSyncedGauge(): void {
        this.options.metrics.cacheSynced.set(this.synced() ? 1 : 0);
    }

    /**
     * Ready: the bundle caches, which every admission reads, are listed. Key caches are not
     * waited for: one namespace whose Secrets cannot be listed (its RoleBinding deleted by a
     * namespace admin) affects only the pods that need its keys (a failed call, or a denial
     * naming the missing permission), never the readiness of every replica.
     */
    synced(): boolean {
        return this.started && this.bundles.hasSynced && this.clusterBundles.hasSynced;
    }

    /** See ClusterView.unsyncedCaches: the bundle caches, and the key caches of `lookups` when given (not those RBAC refuses). */
    unsyncedCaches(lookups?: KeyLookups): string[] {
        const names: string[] = [];
        if (!this.bundles.hasSynced) names.push(BUNDLE_PLURAL);
        if (!this.clusterBundles.hasSynced) names.push(CLUSTER_BUNDLE_PLURAL);
        for (const [id, cache] of this.cachesOf(lookups)) {
            if (!cache?.informer.hasSynced && !cache?.forbidden) names.push(describeCache(id));
        }
        return names;
    }

    /** The key caches (by id, possibly not started) that `lookups` read. */
    private cachesOf(lookups: KeyLookups | undefined): Map<string, KeyCache | undefined> {
        const caches = new Map<string, KeyCache | undefined>();
        for (const kind of ["Secret", "ConfigMap"] as const) {
            for (const [namespace, names] of lookups?.[kind] ?? []) {
                for (const name of names) {
                    const id = this.cacheId(kind, namespace, name);
                    caches.set(id, this.keyCaches.get(id));
                }
            }
        }
        return caches;
    }

    /** Counts every change seen (plans derived from the caches are valid for one version). */
    version(): number {
        return this.changes;
    }

    bundlesIn(namespace: string): ReadonlyMap<string, BundleInfo> {
        return this.bundleIndex.get(namespace) ?? EMPTY;
    }

    clusterBundleMap(): ReadonlyMap<string, BundleInfo> {
        return this.clusterIndex;
    }

    /** The shares a ClusterBundle's volumes name now (none when it is not known); computed once per bundle version. */
    sharesOf(clusterBundle: string): readonly ShareRef[] {
        const bundle = this.clusterIndex.get(clusterBundle);
        if (!bundle) return [];
        let shares = this.shareLists.get(bundle);
        if (!shares) this.shareLists.set(bundle, (shares = clusterBundleShares(bundle)));
        return shares;
    }

    /** Whether the server may list Secrets/ConfigMaps in the whole namespace (readNamespaces). */
    readable(namespace: string): boolean {
        return this.readableNamespaces === undefined || this.readableNamespaces.has(namespace);
    }

    keysOf(kind: ReferencedKind, namespace: string, name: string): readonly string[] | undefined {
        return this.keyCaches.get(this.cacheId(kind, namespace, name))?.informer.get(name, namespace)?.keys;
    }

    unreadable(kind: ReferencedKind, namespace: string, name: string): string | undefined {
        const cache = this.keyCaches.get(this.cacheId(kind, namespace, name));
        return cache && !cache.informer.hasSynced ? cache.forbidden : undefined;
    }

    /**
     * Undefined when the key caches these lookups read are synced (the steady state); else a
     * promise that starts whichever are missing and resolves when each has synced or been refused.
     */
    whenKeysSynced(lookups: KeyLookups): Promise<void> | undefined {
        let waits: Promise<void>[] | undefined;
        for (const [id, known] of this.cachesOf(lookups)) {
            const cache = known ?? this.startKeyCache(id);
            if (!cache.informer.hasSynced && !cache.forbidden) (waits ??= []).push(cache.settled);
        }
        return waits && Promise.all(waits).then(() => undefined);
    }

    stop(): void {
        this.bundles.stop();
        this.clusterBundles.stop();
        for (const [id, cache] of this.keyCaches) this.stopKeyCache(id, cache);
    }

    /** What the key caches hold (for tests and debugging): kind/namespace → name → key names. */
    keyCacheContents(): Record<string, Record<string, string[]>> {
        const contents: Record<string, Record<string, string[]>> = {};
        for (const [id, cache] of this.keyCaches) {
            contents[id] = Object.fromEntries(cache.informer.list().map((object) => [object.metadata.name, object.keys]));
        }
        return contents;
    }
}

const EMPTY: ReadonlyMap<string, BundleInfo> = new Map();

/**
 * SubjectAccessReviews through the API, as webhook/driver-access.ts defines them: may the service
 * account, in its namespace, `get` the ClusterBundle and `use` each of its shares? Allowed when
 * every review is; a denial names the first review that failed; any failed request is an error.
 */
export function subjectAccessReviewer(kubeConfig: KubeConfig, metrics: WebhookMetrics): ReviewFunction {
    const api = kubeConfig.makeApiClient(AuthorizationV1Api);
    const ask = async (spec: AccessReviewSpec): Promise<AccessDecision> => {
        metrics.recordKubeApiRequest("create", "subjectaccessreviews");
        const { body } = await api.createSubjectAccessReview({ apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec });
        if (body.status?.allowed === true) return { allowed: true };
        const why = body.status?.reason || body.status?.evaluationError;
        return { allowed: false, reason: `${describeReview(spec)} not allowed${why ? `: ${why}` : ""}` };
    };
    return async (serviceAccount: ServiceAccountRef, clusterBundle: string, shares: readonly ShareRef[]): Promise<AccessDecision> => {
        try {
            const decisions = await Promise.all(clusterBundleAccessReviews(serviceAccount, clusterBundle, shares).map(ask));
            return decisions.find((decision) => !("allowed" in decision && decision.allowed)) ?? { allowed: true };
        } catch (error) {
            return { error: `SubjectAccessReview failed: ${describeError(error)}` };
        }
    };
}
