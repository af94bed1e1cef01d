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

/**
 * A read Secret's `data` and `stringData` are secret outputs already (the SDK's Secret class marks
 * them); its metadata is made secret too, because kubectl's last-applied-configuration annotation
 * holds a copy of the data when the Secret was created with `kubectl apply`.
 */
const SECRET_METADATA = ["metadata"];

/**
 * The logical name of the read of the driver's CSIDriver object. A failed read's error names the
 * resource, so the name says how to get the driver: from OpenShift 4.18 the Builds for OpenShift
 * operator installs it; OpenShift 4.10-4.17 ship it as Tech Preview, enabled only by the
 * `TechPreviewNoUpgrade` feature set, which cannot be undone and blocks minor upgrades
 * (csi-driver-shared-resource README.md "Getting Started", docs/build-with-rhel-entitlements.md).
 * The CRDs alone prove nothing: they stay when the driver is removed.
 */
export const DRIVER_READ_NAME = `shared-resource-csi-driver/${SHARED_RESOURCE_CSI_DRIVER} (OpenShift 4.18+: install the Builds for OpenShift operator; 4.10-4.17: featureSet TechPreviewNoUpgrade, irreversible)`;

/**
 * Reads every object the ClusterBundles reference, the Shared Resource CSI driver's CSIDriver
 * (is the driver installed?) and its share CRDs, so a missing one fails `pulumi preview` (the read's logical name says which bundle
 * needs which object) before anything is created. Values read from a Secret are Pulumi secrets.
 * Without a live cluster (renderYamlToDirectory) nothing can be read: one warning, no reads.
 */
export interface PreflightReads {
    /** Every read: what must succeed before anything of the capability is created. */
    all: pulumi.Resource[];
    /** The reads a ClusterBundle's shares need: the driver's CRDs and the bundle's own objects. */
    of(bundle: string): pulumi.Resource[];
}

export function preflightReads(cluster: ClusterTarget, clusterBundles: ClusterBundleDeclaration[], parent: pulumi.Resource): PreflightReads {
    const references = clusterBundles.flatMap(referencesOf);
    const crds = requiredShareCrds(clusterBundles);
    const none: PreflightReads = { all: [], of: () => [] };
    if (references.length === 0) {
        return none;
    }
    if (!cluster.live) {
        pulumi.log.warn(
            skippedWithoutCluster(
                `the pre-flight reads of ${references.length} Secrets/ConfigMaps referenced by ClusterBundles and of the Shared Resource CSI driver (CSIDriver ${SHARED_RESOURCE_CSI_DRIVER}, CRDs ${crds.join(", ")})`,
            ),
            parent,
        );
        return none;
    }
    const driver = [
        k8s.storage.v1.CSIDriver.get(DRIVER_READ_NAME, SHARED_RESOURCE_CSI_DRIVER, { parent }),
        ...crds.map((crd) => k8s.apiextensions.v1.CustomResourceDefinition.get(`shared-resource-csi-driver/${crd}`, crd, { parent })),
    ];
    const byBundle = new Map<string, pulumi.Resource[]>();
    for (const reference of references) {
        const id = `${reference.ref.namespace}/${reference.ref.name}`;
        const read =
            reference.kind === "Secret"
                ? k8s.core.v1.Secret.get(reference.readName, id, { parent, additionalSecretOutputs: SECRET_METADATA })
                : k8s.core.v1.ConfigMap.get(reference.readName, id, { parent });
        byBundle.set(reference.bundle, [...(byBundle.get(reference.bundle) ?? []), read]);
    }
    return {
        all: [...driver, ...[...byBundle.values()].flat()],
        of: (bundle) => [...driver, ...(byBundle.get(bundle) ?? [])],
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
 * One ClusterBundle, its shares and its ClusterRole. Shares and role carry an ownerReference to
 * the bundle (its uid is known once it exists), so Kubernetes deletes them with it.
 */
export function declareClusterBundle(
    declaration: ClusterBundleDeclaration,
    /** What the bundle object waits for: its CRD and the policy that admits it. */
    after: pulumi.Resource[],
    reads: pulumi.Resource[],
    driver: DriverServiceAccount,
    parent: pulumi.Resource,
): DeclaredClusterBundle {
    const bundle = new k8s.apiextensions.CustomResource(`clusterbundle/${declaration.name}`, clusterBundleManifest(declaration), {
        parent,
        dependsOn: [...after, ...reads],
    });
    const uid = uidOf(bundle);
    const shares = referencesOf(declaration).map(
        (reference: ClusterBundleReference) =>
            new k8s.apiextensions.CustomResource(`share/${reference.share}`, shareManifest(reference, uid), {
                parent,
                dependsOn: reads,
            }),
    );
    const driverAccess = referencesOf(declaration).flatMap((reference) => {
        const { role, roleBinding } = driverReadManifests(reference, driver, uid);
        const name = `${reference.ref.namespace}/${reference.share}`;
        const readRole = new k8s.rbac.v1.Role(`driver-read/${name}`, role, { parent, dependsOn: reads });
        return [readRole, new k8s.rbac.v1.RoleBinding(`driver-read/${name}`, roleBinding, { parent, dependsOn: [readRole] })];
    });
    const role = clusterRoleManifest(declaration, uid);
    const clusterRole = new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent });
    return { bundle, shares, clusterRole, driverAccess };
}

export function declareBundle(declaration: BundleDeclaration, crd: pulumi.Resource, parent: pulumi.Resource): k8s.apiextensions.CustomResource {
    return new k8s.apiextensions.CustomResource(`bundle/${declaration.namespace}/${declaration.name}`, bundleManifest(declaration), {
        parent,
        dependsOn: [crd],
    });
}
