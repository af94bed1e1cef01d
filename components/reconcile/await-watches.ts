/**
 * What the Kubernetes provider's await logic watches for each kind, beside the object itself.
 * Pure data, read from pulumi/pulumi-kubernetes at the provider this repository builds and pins
 * (tools/kubernetes-provider/go.mod: provider/v4 v4.0.0-20260115033456-f47bc2d6f199, released
 * as 4.25.0), provider/pkg/await/:
 *
 * - await.go (Creation, Update, Deletion): every create, update and delete subscribes an
 *   `NewEventAggregator` (watchers.go) to core/v1 Events in the object's namespace, whatever
 *   the kind, and watches the object's own kind (condition/source.go DynamicSource.Watch,
 *   DeletionSource) — so every kind needs list/watch on itself and on events.
 * - deployment.go (deploymentInitAwaiter.Await): deployments, replicasets, pods and
 *   persistentvolumeclaims; Read lists the same.
 * - statefulset.go: statefulsets, pods. daemonset.go: daemonsets, pods. job.go: jobs, pods.
 * - service.go (serviceInitAwaiter.Await): services, endpoints.
 * - ingress.go (awaitIngressInit): ingresses, endpoints, services.
 * - awaiters.go: the kinds with no built-in await (ConfigMap, RBAC, StorageClass...) and the
 *   ones that only watch themselves (PersistentVolume(Claim), Secret, ServiceAccount, Pod...).
 *
 * Every watch is a shared informer (informers/factory.go Subscribe → dynamicinformer
 * ForResource): an informer whose list is forbidden retries and never syncs, so the await
 * neither succeeds nor fails until its timeout (pulumi/pulumi-kubernetes#4580 is the same
 * mechanism). A missing entry here is a hang under the reconcile role, not an error.
 */

export interface WatchedResource {
    /** API group; "" is core. */
    group: string;
    /** Plural resource name. */
    resource: string;
}

/** Watched by every create, update and delete, whatever the kind (await.go, watchers.go NewEventAggregator). */
export const WATCHED_FOR_EVERY_KIND: ReadonlyArray<WatchedResource> = [{ group: "", resource: "events" }];

/** Watched beside the object itself, by `<group>|<Kind>` ("" is core). */
export const AWAIT_WATCHES: Readonly<Record<string, ReadonlyArray<WatchedResource>>> = {
    "apps|Deployment": [
        { group: "apps", resource: "replicasets" },
        { group: "", resource: "pods" },
        { group: "", resource: "persistentvolumeclaims" },
    ],
    "apps|StatefulSet": [{ group: "", resource: "pods" }],
    "apps|DaemonSet": [{ group: "", resource: "pods" }],
    "batch|Job": [{ group: "", resource: "pods" }],
    "|Service": [{ group: "", resource: "endpoints" }],
    "networking.k8s.io|Ingress": [
        { group: "", resource: "endpoints" },
        { group: "", resource: "services" },
    ],
};

/** Everything the await logic watches for an object of `kind` in `group`, beside the object's own kind. */
export function watchedFor(group: string, kind: string): WatchedResource[] {
    return [...WATCHED_FOR_EVERY_KIND, ...(AWAIT_WATCHES[`${group}|${kind}`] ?? [])];
}
