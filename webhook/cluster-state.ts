/**
 * The cluster as the webhook needs it, from watches: Bundles and ClusterBundles (as BundleInfo),
 * and the key names of the Secrets and ConfigMaps they reference, watched per namespace that some
 * bundle references (started and stopped as bundles change). Values never stay in memory: each
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
import type { AccessDecision, BundleInfo, KeySets, ReferencedKind } from "./decision";
import { type AccessReviewSpec, type ShareRef, clusterBundleAccessReviews, describeReview } from "./driver-access";
import { Informer, type ListPage, describeError } from "./informer";
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

export class ClusterState implements KeySets {
    private readonly core: CoreV1Api;
    private readonly custom: CustomObjectsApi;
    private readonly bundles: Informer<BundleObject>;
    private readonly clusterBundles: Informer<BundleObject>;
    private readonly bundleIndex = new Map<string, Map<string, BundleInfo>>();
    private readonly clusterIndex = new Map<string, BundleInfo>();
    private readonly keyInformers = new Map<string, Informer<KeyNames>>();
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

    /** Namespaces (per kind) whose objects some bundle may read. */
    private referencedNamespaces(): Set<string> {
        const needed = new Set<string>();
        const note = (kind: ReferencedKind, namespace: string | undefined) =>
            namespace && this.readable(namespace) && needed.add(`${kind}/${namespace}`);
        for (const index of this.bundleIndex.values()) {
            for (const bundle of index.values()) {
                // A Bundle may only use its own namespace; other references are denied, not watched.
                if (bundle.entitlements.some((ref) => (ref.namespace ?? bundle.namespace) === bundle.namespace))
                    note("Secret", bundle.namespace);
                if (bundle.yumRepositories.some((ref) => (ref.namespace ?? bundle.namespace) === bundle.namespace))
                    note("ConfigMap", bundle.namespace);
            }
        }
        for (const bundle of this.clusterIndex.values()) {
            for (const ref of bundle.entitlements) note("Secret", ref.namespace);
            for (const ref of bundle.yumRepositories) note("ConfigMap", ref.namespace);
        }
        return needed;
    }

    private reconcileKeyInformers(): void {
        const needed = this.referencedNamespaces();
        for (const id of needed) if (!this.keyInformers.has(id)) this.startKeyInformer(id);
        for (const [id, informer] of this.keyInformers) {
            if (!needed.has(id)) {
                informer.stop();
                this.keyInformers.delete(id);
            }
        }
        this.updateSyncedGauge();
    }

    private startKeyInformer(id: string): Informer<KeyNames> {
        const [kind, namespace] = id.split("/") as [ReferencedKind, string];
        const resource = KIND_RESOURCES[kind];
        const informer = new Informer<KeyNames>({
            name: `${resource}/${namespace}`,
            kubeConfig: this.options.kubeConfig,
            path: `/api/v1/namespaces/${namespace}/${resource}`,
            list: () => this.listPaged(kind, namespace),
            shrink: keyNames,
            onRequest: (verb) => this.options.metrics.recordKubeApiRequest(verb, resource),
            onChange: () => void this.changes++,
            logger: this.options.logger,
            retry: this.options.retry,
        });
        this.keyInformers.set(id, informer);
        informer.start();
        void informer.whenSynced().then(() => this.updateSyncedGauge());
        return informer;
    }

    /** Lists page by page, shrinking each page before fetching the next (later pages count as reads too). */
    private async listPaged(kind: ReferencedKind, namespace: string): Promise<ListPage> {
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
                    ? await this.core.listNamespacedSecret(namespace, undefined, undefined, next, undefined, undefined, limit)
                    : await this.core.listNamespacedConfigMap(namespace, undefined, undefined, next, undefined, undefined, limit)
            ) as ListPage;
            for (const item of page.body.items) items.push(keyNames(item));
            next = page.body.metadata?._continue || undefined;
        } while (next);
        const body: KubernetesListObject<KeyNames> = { ...page.body, items };
        return { response: page.response, body } as ListPage;
    }

    /** Starts every informer and resolves once bundles and all referenced key caches are synced. */
    async start(): Promise<void> {
        this.bundles.start();
        this.clusterBundles.start();
        await Promise.all([this.bundles.whenSynced(), this.clusterBundles.whenSynced()]);
        this.started = true;
        this.reconcileKeyInformers();
        await Promise.all([...this.keyInformers.values()].map((informer) => informer.whenSynced()));
        this.updateSyncedGauge();
    }

    private updateSyncedGauge(): void {
        this.options.metrics.cacheSynced.set(this.synced() ? 1 : 0);
    }

    /** Bundle caches listed and every referenced key cache listed. */
    synced(): boolean {
        if (!this.started || !this.bundles.hasSynced || !this.clusterBundles.hasSynced) return false;
        for (const informer of this.keyInformers.values()) if (!informer.hasSynced) return false;
        return true;
    }

    /** See ClusterView.unsyncedCaches: the bundle caches, and the key caches of `namespaces` when given. */
    unsyncedCaches(namespaces?: Record<ReferencedKind, Set<string>>): string[] {
        const names: string[] = [];
        if (!this.bundles.hasSynced) names.push(BUNDLE_PLURAL);
        if (!this.clusterBundles.hasSynced) names.push(CLUSTER_BUNDLE_PLURAL);
        for (const kind of ["Secret", "ConfigMap"] as const) {
            for (const namespace of namespaces?.[kind] ?? []) {
                if (!this.keyInformers.get(`${kind}/${namespace}`)?.hasSynced) names.push(`${KIND_RESOURCES[kind]} in ${namespace}`);
            }
        }
        return names;
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

    /** Whether the server may list Secrets/ConfigMaps in the namespace (its RBAC allows it). */
    readable(namespace: string): boolean {
        return this.readableNamespaces === undefined || this.readableNamespaces.has(namespace);
    }

    keysOf(kind: ReferencedKind, namespace: string, name: string): readonly string[] | undefined {
        return this.keyInformers.get(`${kind}/${namespace}`)?.get(name, namespace)?.keys;
    }

    /**
     * Undefined when the key caches of these namespaces are synced (the steady state); else a
     * promise that starts whichever are missing and resolves when all are synced.
     */
    whenKeysSynced(namespaces: Record<ReferencedKind, Set<string>>): Promise<void> | undefined {
        let waits: Promise<void>[] | undefined;
        for (const kind of ["Secret", "ConfigMap"] as const) {
            for (const namespace of namespaces[kind]) {
                if (!this.readable(namespace)) continue;
                const id = `${kind}/${namespace}`;
                const informer = this.keyInformers.get(id) ?? this.startKeyInformer(id);
                if (!informer.hasSynced) (waits ??= []).push(informer.whenSynced());
            }
        }
        return waits && Promise.all(waits).then(() => undefined);
    }

    stop(): void {
        this.bundles.stop();
        this.clusterBundles.stop();
        for (const informer of this.keyInformers.values()) informer.stop();
        this.keyInformers.clear();
    }

    /** What the key caches hold (for tests and debugging): kind/namespace → name → key names. */
    keyCacheContents(): Record<string, Record<string, string[]>> {
        const contents: Record<string, Record<string, string[]>> = {};
        for (const [id, informer] of this.keyInformers) {
            contents[id] = Object.fromEntries(informer.list().map((object) => [object.metadata.name, object.keys]));
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
