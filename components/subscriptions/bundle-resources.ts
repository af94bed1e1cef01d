/**
 * The declared bundles as resources: the Bundle and ClusterBundle objects and, per ClusterBundle,
 * what the seed's controller would create (pre-flight reads, shares, the ClusterRole). A stack
 * has no controller, so Pulumi is it: the objects are declared once and kept as declared.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { SHARED_RESOURCE_CSI_DRIVER } from "../../webhook/api";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import {
    BundleDeclaration,
    bundleManifest,
    ClusterBundleDeclaration,
    clusterBundleManifest,
    ClusterBundleReference,
    clusterRoleManifest,
    DriverServiceAccount,
    driverReadManifests,
    referencesOf,
    requiredShareCrds,
    shareManifest,
} from "./bundles";
import { aliasesOf, bundleResource, clusterBundleResource, driverObjectRead, driverReadResource, shareResource } from "./resource-names";

/**
 * The logical name of the read of the driver's CSIDriver object. A failed read's error names the
 * resource, so the name says how to get the driver: from OpenShift 4.18 the Builds for OpenShift
 * operator installs it; OpenShift 4.10-4.17 ship it as Tech Preview, enabled only by the
 * `TechPreviewNoUpgrade` feature set, which cannot be undone and blocks minor upgrades
 * (csi-driver-shared-resource README.md "Getting Started", docs/build-with-rhel-entitlements.md).
 * The CRDs alone prove nothing: they stay when the driver is removed.
 */
export const DRIVER_READ_NAME = `${driverObjectRead(SHARED_RESOURCE_CSI_DRIVER)} (OpenShift 4.18+: install the Builds for OpenShift operator; 4.10-4.17: featureSet TechPreviewNoUpgrade, irreversible)`;

/**
 * Reads the Shared Resource CSI driver's CSIDriver (is the driver installed?) and its share CRDs,
 * so a cluster without the driver fails `pulumi preview` before anything is created. The Secrets
 * and ConfigMaps the ClusterBundles reference are not read here: index.ts checks they exist, by
 * metadata only, before anything is registered (`requiredObjectsOf`; a read would copy the
 * entitlement keys into the state).
 * Without a live cluster (renderYamlToDirectory) nothing can be read: one warning, no reads.
 */
export interface PreflightReads {
    /** Every read: what must succeed before anything of the capability is created. */
    all: pulumi.Resource[];
}

export function preflightReads(
    cluster: ClusterTarget,
    clusterBundles: ClusterBundleDeclaration[],
    parent: pulumi.Resource,
): PreflightReads {
    const crds = requiredShareCrds(clusterBundles);
    if (crds.length === 0) {
        return { all: [] };
    }
    if (!cluster.live) {
        pulumi.log.warn(
            skippedWithoutCluster(
                `the pre-flight reads of the Shared Resource CSI driver (CSIDriver ${SHARED_RESOURCE_CSI_DRIVER}, CRDs ${crds.join(", ")})`,
            ),
            parent,
        );
        return { all: [] };
    }
    return {
        all: [
            k8s.storage.v1.CSIDriver.get(DRIVER_READ_NAME, SHARED_RESOURCE_CSI_DRIVER, { parent }),
            ...crds.map((crd) => k8s.apiextensions.v1.CustomResourceDefinition.get(driverObjectRead(crd), crd, { parent })),
        ],
    };
}

/**
 * The uid of a Kubernetes object, known only once the object exists: through its id, so a preview
 * that would create the object shows the uid as unknown rather than as missing.
 */
function uidOf(resource: k8s.apiextensions.CustomResource): pulumi.Output<string> {
    return pulumi.all([resource.id, resource.metadata]).apply(([, metadata]) => metadata.uid);
}

export interface DeclaredClusterBundle {
    bundle: k8s.apiextensions.CustomResource;
    shares: k8s.apiextensions.CustomResource[];
    clusterRole: k8s.rbac.v1.ClusterRole;
    /** Per share, the Role and RoleBinding that let the driver read its source object. */
    driverAccess: (k8s.rbac.v1.Role | k8s.rbac.v1.RoleBinding)[];
}

/**
 * One ClusterBundle, its shares and its ClusterRole. On a live cluster, shares and role carry an
 * ownerReference to the bundle (its uid is known once it exists), so Kubernetes deletes them with
 * it; rendered to a directory there is no uid to name, so there is no ownerReference.
 */
export function declareClusterBundle(
    cluster: ClusterTarget,
    declaration: ClusterBundleDeclaration,
    /** What the bundle object waits for: its CRD and the policy that admits it. */
    after: pulumi.Resource[],
    reads: pulumi.Resource[],
    driver: DriverServiceAccount,
    parent: pulumi.Resource,
): DeclaredClusterBundle {
    const bundleName = clusterBundleResource(declaration.name);
    const bundle = new k8s.apiextensions.CustomResource(bundleName.name, clusterBundleManifest(declaration), {
        parent,
        dependsOn: [...after, ...reads],
        ...aliasesOf(bundleName),
    });
    const uid = cluster.live ? uidOf(bundle) : undefined;
    const shares = referencesOf(declaration).map((reference: ClusterBundleReference) => {
        const shareName = shareResource(reference.share);
        return new k8s.apiextensions.CustomResource(shareName.name, shareManifest(reference, uid), {
            parent,
            dependsOn: reads,
            ...aliasesOf(shareName),
        });
    });
    const driverAccess = referencesOf(declaration).flatMap((reference) => {
        const { role, roleBinding } = driverReadManifests(reference, driver, uid);
        const { name } = driverReadResource(reference.ref.namespace, reference.share);
        const readRole = new k8s.rbac.v1.Role(name, role, { parent, dependsOn: reads });
        return [readRole, new k8s.rbac.v1.RoleBinding(name, roleBinding, { parent, dependsOn: [readRole] })];
    });
    const role = clusterRoleManifest(declaration, uid);
    const clusterRole = new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent });
    return { bundle, shares, clusterRole, driverAccess };
}

export function declareBundle(
    declaration: BundleDeclaration,
    crd: pulumi.Resource,
    parent: pulumi.Resource,
): k8s.apiextensions.CustomResource {
    const bundleName = bundleResource(declaration.namespace, declaration.name);
    return new k8s.apiextensions.CustomResource(bundleName.name, bundleManifest(declaration), {
        parent,
        dependsOn: [crd],
        ...aliasesOf(bundleName),
    });
}
