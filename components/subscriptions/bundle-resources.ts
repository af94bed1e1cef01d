/**
 * The declared bundles as resources: the Bundle and ClusterBundle objects and, per ClusterBundle,
 * what the seed's controller would create (pre-flight reads, shares, the ClusterRole). A stack
 * has no controller, so Pulumi is it: the objects are declared once and kept as declared.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import {
    BundleDeclaration,
    bundleManifest,
    ClusterBundleDeclaration,
    clusterBundleManifest,
    ClusterBundleReference,
    clusterRoleManifest,
    referencesOf,
    requiredShareCrds,
    shareManifest,
} from "./bundles";

/**
 * Reads the share CRDs of the Shared Resource CSI driver, so a cluster without the driver fails
 * `pulumi preview` before anything is created. The Secrets and ConfigMaps the ClusterBundles
 * reference are not read here: index.ts checks they exist, by metadata only, before anything is
 * registered (`requiredObjectsOf`; a read would copy the entitlement keys into the state).
 * Without a live cluster (renderYamlToDirectory) nothing can be read: one warning, no reads.
 */
export interface PreflightReads {
    /** Every read: what must succeed before anything of the capability is created. */
    all: pulumi.Resource[];
}

export function preflightReads(cluster: ClusterTarget, clusterBundles: ClusterBundleDeclaration[], parent: pulumi.Resource): PreflightReads {
    const crds = requiredShareCrds(clusterBundles);
    if (crds.length === 0) {
        return { all: [] };
    }
    if (!cluster.live) {
        pulumi.log.warn(skippedWithoutCluster(`the pre-flight reads of the Shared Resource CSI driver's CRDs (${crds.join(", ")})`), parent);
        return { all: [] };
    }
    return { all: crds.map((crd) => k8s.apiextensions.v1.CustomResourceDefinition.get(`shared-resource-csi-driver/${crd}`, crd, { parent })) };
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
}

/**
 * One ClusterBundle, its shares and its ClusterRole. On a live cluster, shares and role carry an
 * ownerReference to the bundle (its uid is known once it exists), so Kubernetes deletes them with
 * it; rendered to a directory there is no uid to name, so there is no ownerReference.
 */
export function declareClusterBundle(
    cluster: ClusterTarget,
    declaration: ClusterBundleDeclaration,
    crd: pulumi.Resource,
    reads: pulumi.Resource[],
    parent: pulumi.Resource,
): DeclaredClusterBundle {
    const bundle = new k8s.apiextensions.CustomResource(`clusterbundle/${declaration.name}`, clusterBundleManifest(declaration), {
        parent,
        dependsOn: [crd, ...reads],
    });
    const uid = cluster.live ? uidOf(bundle) : undefined;
    const shares = referencesOf(declaration).map(
        (reference: ClusterBundleReference) =>
            new k8s.apiextensions.CustomResource(`share/${reference.share}`, shareManifest(reference, uid), {
                parent,
                dependsOn: reads,
            }),
    );
    const role = clusterRoleManifest(declaration, uid);
    const clusterRole = new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent });
    return { bundle, shares, clusterRole };
}

export function declareBundle(declaration: BundleDeclaration, crd: pulumi.Resource, parent: pulumi.Resource): k8s.apiextensions.CustomResource {
    return new k8s.apiextensions.CustomResource(`bundle/${declaration.namespace}/${declaration.name}`, bundleManifest(declaration), {
        parent,
        dependsOn: [crd],
    });
}
