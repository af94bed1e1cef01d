/**
 * What the declared bundles become (seed 000, "Subscription Cluster Bundle Controller"), as pure
 * data: the Bundle/ClusterBundle objects, and per ClusterBundle the objects that must exist, one share
 * per reference, and the ClusterRole that grants its use. The component turns these into
 * resources; the owner's uid is a type parameter because it is only known once the ClusterBundle
 * exists (an Output in the component, a string in tests).
 */
import {
    ALWAYS_INJECT_LABEL,
    BUNDLE_KIND,
    CLUSTER_BUNDLE_KIND,
    CLUSTER_BUNDLE_PLURAL,
    clusterBundleRoleName,
    clusterBundleShareName,
    SHARED_CONFIG_MAP_KIND,
    SHARED_CONFIG_MAP_PLURAL,
    SHARED_RESOURCE_API_VERSION,
    SHARED_RESOURCE_GROUP,
    SHARED_SECRET_KIND,
    SHARED_SECRET_PLURAL,
    SUBSCRIPTION_API_VERSION,
    SUBSCRIPTION_GROUP,
} from "../../webhook/api";
import type { ObjectReference } from "../../webhook/api";
import { platformLabels } from "../shared/labels";
import type { RequiredObject } from "../shared/object-presence";
import { formatPath } from "../shared/problems";
import { aggregationLabel, BundleSource, SHARE_ROLES } from "./rules";

/** A validated reference to a Secret or ConfigMap: the API's reference (webhook/api.ts) with its namespace resolved. */
type SourceRef = Required<ObjectReference>;

/** A ClusterBundle as declared in `subscriptions.clusterBundles[]` (validated). */
export interface ClusterBundleDeclaration {
    name: string;
    alwaysInject: boolean;
    entitlements: SourceRef[];
    yumRepositories: SourceRef[];
    aggregateToClusterRoles: string[];
}

/** A Bundle as declared in `subscriptions.bundles[]` (validated; references may omit the namespace). */
export interface BundleDeclaration {
    name: string;
    namespace: string;
    alwaysInject: boolean;
    entitlements: { name: string; namespace?: string }[];
    yumRepositories: { name: string; namespace?: string }[];
}

const SOURCES: readonly BundleSource[] = ["entitlements", "yumRepositories"];

/** Per source: the kind it references and the share kind that exposes it. */
export const SOURCE_KINDS = {
    entitlements: {
        object: "Secret",
        role: SHARE_ROLES.entitlements,
        share: SHARED_SECRET_KIND,
        plural: SHARED_SECRET_PLURAL,
        refField: "secretRef",
    },
    yumRepositories: {
        object: "ConfigMap",
        role: SHARE_ROLES.yumRepositories,
        share: SHARED_CONFIG_MAP_KIND,
        plural: SHARED_CONFIG_MAP_PLURAL,
        refField: "configMapRef",
    },
} as const;

function bundleLabels(alwaysInject: boolean): Record<string, string> {
    return platformLabels("subscriptions", alwaysInject ? { [ALWAYS_INJECT_LABEL]: "true" } : {});
}

/** `spec` lists as the API carries them: yumRepositories only when there are any. */
function specLists<R>(entitlements: R[], yumRepositories: R[]): { entitlements: R[]; yumRepositories?: R[] } {
    return yumRepositories.length > 0 ? { entitlements, yumRepositories } : { entitlements };
}

export function clusterBundleManifest(bundle: ClusterBundleDeclaration) {
    return {
        apiVersion: SUBSCRIPTION_API_VERSION,
        kind: CLUSTER_BUNDLE_KIND,
        metadata: { name: bundle.name, labels: bundleLabels(bundle.alwaysInject) },
        spec: {
            ...(bundle.aggregateToClusterRoles.length > 0 ? { aggregateToClusterRoles: bundle.aggregateToClusterRoles } : {}),
            ...specLists(bundle.entitlements, bundle.yumRepositories),
        },
    };
}

/** A Bundle; references are written with their (own) namespace, so the object says exactly what it mounts. */
export function bundleManifest(bundle: BundleDeclaration) {
    const local = (refs: { name: string }[]): SourceRef[] => refs.map((r) => ({ name: r.name, namespace: bundle.namespace }));
    return {
        apiVersion: SUBSCRIPTION_API_VERSION,
        kind: BUNDLE_KIND,
        metadata: { name: bundle.name, namespace: bundle.namespace, labels: bundleLabels(bundle.alwaysInject) },
        spec: specLists(local(bundle.entitlements), local(bundle.yumRepositories)),
    };
}

/** One referenced Secret or ConfigMap of a ClusterBundle, with everything generated for it. */
export interface ClusterBundleReference {
    bundle: string;
    source: BundleSource;
    /** `Secret` or `ConfigMap`. */
    kind: "Secret" | "ConfigMap";
    ref: SourceRef;
    /** The share's name (cluster-scoped). */
    share: string;
}

export function referencesOf(bundle: ClusterBundleDeclaration): ClusterBundleReference[] {
    return SOURCES.flatMap((source) =>
        bundle[source].map((ref) => {
            const kind = SOURCE_KINDS[source].object;
            return {
                bundle: bundle.name,
                source,
                kind,
                ref,
                share: clusterBundleShareName(bundle.name, SOURCE_KINDS[source].role, ref),
            };
        }),
    );
}

/** Makes an object a dependent of its ClusterBundle, so garbage collection deletes it with the bundle. */
export function ownerReferenceTo<U>(bundle: string, uid: U) {
    return { apiVersion: SUBSCRIPTION_API_VERSION, kind: CLUSTER_BUNDLE_KIND, name: bundle, uid, controller: true };
}

/**
 * `ownerReferences` to the ClusterBundle, or nothing when its uid cannot be known: the API server
 * rejects an ownerReference without a uid (`uid` is required in metav1.OwnerReference), and a
 * manifest rendered to a directory (`cluster.renderYamlToDirectory`) is written before its owner
 * exists, so there it is omitted (docs/subscriptions.md's ClusterBundle section says what that costs).
 */
function ownedBy<U>(bundle: string, uid: U | undefined): { ownerReferences?: ReturnType<typeof ownerReferenceTo<U>>[] } {
    return uid === undefined ? {} : { ownerReferences: [ownerReferenceTo(bundle, uid)] };
}

export function shareManifest<U>(reference: ClusterBundleReference, ownerUid: U | undefined) {
    const kinds = SOURCE_KINDS[reference.source];
    const what = reference.source === "entitlements" ? "Entitlement keys" : "Yum repository definitions";
    return {
        apiVersion: SHARED_RESOURCE_API_VERSION,
        kind: kinds.share,
        metadata: {
            name: reference.share,
            labels: platformLabels("subscriptions"),
            ...ownedBy(reference.bundle, ownerUid),
        },
        spec: {
            [kinds.refField]: { name: reference.ref.name, namespace: reference.ref.namespace },
            description: `${what} of ClusterBundle ${reference.bundle} (subscription injection)`,
        },
    };
}

/**
 * The ClusterRole `<bundle>-subscription-bundle`: get/list/watch on this ClusterBundle and `use`
 * on exactly its shares (what the Shared Resource CSI driver checks for the pod's service
 * account), aggregated into each role of `aggregateToClusterRoles`.
 */
export function clusterRoleManifest<U>(bundle: ClusterBundleDeclaration, ownerUid: U | undefined) {
    const references = referencesOf(bundle);
    const useRules = SOURCES.map((source) => ({
        plural: SOURCE_KINDS[source].plural,
        names: references
            .filter((r) => r.source === source)
            .map((r) => r.share)
            .sort(),
    }))
        .filter((rule) => rule.names.length > 0)
        .map((rule) => ({ apiGroups: [SHARED_RESOURCE_GROUP], resources: [rule.plural], resourceNames: rule.names, verbs: ["use"] }));
    const aggregation = Object.fromEntries([...bundle.aggregateToClusterRoles].sort().map((role) => [aggregationLabel(role), "true"]));
    return {
        apiVersion: "rbac.authorization.k8s.io/v1" as const,
        kind: "ClusterRole" as const,
        metadata: {
            name: clusterBundleRoleName(bundle.name),
            labels: platformLabels("subscriptions", aggregation),
            ...ownedBy(bundle.name, ownerUid),
        },
        rules: [
            {
                apiGroups: [SUBSCRIPTION_GROUP],
                resources: [CLUSTER_BUNDLE_PLURAL],
                resourceNames: [bundle.name],
                verbs: ["get", "list", "watch"],
            },
            ...useRules,
        ],
    };
}

/** The share CRDs the ClusterBundles need (the Shared Resource CSI driver provides them), by name. */
export function requiredShareCrds(bundles: ClusterBundleDeclaration[]): string[] {
    return SOURCES.filter((source) => bundles.some((b) => b[source].length > 0)).map(
        (source) => `${SOURCE_KINDS[source].plural}.${SHARED_RESOURCE_GROUP}`,
    );
}

/**
 * The Secrets and ConfigMaps the ClusterBundles share, which the stack never creates: the
 * pre-flight checks that each exists, by metadata only, so no entitlement key enters the state
 * (components/shared/object-presence.ts).
 */
export function requiredObjectsOf(bundles: readonly ClusterBundleDeclaration[]): RequiredObject[] {
    return bundles.flatMap((bundle, i) =>
        SOURCES.flatMap((source) =>
            bundle[source].map((ref, j) => {
                const kind = SOURCE_KINDS[source].object;
                return {
                    ref: { apiVersion: "v1", kind, plural: `${kind.toLowerCase()}s`, namespace: ref.namespace, name: ref.name },
                    path: formatPath(["subscriptions", "clusterBundles", i, source, j]),
                    why: `ClusterBundle ${JSON.stringify(bundle.name)} shares it (${SOURCE_KINDS[source].share} ${clusterBundleShareName(bundle.name, SOURCE_KINDS[source].role, ref)}); create it first`,
                };
            }),
        ),
    );
}

/** The Shared Resource CSI driver's service account (`subscriptions.sharedResourceDriver.serviceAccount`). */
export interface DriverServiceAccount {
    name: string;
    namespace: string;
}

/**
 * The driver reads each shared Secret/ConfigMap with its own service account, and needs a Role
 * and RoleBinding in the source namespace for it (openshift/csi-driver-shared-resource README.md,
 * "How To Use" step 3). Two rules:
 * - `get` on exactly that object: the mount reads it by name (pkg/csidriver/driver.go
 *   `mapBackingResourceToPod`; since BUILD-1545 a forbidden read fails the mount);
 * - `list` and `watch` of that kind in the namespace, without resourceNames: with refresh on (the
 *   Builds for OpenShift default, `refreshResources: true`) the driver opens a namespace-wide
 *   informer per source namespace and waits for it to sync inside its share worker
 *   (pkg/controller/controller.go `RegisterSecretInformer` / `RegisterConfigMapInformer`:
 *   `informers.WithNamespace(namespace)`, then `cache.WaitForCacheSync`). That list carries no
 *   name field selector, and the RBAC authorizer matches resourceNames only against a request's
 *   name (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`; a list has a name
 *   only when field-selected by metadata.name, staging/src/k8s.io/apiserver/pkg/endpoints/request/
 *   requestinfo.go), so a resourceNames rule would leave the informer unsynced forever and wedge
 *   the share worker. Upstream's own e2e grants the driver exactly this in the source namespace
 *   (test/e2e/rbac_test.go: get/list/watch on secrets, no resourceNames).
 * The driver stores what it lists in memory; the stack never reads the values. Both objects are
 * named after the share (unique in the cluster) and owned by the ClusterBundle, like the share.
 */
export function driverReadManifests<U>(reference: ClusterBundleReference, driver: DriverServiceAccount, ownerUid: U | undefined) {
    const metadata = {
        name: reference.share,
        namespace: reference.ref.namespace,
        labels: platformLabels("subscriptions"),
        ...ownedBy(reference.bundle, ownerUid),
    };
    const resource = reference.kind === "Secret" ? "secrets" : "configmaps";
    const role = {
        apiVersion: "rbac.authorization.k8s.io/v1" as const,
        kind: "Role" as const,
        metadata,
        rules: [
            { apiGroups: [""], resources: [resource], resourceNames: [reference.ref.name], verbs: ["get"] },
            { apiGroups: [""], resources: [resource], verbs: ["list", "watch"] },
        ],
    };
    const roleBinding = {
        apiVersion: "rbac.authorization.k8s.io/v1" as const,
        kind: "RoleBinding" as const,
        metadata,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: reference.share },
        subjects: [{ kind: "ServiceAccount", name: driver.name, namespace: driver.namespace }],
    };
    return { role, roleBinding };
}
