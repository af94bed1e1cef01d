/**
 * The subscription injection API (seed 000): names shared by the admission server and by the
 * component that declares the CRDs, bundles and the webhook around it. Pure data, no imports,
 * so the server image carries nothing of Pulumi.
 */

export const SUBSCRIPTION_GROUP = "subscription.openshift.io";
export const SUBSCRIPTION_VERSION = "v1alpha1";
export const SUBSCRIPTION_API_VERSION = `${SUBSCRIPTION_GROUP}/${SUBSCRIPTION_VERSION}`;

export const BUNDLE_KIND = "Bundle";
export const BUNDLE_PLURAL = "bundles";
export const CLUSTER_BUNDLE_KIND = "ClusterBundle";
export const CLUSTER_BUNDLE_PLURAL = "clusterbundles";

/** Label that makes a bundle inject into every eligible pod (value "true"). */
export const ALWAYS_INJECT_LABEL = "subscription.openshift.io/always-inject";

/** Pod annotations read by the webhook. */
export const ANNOTATIONS = {
    injectBundle: "subscription.openshift.io/inject-bundle",
    injectClusterBundle: "subscription.openshift.io/inject-cluster-bundle",
    allowBundles: "subscription.openshift.io/allow-bundles",
    denyBundles: "subscription.openshift.io/deny-bundles",
    allowClusterBundles: "subscription.openshift.io/allow-cluster-bundles",
    denyClusterBundles: "subscription.openshift.io/deny-cluster-bundles",
    /** Written by the webhook: JSON `{"bundles": {name: generation}, "clusterBundles": {name: generation}}`. */
    bundleGenerations: "subscription.openshift.io/bundle-generations",
} as const;

/** Where entitlement keys and yum repository files appear in every container. */
export const ENTITLEMENT_MOUNT_PATH = "/run/secrets/etc-pki-entitlement";
export const YUM_REPOS_MOUNT_DIR = "/run/secrets";

/** The OpenShift Shared Resource CSI driver and its shares (sharedresource.openshift.io/v1alpha1). */
export const SHARED_RESOURCE_CSI_DRIVER = "csi.sharedresource.openshift.io";
export const SHARED_RESOURCE_GROUP = "sharedresource.openshift.io";
export const SHARED_RESOURCE_API_VERSION = `${SHARED_RESOURCE_GROUP}/v1alpha1`;
export const SHARED_SECRET_KIND = "SharedSecret";
export const SHARED_SECRET_PLURAL = "sharedsecrets";
export const SHARED_CONFIG_MAP_KIND = "SharedConfigMap";
export const SHARED_CONFIG_MAP_PLURAL = "sharedconfigmaps";

/** A reference from a bundle to a Secret or ConfigMap. */
export interface ObjectReference {
    name: string;
    /** Required for ClusterBundles; for Bundles, the bundle's own namespace. */
    namespace?: string;
}

export interface BundleSpec {
    entitlements: ObjectReference[];
    yumRepositories?: ObjectReference[];
}

export interface ClusterBundleSpec extends BundleSpec {
    /** Cluster roles the bundle's generated ClusterRole aggregates to. */
    aggregateToClusterRoles?: string[];
}

export interface BundleCondition {
    type: string;
    status: "True" | "False" | "Unknown";
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
}

export interface ClusterBundleStatus {
    conditions?: BundleCondition[];
    /** `<name>-subscription-bundle`. */
    clusterRole?: string;
    shares?: { name: string }[];
}

/** Names the cluster side generates for a ClusterBundle (and the webhook mounts). */
export function clusterBundleRoleName(bundle: string): string {
    return `${bundle}-subscription-bundle`;
}

/** Which list of a bundle a reference comes from: entitlement Secrets or yum repository ConfigMaps. */
export type BundleSource = "entitlements" | "yumRepositories";

const SHARE_INFIX: Record<BundleSource, string> = { entitlements: "entitlement", yumRepositories: "yum-repository" };

/**
 * The name of the cluster-scoped share (SharedSecret for entitlements, SharedConfigMap for yum
 * repositories) made for one reference of a ClusterBundle: `<bundle>-entitlement-<ns>-<name>` or
 * `<bundle>-yum-repository-<ns>-<name>`. Derived from the spec alone, so the webhook mounts the
 * same names the cluster side declares without waiting for a controller to write `status.shares`.
 */
export function clusterBundleShareName(bundle: string, source: BundleSource, ref: { name: string; namespace: string }): string {
    return `${bundle}-${SHARE_INFIX[source]}-${ref.namespace}-${ref.name}`;
}

/** How the webhook Deployment and the API server reach the admission server. */
export const WEBHOOK_SERVER = {
    /** The HTTPS port the server listens on (unprivileged, so the pod runs as non-root). */
    port: 8443,
    portName: "https",
    /** The mutating admission endpoint (AdmissionReview v1). */
    mutatePodsPath: "/mutate-pods",
    livenessPath: "/healthz",
    /** Ready only once the informer caches have synced. */
    readinessPath: "/readyz",
    metricsPath: "/metrics",
} as const;
