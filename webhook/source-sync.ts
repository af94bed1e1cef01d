/**
 * The source sync: keeps, in the source namespace, a copy of every Secret and ConfigMap a
 * ClusterBundle shares, so that the Shared Resource CSI driver reads copies there and nothing of the
 * namespaces the originals live in. With refresh on, the driver lists and watches every object of a
 * share's source namespace (openshift/csi-driver-shared-resource pkg/controller/controller.go
 * `RegisterSecretInformer`); pointed at `openshift-config-managed`, it could read the control plane's
 * client keys kept there. Pointed at the source namespace, it reads copies of shared objects only.
 *
 * Per original, one informer selected by `metadata.name` in its namespace (authorized by a Role with
 * `resourceNames`, as the API server names such a list or watch; kubernetes
 * staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go). On every change the copy is
 * written by server-side apply (field manager `subscription-source-sync`, forced): the original's
 * data (and binaryData), type Opaque, the platform labels, an annotation naming the original, and
 * ownerReferences to the shares that point at it, so Kubernetes' garbage collector deletes the copy
 * with the last of them (kubernetes pkg/controller/garbagecollector: a dependent whose owners are all
 * gone is deleted). An original deleted deletes its copy, as the driver would have seen it go. Every
 * `resyncMs` each copy is applied again (a no-op for the API server when nothing changed), which
 * also restores a copy deleted or edited out of band.
 *
 * Failure modes: while this process is down or refused, copies keep what they last had (running pods
 * keep their entitlements; a rotation reaches them when it is back); a copy never made (a new
 * reference) makes the webhook deny pods that ask for its ClusterBundle, naming the copy; each failure
 * is logged with the permission or status and shown by `subscription_source_sync_copy_current`.
 * Values are never logged.
 */
import * as http from "node:http";
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type KubernetesObject } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { type SourceObject, KEY_RESOURCES, SHARE_OF_KIND } from "./access";
import {
    SHARED_CONFIG_MAP_KIND,
    SHARED_RESOURCE_API_VERSION,
    SHARED_RESOURCE_GROUP,
    SHARED_SECRET_KIND,
    SOURCE_COPY_OF_ANNOTATION,
    sourceCopyName,
} from "./api";
import { Informer, type ListPage, describeError, errorStatus } from "./informer";
import { isRecord } from "../components/shared/records";

export const SOURCE_SYNC_FIELD_MANAGER = "subscription-source-sync";

/** Labels on every copy (the stack's platform labels and what the object is). */
export const COPY_LABELS = {
    "app.kubernetes.io/managed-by": "cluster-platform",
    "cluster-platform.io/capability": "subscriptions",
    "app.kubernetes.io/component": "source-copy",
} as const;

export interface SourceSyncOptions {
    kubeConfig: KubeConfig;
    logger: Logger;
    sourceNamespace: string;
    objects: readonly SourceObject[];
    /** How often every copy is applied again. */
    resyncMs: number;
    retry?: { initialMs: number; maxMs: number };
    metrics?: SourceSyncMetrics;
}

export class SourceSyncMetrics {
    readonly registry = new Registry();
    readonly current: Gauge<"kind" | "namespace" | "name">;
    readonly writes: Counter<"result">;
    readonly kubeApiRequests: Counter<"verb" | "resource">;

    constructor(options: { processMetrics?: boolean } = {}) {
        const registers = [this.registry];
        this.current = new Gauge({
            name: "subscription_source_sync_copy_current",
            help: "Per shared original: 1 while its copy in the source namespace was written from its last known state, 0 while the original cannot be read or the copy cannot be written.",
            labelNames: ["kind", "namespace", "name"],
            registers,
        });
        this.writes = new Counter({
            name: "subscription_source_sync_writes_total",
            help: "Copies applied or deleted, by result (applied, deleted, skipped: no share owns it, failed).",
            labelNames: ["result"],
            registers,
        });
        this.kubeApiRequests = new Counter({
            name: "subscription_source_sync_kube_api_requests_total",
            help: "Requests made to the Kubernetes API.",
            labelNames: ["verb", "resource"],
            registers,
        });
        if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "subscription_source_sync_" });
    }
}

interface Original extends KubernetesObject {
    type?: string;
    data?: Record<string, string>;
    binaryData?: Record<string, string>;
}

/** One original and its copy's state. */
interface Tracked {
    object: SourceObject;
    copy: string;
    informer: Informer<Original>;
    settled: Promise<void>;
    /** A write is wanted; `running` is the one under way. */
    dirty: boolean;
    running?: Promise<void>;
    delayMs: number;
    timer?: NodeJS.Timeout;
}

/** The copy of an original as applied: data only, labelled, owned by its shares. */
export function copyManifest(
    object: SourceObject,
    sourceNamespace: string,
    original: Original,
    owners: readonly { name: string; uid: string }[],
): Record<string, unknown> {
    return {
        apiVersion: "v1",
        kind: object.kind,
        metadata: {
            name: sourceCopyName(object),
            namespace: sourceNamespace,
            labels: { ...COPY_LABELS },
            annotations: { [SOURCE_COPY_OF_ANNOTATION]: `${object.kind} ${object.namespace}/${object.name}` },
            ownerReferences: owners.map((owner) => ({
                apiVersion: SHARED_RESOURCE_API_VERSION,
                kind: object.kind === "Secret" ? SHARED_SECRET_KIND : SHARED_CONFIG_MAP_KIND,
                name: owner.name,
                uid: owner.uid,
            })),
        },
        ...(object.kind === "Secret" ? { type: "Opaque" } : {}),
        data: isRecord(original.data) ? original.data : {},
        ...(object.kind === "ConfigMap" && isRecord(original.binaryData) ? { binaryData: original.binaryData } : {}),
    };
}

export class SourceSync {
    private readonly core: CoreV1Api;
    private readonly custom: CustomObjectsApi;
    private readonly tracked: Tracked[];
    private readonly metrics: SourceSyncMetrics;
    private resyncTimer?: NodeJS.Timeout;
    private stopped = false;

    constructor(private readonly options: SourceSyncOptions) {
        this.core = options.kubeConfig.makeApiClient(CoreV1Api);
        this.custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
        this.metrics = options.metrics ?? new SourceSyncMetrics();
        this.tracked = options.objects.map((object) => this.track(object));
    }

    private request(verb: string, resource: string): void {
        this.metrics.kubeApiRequests.inc({ verb, resource });
    }

    private track(object: SourceObject): Tracked {
        const resource = KEY_RESOURCES[object.kind];
        const fieldSelector = `metadata.name=${object.name}`;
        const labels = { kind: object.kind, namespace: object.namespace, name: object.name };
        let settle!: () => void;
        const tracked = {
            object,
            copy: sourceCopyName(object),
            dirty: false,
            delayMs: this.options.retry?.initialMs ?? 1000,
            settled: new Promise<void>((resolve) => (settle = resolve)),
        } as Tracked;
        tracked.informer = new Informer<Original>({
            name: `${resource}/${object.namespace}/${object.name}`,
            kubeConfig: this.options.kubeConfig,
            path: `/api/v1/namespaces/${object.namespace}/${resource}`,
            fieldSelector,
            list: async () => {
                const page =
                    object.kind === "Secret"
                        ? await this.core.listNamespacedSecret(object.namespace, undefined, undefined, undefined, fieldSelector)
                        : await this.core.listNamespacedConfigMap(object.namespace, undefined, undefined, undefined, fieldSelector);
                return page as ListPage;
            },
            shrink: (item) => {
                const original = (isRecord(item) ? item : {}) as Original;
                if (original.metadata) delete original.metadata.managedFields;
                return original;
            },
            onRequest: (verb) => this.request(verb, resource),
            onChange: () => this.schedule(tracked, 0),
            onListFailure: (error) => {
                this.metrics.current.set(labels, 0);
                const status = errorStatus(error);
                if (status === 401 || status === 403) {
                    this.options.logger.warn(
                        {
                            ...labels,
                            permission: `get, list and watch ${resource} named ${object.name} in namespace ${object.namespace}`,
                            err: describeError(error),
                        },
                        "cannot read the original; its copy keeps what it had",
                    );
                    settle();
                }
            },
            logger: this.options.logger,
            retry: this.options.retry,
        });
        void tracked.informer.whenSynced().then(() => {
            settle();
            // An original that does not exist yet is synced too; nothing to write until it does.
            this.schedule(tracked, 0);
        });
        return tracked;
    }

    start(): void {
        for (const tracked of this.tracked) tracked.informer.start();
        this.resyncTimer = setInterval(() => this.tracked.forEach((tracked) => this.schedule(tracked, 0)), this.options.resyncMs);
        this.resyncTimer.unref();
    }

    /** Resolves once every original has been listed once (or refused) and the writes that followed are done. */
    async settled(): Promise<void> {
        await Promise.all(this.tracked.map((tracked) => tracked.settled));
        await this.idle();
    }

    /** Resolves when no write is wanted or under way. */
    async idle(): Promise<void> {
        for (;;) {
            const running = this.tracked.filter((tracked) => tracked.running || tracked.dirty || tracked.timer);
            if (running.length === 0) return;
            await Promise.all(running.map((tracked) => tracked.running ?? new Promise((resolve) => setTimeout(resolve, 20))));
        }
    }

    /** Whether every original has been listed (or refused) once: the readiness of the process. */
    ready(): boolean {
        return this.tracked.every((tracked) => tracked.informer.hasSynced || tracked.informer.refused);
    }

    stop(): void {
        this.stopped = true;
        if (this.resyncTimer) clearInterval(this.resyncTimer);
        for (const tracked of this.tracked) {
            tracked.informer.stop();
            if (tracked.timer) clearTimeout(tracked.timer);
            tracked.timer = undefined;
        }
    }

    private schedule(tracked: Tracked, delayMs: number): void {
        if (this.stopped || !tracked.informer.hasSynced) return;
        tracked.dirty = true;
        if (tracked.running || tracked.timer) return;
        if (delayMs > 0) {
            tracked.timer = setTimeout(() => {
                tracked.timer = undefined;
                this.schedule(tracked, 0);
            }, delayMs);
            tracked.timer.unref();
            return;
        }
        tracked.dirty = false;
        tracked.running = this.write(tracked).then(
            () => {
                tracked.running = undefined;
                tracked.delayMs = this.options.retry?.initialMs ?? 1000;
                if (tracked.dirty) this.schedule(tracked, 0);
            },
            (error: unknown) => {
                tracked.running = undefined;
                this.metrics.writes.inc({ result: "failed" });
                this.metrics.current.set({ kind: tracked.object.kind, namespace: tracked.object.namespace, name: tracked.object.name }, 0);
                this.options.logger.warn(
                    {
                        kind: tracked.object.kind,
                        namespace: tracked.object.namespace,
                        name: tracked.object.name,
                        copy: tracked.copy,
                        err: describeError(error),
                    },
                    "cannot write the copy; retrying",
                );
                const delay = tracked.delayMs;
                tracked.delayMs = Math.min(delay * 2, this.options.retry?.maxMs ?? 30_000);
                this.schedule(tracked, delay);
            },
        );
    }

    /** Brings the copy in line with the original as the informer has it now. */
    private async write(tracked: Tracked): Promise<void> {
        const { object, copy } = tracked;
        const { sourceNamespace } = this.options;
        const labels = { kind: object.kind, namespace: object.namespace, name: object.name };
        const resource = KEY_RESOURCES[object.kind];
        const original = tracked.informer.get(object.name, object.namespace);
        if (!original) {
            this.request("delete", resource);
            try {
                if (object.kind === "Secret") await this.core.deleteNamespacedSecret(copy, sourceNamespace);
                else await this.core.deleteNamespacedConfigMap(copy, sourceNamespace);
                this.metrics.writes.inc({ result: "deleted" });
                this.options.logger.info({ ...labels, copy }, "original gone; copy deleted");
            } catch (error) {
                if (errorStatus(error) !== 404) throw error;
            }
            this.metrics.current.set(labels, 1);
            return;
        }
        const owners = await this.owners(object);
        if (owners.length === 0) {
            this.metrics.writes.inc({ result: "skipped" });
            this.metrics.current.set(labels, 0);
            this.options.logger.warn({ ...labels, shares: object.shares }, "no share owns the copy yet; not written");
            return;
        }
        const body = copyManifest(object, sourceNamespace, original, owners);
        const headers = { headers: { "Content-Type": "application/apply-patch+yaml" } };
        this.request("patch", resource);
        const apply = object.kind === "Secret" ? this.core.patchNamespacedSecret : this.core.patchNamespacedConfigMap;
        await apply.call(this.core, copy, sourceNamespace, body, undefined, undefined, SOURCE_SYNC_FIELD_MANAGER, undefined, true, headers);
        this.metrics.writes.inc({ result: "applied" });
        this.metrics.current.set(labels, 1);
    }

    /** The shares of this original that exist, with their uids (a share not there yet is left out). */
    private async owners(object: SourceObject): Promise<{ name: string; uid: string }[]> {
        const plural = SHARE_OF_KIND[object.kind];
        const owners: { name: string; uid: string }[] = [];
        for (const share of [...object.shares].sort()) {
            this.request("get", plural);
            try {
                const { body } = await this.custom.getClusterCustomObject(
                    SHARED_RESOURCE_GROUP,
                    SHARED_RESOURCE_API_VERSION.split("/")[1],
                    plural,
                    share,
                );
                const uid = (body as KubernetesObject).metadata?.uid;
                if (uid) owners.push({ name: share, uid });
            } catch (error) {
                if (errorStatus(error) !== 404) throw error;
            }
        }
        return owners;
    }
}

/** GET /healthz, /readyz (every original listed once) and /metrics over plain HTTP (no Secret data is ever served). */
export function sourceSyncHttpServer(sync: SourceSync, metrics: SourceSyncMetrics): http.Server {
    return http.createServer((req, res) => {
        const path = (req.url ?? "/").split("?")[0];
        if (req.method === "GET" && path === "/healthz") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
        if (req.method === "GET" && path === "/readyz") {
            const ready = sync.ready();
            return void res
                .writeHead(ready ? 200 : 503, { "content-type": "text/plain" })
                .end(ready ? "ok\n" : "originals not listed yet\n");
        }
        if (req.method === "GET" && path === "/metrics") {
            void metrics.registry.metrics().then((text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text));
            return;
        }
        res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    });
}
