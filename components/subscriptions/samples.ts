/**
 * The OpenShift console samples of seed 000 ("Installation and Setup"), corrected to the API's
 * real version (v1alpha1; the seed's samples say v1, which no CRD serves).
 */
import { stringify } from "yaml";
import { ANNOTATIONS, BUNDLE_KIND, CLUSTER_BUNDLE_KIND, clusterBundleRoleName, SUBSCRIPTION_API_VERSION } from "../../webhook/api";
import { platformLabels } from "../shared/labels";
import { CLUSTER_BUNDLES_CONFIG_KEY } from "./cluster-bundle-policy";

/**
 * The namespace OpenShift keeps the cluster's entitlement Secret `etc-pki-entitlement` in: the
 * Insights operator writes it there from Simple Content Access (openshift/insights-operator
 * pkg/ocm/sca/sca.go: `targetNamespaceName = "openshift-config-managed"`). The seed's sample said
 * `openshift-config`, where no such Secret exists.
 */
export const ENTITLEMENT_NAMESPACE = "openshift-config-managed";

/**
 * The seed's example ClusterBundle: the cluster's entitlement, for holders of `edit` or `admin`.
 * Only declared ClusterBundles are admitted (cluster-bundle-policy.ts), so the sample's
 * description sends admins to the config key instead of inviting `oc create`.
 */
export const CLUSTER_BUNDLE_SAMPLE = {
    apiVersion: SUBSCRIPTION_API_VERSION,
    kind: CLUSTER_BUNDLE_KIND,
    metadata: { name: "cluster" },
    spec: {
        aggregateToClusterRoles: ["edit", "admin"],
        entitlements: [{ name: "etc-pki-entitlement", namespace: ENTITLEMENT_NAMESPACE }],
    },
};

/** The seed's example Bundle: the namespace's own entitlement Secret. */
export const BUNDLE_SAMPLE = {
    apiVersion: SUBSCRIPTION_API_VERSION,
    kind: BUNDLE_KIND,
    metadata: { name: "subscription" },
    spec: { entitlements: [{ name: "etc-pki-entitlement" }] },
};

export function consoleYamlSampleManifests() {
    const sample = (name: string, kind: string, title: string, description: string, object: object) => ({
        apiVersion: "console.openshift.io/v1",
        kind: "ConsoleYAMLSample",
        metadata: { name, labels: platformLabels("subscriptions") },
        spec: {
            targetResource: { apiVersion: SUBSCRIPTION_API_VERSION, kind },
            title,
            description,
            yaml: stringify(object),
        },
    });
    return [
        sample(
            "subscription-cluster-bundle-example",
            CLUSTER_BUNDLE_KIND,
            "Cluster-wide subscription bundle example",
            `What a cluster-wide subscription bundle looks like. ClusterBundles are declared in the cluster-platform stack's config (\`${CLUSTER_BUNDLES_CONFIG_KEY}\`), which also creates their shares, ClusterRole and driver access; creating one here is refused. Once declared, it is injected into any workload that has the \`${ANNOTATIONS.injectClusterBundle}: cluster\` annotation in its pod spec and whose service account has the \`edit\` or \`admin\` role in its namespace (through the aggregated ClusterRole \`${clusterBundleRoleName("cluster")}\`).`,
            CLUSTER_BUNDLE_SAMPLE,
        ),
        sample(
            "subscription-namespaced-bundle-example",
            BUNDLE_KIND,
            "Namespaced subscription bundle example",
            `An example of a subscription bundle that can be injected into any workload in the bundle's namespace that has the \`${ANNOTATIONS.injectBundle}: subscription\` annotation in its pod spec.`,
            BUNDLE_SAMPLE,
        ),
    ];
}
