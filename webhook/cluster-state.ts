/**
 * The cluster as the webhook needs it, from watches: Bundles and ClusterBundles (as BundleInfo), and
 * the key names of the Secrets and ConfigMaps they reference, read where key-sources.ts says (by
 * name cluster-wide, per listed namespace, or one object by name). A ClusterBundle's references are
 * read from their copies in the source namespace (webhook/api.ts `sourceCopyName`), which is what the
 * Shared Resource CSI driver mounts. Memory and open watches do not grow with the number of Bundles
 * beyond the Bundles themselves, each reduced to the fields the decision reads.
 */
import { AuthorizationV1Api, CustomObjectsApi, type KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
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
import { Informer, type ListPage, describeError, listInPages } from "./informer";
import { type ByNameSettings, KeySources, type ReadScopes } from "./key-sources";
import { clusterBundleShares, keyLocation } from "./mounts";
import type { WebhookMetrics } from "./metrics";
import { isRecord } from "../components/shared/records";

export { type KeyNames, keyNames } from "./key-sources";

/** A Bundle or ClusterBundle as the API serves it (only the fields BundleInfo is made of are read). */
interface BundleObject extends KubernetesObject {
    spec?: unknown;
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

/**
 * What an informer keeps of a Bundle or ClusterBundle: identity and resourceVersion for the cache,
 * and its BundleInfo, nothing else (no managedFields, annotations, other labels or status), so each
 * costs a few hundred bytes. Admissions read Bundles from the informer's own per-namespace store and
 * the ClusterBundle index holds the same BundleInfo objects: with 10,000 teams a second index (a map
 * per namespace, a copy of each bundle's references) cost about 2 MiB of heap.
 */
interface CachedBundle extends KubernetesObject {
    metadata: { name: string; namespace?: string; resourceVersion?: string };
    info: BundleInfo;
}

function shrinkBundle(object: unknown): CachedBundle {
    // List pages are shrunk as they arrive and again by the informer: the second time is a no-op.
    if (isRecord(object) && isRecord(object.info) && object.spec === undefined) return object as unknown as CachedBundle;
    const bundle = (isRecord(object) ? object : {}) as BundleObject;
    const info = bundleInfo(bundle);
    const resourceVersion = bundle.metadata?.resourceVersion;
    return {
        metadata: {
            name: info.name,
            ...(info.namespace ? { namespace: info.namespace } : {}),
            ...(resourceVersion ? { resourceVersion } : {}),
        },
        info,
    };
}

export interface ClusterStateOptions {
    kubeConfig: KubeConfig;
    metrics: WebhookMetrics;
    logger: Logger;
    retry?: { initialMs: number; maxMs: number };
    /** Items per list page (bundles, Secrets, ConfigMaps); default 500 for bundles, KEY_LIST_PAGE_SIZE for key objects. */
    pageSize?: number;
    /**
     * Where the server may list Secrets/ConfigMaps namespace-wide, per kind; undefined: every
     * namespace but the platform's. Elsewhere it reads each referenced object by name.
     */
    readScopes?: ReadScopes;
    /** The source namespace holding the copies ClusterBundles share; undefined: their references are read where they point. */
    sourceNamespace?: string;
    /** Reads by name: how long they are used, how many are kept. */
    byName?: Partial<ByNameSettings>;
    now?: () => number;
}

export class ClusterState implements KeySets {
    private readonly custom: CustomObjectsApi;
    private readonly bundles: Informer<CachedBundle>;
    private readonly clusterBundles: Informer<CachedBundle>;
    private readonly clusterIndex = new Map<string, BundleInfo>();
    private readonly keys: KeySources;
    private started = false;
    private changes = 0;
    readonly sourceNamespace: string | undefined;
    /** Share lists per indexed ClusterBundle object (a new object on every change). */
    private readonly shareLists = new WeakMap<BundleInfo, readonly ShareRef[]>();

    constructor(private readonly options: ClusterStateOptions) {
        this.custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
        this.sourceNamespace = options.sourceNamespace;
        this.keys = new KeySources({
            kubeConfig: options.kubeConfig,
            metrics: options.metrics,
            logger: options.logger,
            retry: options.retry,
            pageSize: options.pageSize,
            readScopes: options.readScopes ?? "all",
            byName: options.byName,
            now: options.now,
        });
        // Bundles are read from the informer's own per-namespace store (no second index of 10,000 namespaces).
        this.bundles = this.bundleInformer(BUNDLE_PLURAL, () => undefined);
        this.clusterBundles = this.bundleInformer(CLUSTER_BUNDLE_PLURAL, (event, object) => this.indexClusterBundle(event, object));
    }

    private bundleInformer(
        plural: string,
        onChange: (event: "add" | "update" | "delete", object: CachedBundle) => void,
    ): Informer<CachedBundle> {
        return new Informer<CachedBundle>({
            name: plural,
            kubeConfig: this.options.kubeConfig,
            path: `/apis/${SUBSCRIPTION_GROUP}/${SUBSCRIPTION_VERSION}/${plural}`,
            list: () => this.listBundles(plural),
            shrink: shrinkBundle,
            onRequest: (verb) => this.options.metrics.recordKubeApiRequest(verb, plural),
            onChange: (event, object) => {
                this.changes++;
                onChange(event, object);
                if (this.started) void this.reconcileKeyInformers();
            },
            logger: this.options.logger,
            retry: this.options.retry,
        });
    }

    /** Lists bundles page by page, shrinking each page before the next, so a list of 10,000 never sits in memory whole. */
    private listBundles(plural: string): Promise<ListPage> {
        return listInPages(
            (next, limit) =>
                this.custom.listClusterCustomObject(
                    SUBSCRIPTION_GROUP,
                    SUBSCRIPTION_VERSION,
                    plural,
                    undefined,
                    undefined,
                    next,
                    undefined,
                    undefined,
                    limit,
                ) as Promise<ListPage>,
            shrinkBundle,
            this.options.pageSize ?? 500,
            () => this.options.metrics.recordKubeApiRequest("list", plural),
        );
    }

    private indexClusterBundle(event: string, object: CachedBundle): void {
        const info = object.info;
        if (event === "delete") this.clusterIndex.delete(info.name);
        else this.clusterIndex.set(info.name, info);
    }

    /** The (kind, namespace) pairs whose objects the bundles reference, where the decision reads them. */
    private referencedNamespaces(): Map<string, [ReferencedKind, string]> {
        const needed = new Map<string, [ReferencedKind, string]>();
        const note = (kind: ReferencedKind, namespace: string | undefined) =>
            namespace && needed.set(`${kind}/${namespace}`, [kind, namespace]);
        for (const { info: bundle } of this.bundles.list()) {
            // A Bundle may only use its own namespace; other references are denied, not read.
            if (bundle.entitlements.length > 0) note("Secret", bundle.namespace);
            if (bundle.yumRepositories.length > 0) note("ConfigMap", bundle.namespace);
        }
        for (const bundle of this.clusterIndex.values()) {
            for (const ref of bundle.entitlements) note("Secret", keyLocation(this, true, ref)?.namespace);
            for (const ref of bundle.yumRepositories) note("ConfigMap", keyLocation(this, true, ref)?.namespace);
        }
        return needed;
    }

    private reconcileKeyInformers(): Promise<void> {
        return this.keys.reconcile(this.referencedNamespaces().values());
    }

    /**
     * Starts every informer; resolves once the bundle caches are synced and every namespace-wide key
     * cache the bundles need has either synced or been refused by RBAC (`start` never depends on one
     * namespace).
     */
    async start(): Promise<void> {
        this.options.metrics.informers.set({ kind: "bundles" }, 2);
        this.bundles.start();
        this.clusterBundles.start();
        this.keys.start();
        await Promise.all([this.bundles.whenSynced(), this.clusterBundles.whenSynced()]);
        this.started = true;
        this.updateSyncedGauge();
        await this.reconcileKeyInformers();
    }

    private updateSyncedGauge(): void {
        this.options.metrics.cacheSynced.set(this.synced() ? 1 : 0);
    }

    /**
     * Ready: the bundle caches, which every admission reads, are listed. Key caches are not
     * waited for: one namespace whose Secrets cannot be listed (its RoleBinding deleted by a
     * namespace admin) affects only the pods that need its keys (read by name meanwhile), never
     * the readiness of every replica.
     */
    synced(): boolean {
        return this.started && this.bundles.hasSynced && this.clusterBundles.hasSynced;
    }

    /** See ClusterView.unsyncedCaches: the bundle caches, and the key sources `lookups` read when given. */
    unsyncedCaches(lookups?: KeyLookups): string[] {
        const names: string[] = [];
        if (!this.bundles.hasSynced) names.push(BUNDLE_PLURAL);
        if (!this.clusterBundles.hasSynced) names.push(CLUSTER_BUNDLE_PLURAL);
        if (lookups) names.push(...this.keys.unsynced(lookups));
        return names;
    }

    /** Counts every change seen, of bundles and of key names (plans derived from the caches are valid for one version). */
    version(): number {
        return this.changes + this.keys.version();
    }

    bundlesIn(namespace: string): ReadonlyMap<string, BundleInfo> {
        const cached = namespace ? this.bundles.list(namespace) : [];
        return cached.length === 0 ? EMPTY : new Map(cached.map(({ info }) => [info.name, info]));
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

    keysOf(kind: ReferencedKind, namespace: string, name: string): readonly string[] | undefined {
        return this.keys.keysOf(kind, namespace, name);
    }

    unreadable(kind: ReferencedKind, namespace: string, name: string): string | undefined {
        return this.keys.unreadable(kind, namespace, name);
    }

    /**
     * Undefined when the key sources these lookups read can answer (the steady state); else a
     * promise that starts whichever are missing and resolves when each has settled.
     */
    whenKeysSynced(lookups: KeyLookups): Promise<void> | undefined {
        return this.keys.whenReady(lookups);
    }

    stop(): void {
        this.bundles.stop();
        this.clusterBundles.stop();
        this.keys.stop();
        this.options.metrics.informers.set({ kind: "bundles" }, 0);
    }

    /** What the key caches hold (for tests and debugging), see KeySources.contents. */
    keyCacheContents(): Record<string, Record<string, string[]>> {
        return this.keys.contents();
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
