/**
 * The objects the pre-flight asks the cluster about, as plain data: which object, and for a
 * required one the config path that names it and why. Apart from components/shared/object-presence.ts,
 * which asks, so that a module describing what it needs (the rooms' `rules.ts`, which the policy
 * packs compile) does not reach the Kubernetes client library's types through it: for that one
 * import, compiling the k8s-rbac pack (`npm run policy:build`, and its typecheck) read 1,234 files
 * instead of 537 and took 8.7 s of CPU instead of 7.1 s (docs/performance.md, "`npm test` time").
 */

/** An object the pre-flight needs to exist, or reads. */
export interface ObjectRef {
    apiVersion: string;
    kind: string;
    /** The resource's plural (`secrets`, `namespaces`, `olmconfigs`). */
    plural: string;
    namespace?: string;
    name: string;
}

/** An object the stack needs but does not create, with the config path that names it and why it must exist. */
export interface RequiredObject {
    ref: ObjectRef;
    /** Config path (without namespace), e.g. `subscriptions.clusterBundles[0].entitlements[0]`. */
    path: string;
    /** Why the stack needs it, for the message. */
    why: string;
}
