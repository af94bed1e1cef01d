/**
 * What the declared bundles become (seed 000, "Subscription Cluster Bundle Controller"), as pure
 * data: the Bundle/ClusterBundle objects, and per ClusterBundle the objects that must exist, one share
 * per reference (pointing at the reference's copy in the source namespace), and the ClusterRole that
 * grants its use; the Shared Resource CSI driver's access to the copies, and what the source sync
 * copies. The component turns these into resources.
 *
 * No ownerReferences to the ClusterBundle (the seed's controller added them): the driver empties a
 * share's volumes in running pods when the share goes (pkg/csidriver/driver.go `shareDeleteRanger`),
 * so garbage-collecting shares with their bundle would take entitlements from running pods, which the
 * seed says deleting a ClusterBundle must not do. This stack deletes them itself, once no running pod
 * mounts them (running-pods.ts).
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
    sourceCopyName,
} from "../../webhook/api";
import type { ObjectReference } from "../../webhook/api";
import type { SourceObject } from "../../webhook/access";
import { platformLabels } from "../shared/labels";
import type { RequiredObject } from "../shared/object-refs";
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

/**
 * One share: the copy of the reference in the source namespace (never the original: the driver's
 * refresh informer lists the whole namespace it points at), named after the original.
 */
export function shareManifest(reference: ClusterBundleReference, sourceNamespace: string) {
    const kinds = SOURCE_KINDS[reference.source];
    const what = reference.source === "entitlements" ? "Entitlement keys" : "Yum repository definitions";
    return {
        apiVersion: SHARED_RESOURCE_API_VERSION,
        kind: kinds.share,
        metadata: { name: reference.share, labels: platformLabels("subscriptions") },
        spec: {
            [kinds.refField]: { name: sourceCopyName(reference.ref), namespace: sourceNamespace },
            description: `${what} of ClusterBundle ${reference.bundle}: a copy of ${reference.kind} ${reference.ref.namespace}/${reference.ref.name} (subscription injection)`,
        },
    };
}

/**
 * The ClusterRole `<bundle>-subscription-bundle`: get/list/watch on this ClusterBundle and `use`
 * on exactly its shares (what the Shared Resource CSI driver checks for the pod's service
 * account), aggregated into each role of `aggregateToClusterRoles`. `kept`: shares the bundle no
 * longer declares that running pods still mount (running-pods.ts), still usable until they end.
 */
export function clusterRoleManifest(bundle: ClusterBundleDeclaration, kept: readonly ClusterBundleReference[] = []) {
    const references = [...referencesOf(bundle), ...kept];
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
 * The driver's access to the copies: one Role and RoleBinding in the source namespace, letting its
 * service account `get` exactly the copies the shares point at (the mount reads its source by name,
 * pkg/csidriver/driver.go `mapBackingResourceToPod`; since BUILD-1545 a forbidden read fails the
 * mount) and `list, watch` the kinds there: with refresh on (the Builds for OpenShift default,
 * `refreshResources: true`) the driver opens a namespace-wide informer per source namespace and
 * waits for it in its share worker (pkg/controller/controller.go `RegisterSecretInformer` /
 * `RegisterConfigMapInformer`: `informers.WithNamespace(namespace)`, then `cache.WaitForCacheSync`).
 * That list carries no name field selector, and the RBAC authorizer matches resourceNames only
 * against a request's name (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`; a list
 * has one only when field-selected by metadata.name, staging/src/k8s.io/apiserver/pkg/endpoints/
 * request/requestinfo.go), so a by-name rule would leave the informer unsynced and wedge the share
 * worker. Hence the source namespace: it holds only copies of shared objects, so the namespace-wide
 * list reads nothing that is not shared. Upstream's own e2e grants the driver the same in the source
 * namespace (test/e2e/rbac_test.go: get/list/watch on secrets, no resourceNames).
 */
export function driverAccessManifests(
    sourceNamespace: string,
    references: readonly ClusterBundleReference[],
    driver: DriverServiceAccount,
) {
    const metadata = { name: DRIVER_ACCESS_NAME, namespace: sourceNamespace, labels: platformLabels("subscriptions") };
    const rules = (["Secret", "ConfigMap"] as const).flatMap((kind) => {
        const copies = [...new Set(references.filter((r) => r.kind === kind).map((r) => sourceCopyName(r.ref)))].sort();
        if (copies.length === 0) return [];
        const resource = kind === "Secret" ? "secrets" : "configmaps";
        return [
            { apiGroups: [""], resources: [resource], resourceNames: copies, verbs: ["get"] },
            { apiGroups: [""], resources: [resource], verbs: ["list", "watch"] },
        ];
    });
    const role = { apiVersion: "rbac.authorization.k8s.io/v1" as const, kind: "Role" as const, metadata, rules };
    const roleBinding = {
        apiVersion: "rbac.authorization.k8s.io/v1" as const,
        kind: "RoleBinding" as const,
        metadata,
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: DRIVER_ACCESS_NAME },
        subjects: [{ kind: "ServiceAccount", name: driver.name, namespace: driver.namespace }],
    };
    return { role, roleBinding };
}

/** The Role and RoleBinding in the source namespace that let the Shared Resource CSI driver read the copies. */
export const DRIVER_ACCESS_NAME = "subscription-shared-resource-driver";

/** What the source sync copies: each referenced object once, with every share that points at its copy. */
export function sourceObjectsOf(references: readonly ClusterBundleReference[]): SourceObject[] {
    const objects = new Map<string, SourceObject>();
    for (const reference of references) {
        const id = `${reference.kind}/${reference.ref.namespace}/${reference.ref.name}`;
        const known = objects.get(id) ?? { kind: reference.kind, namespace: reference.ref.namespace, name: reference.ref.name, shares: [] };
        if (!known.shares.includes(reference.share)) known.shares.push(reference.share);
        objects.set(id, known);
    }
    return [...objects.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([, object]) => ({ ...object, shares: [...object.shares].sort() }));
}
