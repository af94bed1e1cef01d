/**
 * The subscription injection API (seed 000): names shared by the admission server and by the
 * component that declares the CRDs, bundles and the webhook around it. Pure data and pure
 * functions (it imports only the name rules beside it), so the server image carries nothing of Pulumi.
 */
import { fingerprintedName } from "../components/shared/k8s-names";

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

/**
 * Where the server reads its serving certificate by default: the first of the admission-webhook
 * contract's WEBHOOK_CERT_MOUNT_PATHS (OLM's path; a test keeps the two equal).
 */
export const WEBHOOK_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs";

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

/** What a ClusterBundle share exposes: an entitlement Secret or a yum repository ConfigMap. */
export type ShareRole = "entitlement" | "yum-repo";

/**
 * Name of the cluster-scoped share (SharedSecret for entitlements, SharedConfigMap for yum
 * repositories) declared for one reference of a ClusterBundle: `<bundle>-<role>-<ref name>-<hash>`.
 * The fingerprint covers bundle, role, namespace and name, so two references never share a name
 * even when cut to the 253-character limit. The cluster side declares shares with these names and
 * the webhook mounts them, so both sides must call this one function.
 */
export function clusterBundleShareName(bundle: string, role: ShareRole, ref: Required<ObjectReference>): string {
    return fingerprintedName(`${bundle}-${role}-${ref.name}`, `${bundle}\n${role}\n${ref.namespace}\n${ref.name}`, 253);
}

/**
 * The source namespace: every Secret and ConfigMap a ClusterBundle shares reaches the Shared
 * Resource CSI driver through a copy there, never from where it lives. With refresh on, the driver
 * lists and watches every object of each share's source namespace (openshift/csi-driver-shared-resource
 * pkg/controller/controller.go `RegisterSecretInformer`: `informers.WithNamespace(namespace)`), so a
 * share of `openshift-config-managed/etc-pki-entitlement` itself would let the driver read every
 * Secret of that namespace. The source sync (webhook/source-sync.ts) keeps the copies equal to their
 * originals, reading each original by name only; the namespace holds nothing else the stack puts there.
 */
export const DEFAULT_SOURCE_NAMESPACE = "subscription-sources";

/**
 * The name of the copy of `<namespace>/<name>` in the source namespace: `<namespace>.<name>`, unique
 * because a namespace name has no dot; when that passes 253 characters, cut and fingerprinted. The
 * stack (shares, RBAC), the source sync and the webhook all call this one function.
 */
export function sourceCopyName(ref: Required<ObjectReference>): string {
    const plain = `${ref.namespace}.${ref.name}`;
    return plain.length <= 253 ? plain : fingerprintedName(plain, `${ref.namespace}\n${ref.name}`, 253);
}

/** Annotation on a copy naming its original: `Secret openshift-config-managed/etc-pki-entitlement`. */
export const SOURCE_COPY_OF_ANNOTATION = "subscription.openshift.io/copy-of";

/**
 * How the webhook Deployment and the API server reach the admission server: its default port
 * (unprivileged, so the pod runs as non-root) and its routes. The server and the Deployment both
 * read these, so they cannot drift apart.
 */
export const WEBHOOK_SERVER = {
    port: 9443,
    portName: "https",
    /** The mutating admission endpoint (AdmissionReview v1). */
    mutatePodsPath: "/mutate-pods",
    livenessPath: "/healthz",
    /** Ready only once the informer caches have synced. */
    readinessPath: "/readyz",
    metricsPath: "/metrics",
} as const;

/**
 * Process settings the webhook container runs with, beside its configuration; the Deployment
 * (components/subscriptions/webhook.ts) and `npm run bench:scale` both set exactly these.
 *
 * `MALLOC_MMAP_THRESHOLD_=65536`: Node reads every socket into a fresh 64 KiB buffer from the C heap,
 * freed only when V8 collects its Buffer. Listing 10,000 entitlement Secrets (80 MB) piles them up
 * between collections, and glibc's heap, fragmented by what else was allocated meanwhile, stays at
 * its high mark: 20 MiB after the list against 6 MiB without teams. At this threshold each such
 * buffer is its own mapping, returned when freed: 10 MiB. Measured against no teams in the same
 * configuration (docs/subscriptions.md "Scale"). A base image on another C library ignores it.
 */
export const WEBHOOK_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: "65536" };
