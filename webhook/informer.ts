/**
 * An informer: @kubernetes/client-node's list-then-watch protocol (its ListWatch, kept to the
 * letter below over a lighter store), counting its API requests, shrinking every object before
 * the cache stores it (Secrets and ConfigMaps keep only key names), restarting itself after errors
 * with backoff, and telling when its first list has completed.
 */
import type * as http from "node:http";
import { type KubeConfig, type KubernetesListObject, type KubernetesObject, Watch } from "@kubernetes/client-node";
import type { Logger } from "pino";

export type ListPage<T extends KubernetesObject = KubernetesObject> = { response: http.IncomingMessage; body: KubernetesListObject<T> };

/**
 * Watch whose events pass through `shrink` before the ListWatch sees them (the raw event is
 * dropped). ListWatch re-lists from its watch callbacks without awaiting them; their rejections
 * are caught here and reported instead of becoming unhandled.
 */
class ShrinkingWatch<T> extends Watch {
    constructor(
        config: KubeConfig,
        private readonly shrink: (object: unknown) => T,
        private readonly onRequest: () => void,
        private readonly onFailure: (error: unknown) => void,
        private readonly fieldSelector: string | undefined,
    ) {
        super(config);
    }

    override async watch(
        path: string,
        queryParams: Record<string, unknown>,
        callback: (phase: string, apiObj: unknown) => void,
        done: (err: unknown) => void,
    ) {
        this.onRequest();
        if (this.fieldSelector) queryParams = { ...queryParams, fieldSelector: this.fieldSelector };
        const guard = (result: unknown) => {
            if (result instanceof Promise) result.catch(this.onFailure);
        };
        return super.watch(
            path,
            queryParams,
            (phase, object) =>
                guard((callback as (phase: string, apiObj: unknown) => unknown)(phase, phase === "ERROR" ? object : this.shrink(object))),
            (err) => guard((done as (err: unknown) => unknown)(err)),
        );
    }
}

/**
 * The objects an informer holds, by namespace ("" for cluster-scoped ones): the object itself when
 * a namespace has one, a Map by name when it has several. client-node's ListWatch keeps a Map per
 * namespace; with a Bundle and an entitlement Secret in each of 10,000 team namespaces those
 * 20,000 one-entry Maps were about 3.5 MiB of the server's heap (docs/subscriptions.md, "Scale:
 * teams' Bundles").
 */
export class NamespacedStore<T extends KubernetesObject> {
    private readonly byNamespace = new Map<string, T | Map<string, T>>();

    get(name: string, namespace = ""): T | undefined {
        const held = this.byNamespace.get(namespace);
        if (held instanceof Map) return held.get(name);
        return held !== undefined && nameOf(held) === name ? held : undefined;
    }

    /** Every object, or those of one namespace (none given or "": every object, as ListWatch lists). */
    list(namespace?: string): T[] {
        if (namespace) {
            const held = this.byNamespace.get(namespace);
            return held === undefined ? [] : held instanceof Map ? [...held.values()] : [held];
        }
        const all: T[] = [];
        for (const held of this.byNamespace.values()) {
            if (held instanceof Map) for (const object of held.values()) all.push(object);
            else all.push(held);
        }
        return all;
    }

    /** Stores `object`; whether it was new, replaced one of another resourceVersion, or changed nothing (ListWatch's addOrUpdateObject). */
    upsert(object: T): "add" | "update" | undefined {
        const namespace = object.metadata?.namespace || "";
        const name = nameOf(object);
        const held = this.byNamespace.get(namespace);
        const found = held instanceof Map ? held.get(name) : held !== undefined && nameOf(held) === name ? held : undefined;
        if (found) {
            const version = found.metadata?.resourceVersion;
            if (version !== undefined && version !== null && version === object.metadata?.resourceVersion) return undefined;
        }
        if (held instanceof Map) held.set(name, object);
        else if (held === undefined || found) this.byNamespace.set(namespace, object);
        else
            this.byNamespace.set(
                namespace,
                new Map([
                    [nameOf(held), held],
                    [name, object],
                ]),
            );
        return found ? "update" : "add";
    }

    /** Removes the object of `object`'s namespace and name; the removed one, if any (ListWatch's deleteObject). */
    remove(object: T): T | undefined {
        const namespace = object.metadata?.namespace || "";
        const name = nameOf(object);
        const held = this.byNamespace.get(namespace);
        if (held instanceof Map) {
            const removed = held.get(name);
            held.delete(name);
            if (held.size === 1) this.byNamespace.set(namespace, held.values().next().value as T);
            return removed;
        }
        if (held === undefined || nameOf(held) !== name) return undefined;
        this.byNamespace.delete(namespace);
        return held;
    }

    /** Removes every object `items` does not name (namespace and name); the removed ones (ListWatch's deleteItems). */
    keepOnly(items: readonly T[]): T[] {
        const kept = new Set(items.map((item) => `${item.metadata?.namespace || ""}/${nameOf(item)}`));
        const removed = this.list().filter((object) => !kept.has(`${object.metadata?.namespace || ""}/${nameOf(object)}`));
        for (const object of removed) this.remove(object);
        return removed;
    }
}

function nameOf(object: KubernetesObject): string {
    return object.metadata?.name || "";
}

interface WatchRequest {
    abort(): void;
    removeAllListeners(event: string): void;
    on(event: string, listener: () => void): void;
}

/**
 * @kubernetes/client-node 0.22.3's ListWatch (dist/cache.js) step for step: list when there is no
 * resourceVersion to resume from, replace the store (a delete for each object gone, an add or
 * update for each listed one), then watch from the list's resourceVersion; each event moves the
 * resourceVersion on; a watch that ends without error resumes, 410 Gone lists afresh, any other
 * error is reported and the caller decides (Informer.run). The store is NamespacedStore.
 */
class ListWatchStore<T extends KubernetesObject> {
    /** Where the next watch resumes; empty: list first. */
    resourceVersion = "";
    private readonly store = new NamespacedStore<T>();
    private request: WatchRequest | undefined;
    private stopped = false;

    constructor(
        private readonly path: string,
        private readonly watch: Watch,
        private readonly listFn: () => Promise<ListPage<T>>,
        private readonly on: {
            change: (event: "add" | "update" | "delete", object: T) => void;
            error: (error: unknown) => void;
        },
    ) {}

    async start(): Promise<void> {
        this.stopped = false;
        await this.done(null);
    }

    stop(): void {
        this.stopped = true;
        this.abort();
    }

    get(name: string, namespace?: string): T | undefined {
        return this.store.get(name, namespace);
    }

    list(namespace?: string): T[] {
        return this.store.list(namespace);
    }

    private abort(): void {
        if (!this.request) return;
        this.request.removeAllListeners("error");
        // Errors emitted after the abort are not this watch's.
        this.request.on("error", () => undefined);
        this.request.abort();
        this.request = undefined;
    }

    private async done(error: unknown): Promise<void> {
        this.abort();
        const status = error as { statusCode?: unknown; code?: unknown } | null;
        if (status && (status.statusCode === 410 || status.code === 410)) {
            this.resourceVersion = "";
        } else if (error) {
            this.on.error(error);
            return;
        }
        if (this.stopped) return;
        if (!this.resourceVersion) {
            const list = (await this.listFn()).body;
            for (const gone of this.store.keepOnly(list.items)) this.on.change("delete", gone);
            for (const object of list.items) this.upsert(object);
            this.resourceVersion = list.metadata?.resourceVersion || "";
        }
        this.request = (await this.watch.watch(
            this.path,
            { resourceVersion: this.resourceVersion },
            (phase, object) => this.event(phase, object as T),
            (err) => this.done(err),
        )) as unknown as WatchRequest;
    }

    private upsert(object: T): void {
        const event = this.store.upsert(object);
        if (event) this.on.change(event, object);
    }

    private async event(phase: string, object: T): Promise<void> {
        switch (phase) {
            case "ADDED":
            case "MODIFIED":
                this.upsert(object);
                break;
            case "DELETED": {
                if (this.store.remove(object)) this.on.change("delete", object);
                break;
            }
            case "BOOKMARK":
                break;
            case "ERROR":
                await this.done(object);
                return;
        }
        this.resourceVersion = object.metadata?.resourceVersion || "";
    }
}

export interface InformerOptions<T extends KubernetesObject> {
    name: string;
    kubeConfig: KubeConfig;
    /** API path of the collection, e.g. /api/v1/namespaces/ns/secrets. */
    path: string;
    /** One list call (the informer counts it); may page internally. */
    list: () => Promise<ListPage>;
    shrink: (object: unknown) => T;
    /** Called once per API request (list or watch). */
    onRequest: (verb: "list" | "watch") => void;
    onChange: (event: "add" | "update" | "delete", object: T) => void;
    logger: Logger;
    retry?: { initialMs: number; maxMs: number };
    /** Sent with every watch (the list function applies it to its own requests). */
    fieldSelector?: string;
    /** Called when a list fails (before the retry is scheduled). */
    onListFailure?: (error: unknown) => void;
}

export class Informer<T extends KubernetesObject> {
    private readonly listWatch: ListWatchStore<T>;
    private stopped = false;
    private synced = false;
    private syncedPromise: Promise<void>;
    private resolveSynced!: () => void;
    private delayMs: number;
    private retryTimer: NodeJS.Timeout | undefined;
    /** Set when a watch failed (not merely closed): the next start lists afresh instead of resuming. */
    private relist = false;
    /** The error of the last list, until a list succeeds again (a cache being refused by RBAC shows here). */
    private lastListError: unknown;

    constructor(private readonly options: InformerOptions<T>) {
        this.delayMs = options.retry?.initialMs ?? 1000;
        this.syncedPromise = new Promise((resolve) => (this.resolveSynced = resolve));
        const watch = new ShrinkingWatch(
            options.kubeConfig,
            options.shrink,
            () => options.onRequest("watch"),
            (error) => {
                options.logger.warn({ informer: options.name, err: describeError(error) }, "re-list failed; retrying");
                this.relist = true;
                this.scheduleRestart();
            },
            options.fieldSelector,
        );
        const list = async (): Promise<ListPage<T>> => {
            options.onRequest("list");
            const page = await options.list();
            const items = page.body.items.map((item) => options.shrink(item));
            return { response: page.response, body: { ...page.body, items } };
        };
        this.listWatch = new ListWatchStore<T>(options.path, watch, list, {
            change: (event, object) => options.onChange(event, object),
            error: (error) => {
                options.logger.warn({ informer: options.name, err: describeError(error) }, "watch failed; re-listing");
                this.relist = true;
                this.scheduleRestart();
            },
        });
    }

    /** Starts listing and watching; retries until it succeeds or is stopped. */
    start(): void {
        this.stopped = false;
        this.run();
    }

    private run(): void {
        if (this.stopped) return;
        if (this.relist) {
            // ListWatch resumes its watch from the last resourceVersion unless that is empty, and
            // empties it itself only on 410 Gone. After any other failure (API server restarted,
            // connection refused or reset, watch refused) the cache may have missed changes the
            // API will not replay, so the restart lists afresh, as client-go does: in
            // kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go a watch
            // that ends with an error returns from ListAndWatch, and Run's backoff loop lists
            // again (an expired resourceVersion, 410, relists from ""). The list replaces the
            // cache, with a delete for everything that disappeared (ListWatchStore.done).
            this.listWatch.resourceVersion = "";
            this.relist = false;
        }
        this.listWatch.start().then(
            () => {
                this.delayMs = this.options.retry?.initialMs ?? 1000;
                this.lastListError = undefined;
                if (!this.synced) {
                    this.synced = true;
                    this.resolveSynced();
                }
            },
            (error: unknown) => {
                this.options.logger.warn({ informer: this.options.name, err: describeError(error) }, "list failed; retrying");
                this.lastListError = error;
                this.options.onListFailure?.(error);
                this.relist = true;
                this.scheduleRestart();
            },
        );
    }

    private scheduleRestart(): void {
        if (this.stopped || this.retryTimer) return;
        const delay = this.delayMs;
        this.delayMs = Math.min(this.delayMs * 2, this.options.retry?.maxMs ?? 30_000);
        this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.run();
        }, delay);
        this.retryTimer.unref();
    }

    get hasSynced(): boolean {
        return this.synced;
    }

    /**
     * The last list failed with 401 or 403 and none has succeeded since: what the cache holds may
     * be stale (a RoleBinding deleted after the first list), so readers go elsewhere.
     */
    get refused(): boolean {
        const status = errorStatus(this.lastListError);
        return status === 401 || status === 403;
    }

    /** Resolves once the first list has completed. */
    whenSynced(): Promise<void> {
        return this.syncedPromise;
    }

    get(name: string, namespace?: string): T | undefined {
        return this.listWatch.get(name, namespace);
    }

    /** Every object, or those of one namespace. */
    list(namespace?: string): ReadonlyArray<T> {
        return this.listWatch.list(namespace);
    }

    stop(): void {
        this.stopped = true;
        if (this.retryTimer) clearTimeout(this.retryTimer);
        this.retryTimer = undefined;
        this.listWatch.stop();
    }
}

/**
 * One list call made of pages (`limit` items each, following `continue`): each page's items are
 * shrunk before the next is fetched, so a long list never sits whole in memory; every page after
 * the first is counted by `onExtraPage` (the informer counts the first).
 */
export async function listInPages<T extends KubernetesObject>(
    fetchPage: (next: string | undefined, limit: number) => Promise<ListPage>,
    shrink: (item: unknown) => T,
    limit: number,
    onExtraPage: () => void,
): Promise<ListPage> {
    const items: T[] = [];
    let page: ListPage;
    let next: string | undefined;
    let first = true;
    do {
        if (!first) onExtraPage();
        first = false;
        page = await fetchPage(next, limit);
        for (const item of page.body.items) items.push(shrink(item));
        // Typed lists (CoreV1Api) rename the field `_continue`; custom objects come back as plain JSON,
        // where it stays `continue` (the API server's ListMeta JSON name).
        const meta = page.body.metadata as { _continue?: string; continue?: string } | undefined;
        next = meta?._continue || meta?.continue || undefined;
    } while (next);
    const body: KubernetesListObject<T> = { ...page.body, items };
    return { response: page.response, body } as ListPage;
}

/** The HTTP status of a failed client request, when it has one. */
export function errorStatus(error: unknown): number | undefined {
    if (!error || typeof error !== "object") return undefined;
    const record = error as { statusCode?: unknown; response?: { statusCode?: unknown } };
    const status = record.statusCode ?? record.response?.statusCode;
    return typeof status === "number" ? status : undefined;
}

/** A loggable description of a client error: status and message only (never a response body). */
export function describeError(error: unknown): string {
    if (error && typeof error === "object") {
        const record = error as { statusCode?: unknown; code?: unknown; message?: unknown };
        const status = record.statusCode ?? record.code;
        const message = typeof record.message === "string" ? record.message : "";
        return [status !== undefined ? `status ${String(status)}` : "", message].filter(Boolean).join(": ") || "unknown error";
    }
    return String(error);
}
