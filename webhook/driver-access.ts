/**
 * One access rule for ClusterBundles: the Shared Resource CSI driver's. When a pod's CSI volume
 * names a share, the driver's node server asks a SubjectAccessReview before it mounts
 * (openshift/csi-driver-shared-resource pkg/csidriver/nodeserver.go `validateShare`, which calls
 * pkg/client/client.go `ExecuteSAR`): verb `use`, group `sharedresource.openshift.io`, resource
 * `sharedsecrets` or `sharedconfigmaps`, the share's name, namespace = the pod's namespace, user
 * `system:serviceaccount:<ns>:<sa>` and the single group `system:serviceaccounts`. It asks again
 * whenever the share or its source changes (pkg/csidriver/driver.go `innerShareUpdateRanger`).
 *
 * The webhook asks the same reviews for every share it would mount, plus the seed's own check
 * (seed 000, step 4: the service account may `get` the ClusterBundle) in the same shape, so a
 * RoleBinding in the pod's namespace counts for both and both see the same groups. The pod is
 * admitted to a ClusterBundle exactly when all of them are allowed: when the driver will mount it.
 */
import {
    CLUSTER_BUNDLE_PLURAL,
    SHARED_CONFIG_MAP_PLURAL,
    SHARED_RESOURCE_GROUP,
    SHARED_SECRET_PLURAL,
    SUBSCRIPTION_GROUP,
    SUBSCRIPTION_VERSION,
} from "./api";

/** One share a ClusterBundle mounts: its resource (the CSI volume attribute's kind) and name. */
export interface ShareRef {
    resource: typeof SHARED_SECRET_PLURAL | typeof SHARED_CONFIG_MAP_PLURAL;
    name: string;
}

/** The share resource behind each CSI volume attribute. */
export const SHARE_RESOURCES = { sharedSecret: SHARED_SECRET_PLURAL, sharedConfigMap: SHARED_CONFIG_MAP_PLURAL } as const;

/** The group the driver's review carries (and no other): pkg/client/client.go `ExecuteSAR`. */
export const DRIVER_REVIEW_GROUPS = ["system:serviceaccounts"];

export interface ResourceAttributes {
    namespace: string;
    verb: string;
    group: string;
    version?: string;
    resource: string;
    name: string;
}

/** A SubjectAccessReview `spec` (authorization.k8s.io/v1). */
export interface AccessReviewSpec {
    user: string;
    groups: string[];
    resourceAttributes: ResourceAttributes;
}

export interface PodIdentity {
    namespace: string;
    /** The service account's name. */
    name: string;
}

function reviewFor(pod: PodIdentity, attributes: Omit<ResourceAttributes, "namespace">): AccessReviewSpec {
    return {
        user: `system:serviceaccount:${pod.namespace}:${pod.name}`,
        groups: [...DRIVER_REVIEW_GROUPS],
        resourceAttributes: { namespace: pod.namespace, ...attributes },
    };
}

/** Exactly the review the driver sends before mounting `share` for a pod of this service account. */
export function driverAccessReview(pod: PodIdentity, share: ShareRef): AccessReviewSpec {
    return reviewFor(pod, { verb: "use", group: SHARED_RESOURCE_GROUP, resource: share.resource, name: share.name });
}

/** The webhook's reviews for one ClusterBundle: the seed's `get` on it, then the driver's review of each share. */
export function clusterBundleAccessReviews(pod: PodIdentity, clusterBundle: string, shares: readonly ShareRef[]): AccessReviewSpec[] {
    return [
        reviewFor(pod, {
            verb: "get",
            group: SUBSCRIPTION_GROUP,
            version: SUBSCRIPTION_VERSION,
            resource: CLUSTER_BUNDLE_PLURAL,
            name: clusterBundle,
        }),
        ...shares.map((share) => driverAccessReview(pod, share)),
    ];
}

/** What a denied review was about, for the denial's reason: `use sharedsecrets/x`. */
export function describeReview(spec: AccessReviewSpec): string {
    const { verb, resource, name } = spec.resourceAttributes;
    return `${verb} ${resource}/${name}`;
}
