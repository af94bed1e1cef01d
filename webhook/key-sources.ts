/**
 * Where the webhook reads the key names of the Secrets and ConfigMaps bundles reference, chosen per
 * object in this order, so that memory and connections do not grow with the number of teams' Bundles:
 *
 * 1. **By name, cluster-wide**: one informer per conventional name (`etc-pki-entitlement` Secrets,
 *    `TEAM_BUNDLE_SECRET_NAMES`) listing and watching that name in every namespace
 *    (`/api/v1/secrets?fieldSelector=metadata.name=etc-pki-entitlement`). The API server takes the
 *    name of a list or watch from a `metadata.name` field selector (kubernetes
 *    staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go, `NewRequestInfo`:
 *    `opts.FieldSelector.RequiresExactMatch("metadata.name")` → `requestInfo.Name`), so the
 *    ClusterRole's `resourceNames` rule authorizes it (plugin/pkg/auth/authorizer/rbac/rbac.go
 *    `RuleAllows`). One watch, whatever the number of namespaces.
 * 2. **Namespace-wide**, per kind, where the server may list (`WEBHOOK_READ_NAMESPACES`: the source
 *    namespace of the ClusterBundles' copies, and namespaces an admin lists): one informer per
 *    (kind, namespace) that some bundle references, bounded by the stack's config. Never in a
 *    platform namespace (`kube*`, `openshift*`), whatever the scope says.
 * 3. **One object by name**, everywhere else and whenever 1 or 2 is refused by RBAC (a namespace's
 *    Role deleted with its namespace, a RoleBinding deleted by its admin): a cached GET of that object,
 *    falling back to a name-field-selected list (what `list` with `resourceNames` allows), kept for a
 *    short time in a bounded cache (least recently used first out). No watch per object.
 *
 * Every object is reduced to its name and key names before it is kept: values never stay in memory.
 */
import { CoreV1Api, type KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { KEY_RESOURCES, TEAM_BUNDLE_SECRET_NAMES } from "./access";
import type { KeyLookups, ReferencedKind } from "./decision";
import { Informer, type ListPage, describeError, errorStatus, listInPages } from "./informer";
import type { WebhookMetrics } from "./metrics";
import { isPlatformNamespace } from "../components/shared/k8s-names";
import { isRecord } from "../components/shared/records";

/** What the caches keep of a Secret or ConfigMap. */
export interface KeyNames extends KubernetesObject {
    metadata: { name: string; namespace: string; resourceVersion?: string };
    keys: string[];
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

const RESOURCES = KEY_RESOURCES;

/** Where the server may list namespace-wide: every namespace (`"all"`), or per kind a set of namespaces. */
export type ReadScopes = "all" | Readonly<Record<ReferencedKind, ReadonlySet<string>>>;

export interface ByNameSettings {
    /** How long a read object's key names are used; past three quarters of it a background read renews them. */
    freshMs: number;
    /** How long "not found" and "forbidden" are used (short: a team creating the Secret or the Role should not wait). */
    negativeMs: number;
    /** Objects kept at most; the least recently used go first. */
    maxObjects: number;
    /** When a renewal fails, how long the last answer is still used. */
    maxStaleMs: number;
}

/**
 * Items per page when listing Secrets and ConfigMaps. Each item arrives whole, values included (an
 * entitlement Secret is 6-10 KB of JSON), and a page is received, parsed and reduced to key names in
 * one piece. At 500 items (client-go's default) a page is 4 MB of body, text and parsed objects at
 * once: more than V8's young generation holds, so it is promoted and kept committed, and Node keeps a
 * text over 1 MB outside the V8 heap. At 50 a page is about 0.4 MB and dies young: with 10,000 teams
 * the peak while listing fell from 253 to 149-159 MiB and RSS once ready from 169 to 143-155 MiB
 * (`npm run bench:scale`, docs/subscriptions.md "Scale"). 10,000 Secrets take 200 requests instead of
 * 20, once at start and after a failed watch.
 */
export const KEY_LIST_PAGE_SIZE = 50;

export const DEFAULT_BY_NAME: ByNameSettings = { freshMs: 30_000, negativeMs: 5_000, maxObjects: 10_000, maxStaleMs: 300_000 };

export interface KeySourcesOptions {
    kubeConfig: KubeConfig;
    metrics: WebhookMetrics;
    logger: Logger;
    retry?: { initialMs: number; maxMs: number };
    /** Items per list page; default KEY_LIST_PAGE_SIZE. */
    pageSize?: number;
    readScopes: ReadScopes;
    /** Names read by one cluster-wide informer per kind; default: TEAM_BUNDLE_SECRET_NAMES for Secrets (none with readScopes "all"). */
    clusterNames?: Readonly<Record<ReferencedKind, readonly string[]>>;
    byName?: Partial<ByNameSettings>;
    now?: () => number;
}

/** One informer of key names: its metric labels, and when its first list settled (synced or refused). */
interface KeyInformer {
    informer: Informer<KeyNames>;
    labels: { resource: string; namespace: string; name: string };
    settled: Promise<void>;
    /** `secrets in team-a`, `secrets named etc-pki-entitlement`. */
    what: string;
}

/** One object read by name: what is known of it, when, and the read under way. */
interface ByNameEntry {
    value?: { keys: readonly string[] } | { absent: true } | { forbidden: string };
    at: number;
    /** The last read failed for another reason than RBAC (the API unreachable, 5xx): why. */
    error?: string;
    pending?: Promise<void>;
}

type Route = { type: "informer"; cache: KeyInformer } | { type: "waiting"; cache: KeyInformer } | { type: "byName"; id: string };

export class KeySources {
    private readonly core: CoreV1Api;
    private readonly byName: ByNameSettings;
    private readonly now: () => number;
    /** `Secret/etc-pki-entitlement` → the cluster-wide informer of that name. */
    private readonly named = new Map<string, KeyInformer>();
    /** `Secret/<namespace>` → the namespace-wide informer. */
    private readonly namespaced = new Map<string, KeyInformer>();
    /** `Secret/<namespace>/<name>` → the object read by name (insertion order: least recently used first). */
    private readonly objects = new Map<string, ByNameEntry>();
    private running = false;
    /** Counts every change of what the sources answer (plans made from them are valid for one version). */
    private changes = 0;

    constructor(private readonly options: KeySourcesOptions) {
        this.core = options.kubeConfig.makeApiClient(CoreV1Api);
        this.byName = { ...DEFAULT_BY_NAME, ...options.byName };
        this.now = options.now ?? Date.now;
    }

    /** Starts the cluster-wide informers of the conventional names. */
    start(): void {
        this.running = true;
        const names = this.options.clusterNames ?? {
            Secret: this.options.readScopes === "all" ? [] : TEAM_BUNDLE_SECRET_NAMES,
            ConfigMap: [],
        };
        for (const kind of ["Secret", "ConfigMap"] as const) {
            for (const name of names[kind]) {
                const id = `${kind}/${name}`;
                if (!this.named.has(id)) this.named.set(id, this.informer(kind, undefined, name));
            }
        }
        this.updateGauges();
    }

    stop(): void {
        this.running = false;
        for (const cache of [...this.named.values(), ...this.namespaced.values()]) this.stopInformer(cache);
        this.named.clear();
        this.namespaced.clear();
        this.objects.clear();
        this.updateGauges();
    }

    /** Changes with every change of what the sources answer. */
    version(): number {
        return this.changes;
    }

    /** Whether the server may list this kind in the whole namespace (never a platform namespace). */
    listable(kind: ReferencedKind, namespace: string): boolean {
        if (isPlatformNamespace(namespace)) return false;
        const scopes = this.options.readScopes;
        return scopes === "all" || scopes[kind].has(namespace);
    }

    /**
     * Keeps exactly the namespace-wide informers of the (kind, namespace) pairs bundles reference
     * where the server may list; returns when each new one has synced or been refused.
     */
    reconcile(referenced: Iterable<[ReferencedKind, string]>): Promise<void> {
        const needed = new Set<string>();
        for (const [kind, namespace] of referenced) if (this.listable(kind, namespace)) needed.add(`${kind}/${namespace}`);
        const started: Promise<void>[] = [];
        for (const id of needed) if (!this.namespaced.has(id)) started.push(this.startNamespaced(id).settled);
        for (const [id, cache] of this.namespaced) {
            if (!needed.has(id)) {
                this.stopInformer(cache);
                this.namespaced.delete(id);
            }
        }
        this.updateGauges();
        return Promise.all(started).then(() => undefined);
    }

    private startNamespaced(id: string): KeyInformer {
        const [kind, namespace] = id.split("/") as [ReferencedKind, string];
        const cache = this.informer(kind, namespace, undefined);
        this.namespaced.set(id, cache);
        return cache;
    }

    private informer(kind: ReferencedKind, namespace: string | undefined, name: string | undefined): KeyInformer {
        const resource = RESOURCES[kind];
        const fieldSelector = name === undefined ? undefined : `metadata.name=${name}`;
        const labels = { resource, namespace: namespace ?? "", name: name ?? "" };
        const what = namespace === undefined ? `${resource} named ${name}` : `${resource} in namespace ${namespace}`;
        const permission =
            namespace === undefined
                ? `list and watch ${resource} named ${name} in every namespace (a ClusterRole with resourceNames: ${name})`
                : `list and watch ${resource} in namespace ${namespace}`;
        let settle!: () => void;
        let warned = false;
        const informer = new Informer<KeyNames>({
            name: namespace === undefined ? `${resource}/*/${name}` : `${resource}/${namespace}`,
            kubeConfig: this.options.kubeConfig,
            path: namespace === undefined ? `/api/v1/${resource}` : `/api/v1/namespaces/${namespace}/${resource}`,
            fieldSelector,
            list: () => this.listPaged(kind, namespace, fieldSelector),
            shrink: keyNames,
            onRequest: (verb) => this.options.metrics.recordKubeApiRequest(verb, resource),
            onChange: () => void this.changes++,
            onListFailure: (error) => {
                const status = errorStatus(error);
                if (status !== 401 && status !== 403) return;
                // Readers go elsewhere now (by name): what they answer may change.
                this.changes++;
                if (!warned)
                    this.options.logger.warn(
                        { namespace, resource, name, permission, err: describeError(error) },
                        `key cache cannot sync: the webhook's service account may not ${permission}; ${what} are read one by one, by name, meanwhile`,
                    );
                warned = true;
                this.options.metrics.keyCacheSynced.set(labels, 0);
                settle();
            },
            logger: this.options.logger,
            retry: this.options.retry,
        });
        const cache: KeyInformer = { informer, labels, what, settled: new Promise((resolve) => (settle = resolve)) };
        this.options.metrics.keyCacheSynced.set(labels, 0);
        informer.start();
        void informer.whenSynced().then(() => {
            this.changes++;
            settle();
            if (this.running && (this.named.get(`${kind}/${name}`) === cache || this.namespaced.get(`${kind}/${namespace}`) === cache))
                this.options.metrics.keyCacheSynced.set(labels, 1);
        });
        return cache;
    }

    private stopInformer(cache: KeyInformer): void {
        cache.informer.stop();
        this.options.metrics.keyCacheSynced.remove(cache.labels);
    }

    /** Lists page by page, shrinking each page before fetching the next (later pages count as reads too). */
    private listPaged(kind: ReferencedKind, namespace: string | undefined, fieldSelector: string | undefined): Promise<ListPage> {
        return listInPages(
            (next, limit) => this.listPage(kind, namespace, fieldSelector, next, limit) as Promise<ListPage>,
            keyNames,
            this.options.pageSize ?? KEY_LIST_PAGE_SIZE,
            () => this.options.metrics.recordKubeApiRequest("list", RESOURCES[kind]),
        );
    }

    private listPage(
        kind: ReferencedKind,
        namespace: string | undefined,
        fieldSelector: string | undefined,
        next?: string,
        limit?: number,
    ) {
        if (namespace === undefined) {
            return kind === "Secret"
                ? this.core.listSecretForAllNamespaces(undefined, next, fieldSelector, undefined, limit)
                : this.core.listConfigMapForAllNamespaces(undefined, next, fieldSelector, undefined, limit);
        }
        return kind === "Secret"
            ? this.core.listNamespacedSecret(namespace, undefined, undefined, next, fieldSelector, undefined, limit)
            : this.core.listNamespacedConfigMap(namespace, undefined, undefined, next, fieldSelector, undefined, limit);
    }

    /** Where one object's key names come from now. */
    private route(kind: ReferencedKind, namespace: string, name: string): Route {
        const named = this.named.get(`${kind}/${name}`);
        if (named && !named.informer.refused)
            return named.informer.hasSynced ? { type: "informer", cache: named } : { type: "waiting", cache: named };
        if (this.listable(kind, namespace)) {
            const cache = this.namespaced.get(`${kind}/${namespace}`) ?? this.startNamespaced(`${kind}/${namespace}`);
            if (!cache.informer.refused) return cache.informer.hasSynced ? { type: "informer", cache } : { type: "waiting", cache };
        }
        return { type: "byName", id: `${kind}/${namespace}/${name}` };
    }

    /** The object's key names, or undefined when it does not exist (or is not known: see `unsynced`). */
    keysOf(kind: ReferencedKind, namespace: string, name: string): readonly string[] | undefined {
        const route = this.route(kind, namespace, name);
        if (route.type === "informer") return route.cache.informer.get(name, namespace)?.keys;
        if (route.type === "waiting") return undefined;
        const value = this.usable(route.id)?.value;
        return value && "keys" in value ? value.keys : undefined;
    }

    /** Why the server may not read this object (RBAC refused both the informers and the read by name), if so. */
    unreadable(kind: ReferencedKind, namespace: string, name: string): string | undefined {
        const route = this.route(kind, namespace, name);
        if (route.type !== "byName") return undefined;
        const value = this.usable(route.id)?.value;
        return value && "forbidden" in value ? value.forbidden : undefined;
    }

    /**
     * Undefined when every object `lookups` names can be answered now; else a promise that starts
     * what is missing (a read by name, a namespace informer) and resolves when each has settled.
     */
    whenReady(lookups: KeyLookups): Promise<void> | undefined {
        let waits: Promise<void>[] | undefined;
        this.forEachLookup(lookups, (kind, namespace, name) => {
            const route = this.route(kind, namespace, name);
            if (route.type === "waiting") (waits ??= []).push(route.cache.settled);
            else if (route.type === "byName" && !this.usable(route.id)) (waits ??= []).push(this.read(route.id));
        });
        return waits && Promise.all(waits).then(() => undefined);
    }

    /** The sources `lookups` read that cannot answer yet: `secrets in team-a`, `secrets team-b/own (read failed: ...)`. */
    unsynced(lookups: KeyLookups): string[] {
        const names = new Set<string>();
        this.forEachLookup(lookups, (kind, namespace, name) => {
            const route = this.route(kind, namespace, name);
            if (route.type === "waiting") names.add(route.cache.what);
            else if (route.type === "byName" && !this.usable(route.id)) {
                const error = this.objects.get(route.id)?.error;
                names.add(`${RESOURCES[kind]} ${namespace}/${name}${error ? ` (read failed: ${error})` : ""}`);
            }
        });
        return [...names];
    }

    private forEachLookup(lookups: KeyLookups, visit: (kind: ReferencedKind, namespace: string, name: string) => void): void {
        for (const kind of ["Secret", "ConfigMap"] as const) {
            for (const [namespace, names] of lookups[kind]) for (const name of names) visit(kind, namespace, name);
        }
    }

    /**
     * The entry of an object read by name when its answer may be used now (renewing it in the
     * background past three quarters of its time), else undefined. Touching it makes it the most
     * recently used.
     */
    private usable(id: string): ByNameEntry | undefined {
        const entry = this.objects.get(id);
        if (!entry?.value) return undefined;
        const ttl = "keys" in entry.value ? this.byName.freshMs : this.byName.negativeMs;
        const age = this.now() - entry.at;
        const limit = entry.error === undefined ? ttl : this.byName.maxStaleMs;
        if (age >= limit) return undefined;
        this.objects.delete(id);
        this.objects.set(id, entry);
        if (age >= ttl * 0.75 && !entry.pending) void this.read(id);
        return entry;
    }

    /** Reads one object by name (one read per object at a time); never rejects. */
    private read(id: string): Promise<void> {
        let entry = this.objects.get(id);
        if (entry?.pending) return entry.pending;
        if (!entry) {
            entry = { at: 0 };
            this.objects.set(id, entry);
            this.evict();
        }
        const target = entry;
        const [kind, namespace, name] = id.split("/") as [ReferencedKind, string, string];
        target.pending = this.fetch(kind, namespace, name).then(
            (value) => {
                if (JSON.stringify(value) !== JSON.stringify(target.value)) this.changes++;
                target.value = value;
                target.at = this.now();
                target.error = undefined;
                target.pending = undefined;
            },
            (error: unknown) => {
                target.error = describeError(error);
                target.pending = undefined;
                // The last answer stays usable (up to maxStaleMs) unless there was none.
                if (!target.value) target.at = this.now();
            },
        );
        this.updateGauges();
        return target.pending;
    }

    /** GET the object; when RBAC refuses the GET, the name-field-selected list a `list` rule with resourceNames allows. */
    private async fetch(kind: ReferencedKind, namespace: string, name: string): Promise<NonNullable<ByNameEntry["value"]>> {
        const resource = RESOURCES[kind];
        this.options.metrics.recordKubeApiRequest("get", resource);
        try {
            const { body } =
                kind === "Secret"
                    ? await this.core.readNamespacedSecret(name, namespace)
                    : await this.core.readNamespacedConfigMap(name, namespace);
            return { keys: keyNames(body).keys };
        } catch (error) {
            const status = errorStatus(error);
            if (status === 404) return { absent: true };
            if (status !== 401 && status !== 403) throw error;
        }
        this.options.metrics.recordKubeApiRequest("list", resource);
        try {
            const { body } = await this.listPage(kind, namespace, `metadata.name=${name}`, undefined, 1);
            const found = body.items.find((item) => item.metadata?.name === name);
            return found ? { keys: keyNames(found).keys } : { absent: true };
        } catch (error) {
            const status = errorStatus(error);
            if (status !== 401 && status !== 403) throw error;
            return {
                forbidden: `the webhook may not read ${resource} ${namespace}/${name} (its service account needs get on ${resource} named ${JSON.stringify(name)} in namespace ${namespace}: a Role with resourceNames)`,
            };
        }
    }

    private evict(): void {
        while (this.objects.size > this.byName.maxObjects) {
            const oldest = this.objects.keys().next().value as string;
            this.objects.delete(oldest);
        }
    }

    private updateGauges(): void {
        this.options.metrics.informers.set({ kind: "keys" }, this.named.size + this.namespaced.size);
        this.options.metrics.objectsReadByName.set(this.objects.size);
    }

    /**
     * What the caches hold (for tests and debugging), by source: `Secret/<all>/<name>` (cluster-wide,
     * entries by `<namespace>/<name>`), `Secret/<namespace>`, and `Secret/<namespace>/<name>` (by name).
     */
    contents(): Record<string, Record<string, string[]>> {
        const contents: Record<string, Record<string, string[]>> = {};
        const listed = (cache: KeyInformer, qualified: boolean) =>
            Object.fromEntries(
                cache.informer
                    .list()
                    .map((object) => [
                        qualified ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name,
                        object.keys,
                    ]),
            );
        for (const [id, cache] of this.named) contents[id.replace("/", "/<all>/")] = listed(cache, true);
        for (const [id, cache] of this.namespaced) contents[id] = listed(cache, false);
        for (const [id, entry] of this.objects) {
            if (entry.value && "keys" in entry.value) contents[id] = { [id.split("/")[2]]: [...entry.value.keys] };
        }
        return contents;
    }
}
