/**
 * The declared bundles as resources: the Bundle and ClusterBundle objects and, per ClusterBundle,
 * what the seed's controller would create (pre-flight reads, shares, the ClusterRole), plus the
 * shares running pods still mount after their bundle or reference went (running-pods.ts). A stack
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
    referencesOf,
    requiredShareCrds,
    shareManifest,
} from "./bundles";
import type { KeptShare } from "./running-pods";
import { aliasesOf, bundleResource, clusterBundleResource, driverObjectRead, shareResource } from "./resource-names";

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

export interface DeclaredClusterBundle {
    /** Undefined for a removed bundle whose shares are kept. */
    bundle?: k8s.apiextensions.CustomResource;
    shares: k8s.apiextensions.CustomResource[];
    clusterRole: k8s.rbac.v1.ClusterRole;
}

/** The shares of these references, each pointing at its copy in the source namespace. */
function declareShares(
    references: readonly ClusterBundleReference[],
    sourceNamespace: string,
    dependsOn: pulumi.Resource[],
    parent: pulumi.Resource,
): k8s.apiextensions.CustomResource[] {
    return references.map((reference) => {
        const shareName = shareResource(reference.share);
        return new k8s.apiextensions.CustomResource(shareName.name, shareManifest(reference, sourceNamespace), {
            parent,
            dependsOn,
            ...aliasesOf(shareName),
        });
    });
}

/**
 * One ClusterBundle, its shares (with those of its former references that running pods still
 * mount, `kept`) and its ClusterRole.
 */
export function declareClusterBundle(
    declaration: ClusterBundleDeclaration,
    /** What the bundle object waits for: its CRD and the policy that admits it. */
    after: pulumi.Resource[],
    reads: pulumi.Resource[],
    kept: readonly KeptShare[],
    sourceNamespace: string,
    parent: pulumi.Resource,
): DeclaredClusterBundle {
    const bundleName = clusterBundleResource(declaration.name);
    const bundle = new k8s.apiextensions.CustomResource(bundleName.name, clusterBundleManifest(declaration), {
        parent,
        dependsOn: [...after, ...reads],
        ...aliasesOf(bundleName),
    });
    const references = kept.map((share) => share.reference);
    const shares = declareShares([...referencesOf(declaration), ...references], sourceNamespace, reads, parent);
    const role = clusterRoleManifest(declaration, references);
    const clusterRole = new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent });
    return { bundle, shares, clusterRole };
}

/**
 * A ClusterBundle removed from config whose shares running pods still mount: no bundle object (new
 * pods cannot ask for it), its kept shares, and its ClusterRole as it was (the roles it aggregated
 * to, `use` on the kept shares), so those pods' service accounts keep `use` when the driver checks again.
 */
export function declareKeptShares(
    bundle: string,
    kept: readonly KeptShare[],
    sourceNamespace: string,
    parent: pulumi.Resource,
): DeclaredClusterBundle {
    const references = kept.map((share) => share.reference);
    const shares = declareShares(references, sourceNamespace, [], parent);
    const former: ClusterBundleDeclaration = {
        name: bundle,
        alwaysInject: false,
        entitlements: [],
        yumRepositories: [],
        aggregateToClusterRoles: kept[0]?.roles ?? [],
    };
    const role = clusterRoleManifest(former, references);
    return { shares, clusterRole: new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent }) };
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
