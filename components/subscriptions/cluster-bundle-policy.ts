/**
 * Every ClusterBundle works, or is refused. A ClusterBundle does nothing by itself: its shares,
 * its ClusterRole and the driver's read access are what this stack declares from
 * `subscriptions.clusterBundles` (there is no controller). One created any other way would be
 * accepted and useless, and the webhook would inject volumes naming shares that do not exist.
 * So a ValidatingAdmissionPolicy refuses to create or update a ClusterBundle this stack does not
 * declare, with a message naming the config key.
 *
 * Why a policy, not a route in the webhook server: a ValidatingAdmissionPolicy is evaluated in the
 * API server itself ("a declarative, in-process alternative to validating admission webhooks",
 * https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/, stable in
 * Kubernetes 1.30, OpenShift 4.17). It has no server to be down, no certificate, no network path
 * and no failurePolicy trade-off for outages (failurePolicy only covers expression errors), and
 * the list of declared names changes atomically with the policy object, where a server would roll
 * its pods while the stack creates the new bundle. Deletion is never matched, so removing a bundle
 * from config, or `pulumi destroy`, always works; neither are updates to a ClusterBundle being
 * deleted (finalizers must be removable).
 */
import { CLUSTER_BUNDLE_KIND, CLUSTER_BUNDLE_PLURAL, SUBSCRIPTION_GROUP, SUBSCRIPTION_VERSION } from "../../webhook/api";
import { platformLabels } from "../shared/labels";

export const CLUSTER_BUNDLE_POLICY_NAME = "subscription-injection-managed-clusterbundles";

/** The config key an admin declares ClusterBundles in (named by the refusal). */
export const CLUSTER_BUNDLES_CONFIG_KEY = "cluster-platform:subscriptions.clusterBundles";

/** A CEL list literal of names (DNS-1123 subdomains, validated, so JSON quoting is CEL quoting). */
function celList(names: readonly string[]): string {
    return `[${[...names].sort().map((name) => JSON.stringify(name)).join(", ")}]`;
}

/** The ValidatingAdmissionPolicy and its binding (deny) for the declared ClusterBundle names. */
export function clusterBundlePolicyManifests(declared: readonly string[]) {
    const labels = platformLabels("subscriptions");
    const policy = {
        apiVersion: "admissionregistration.k8s.io/v1" as const,
        kind: "ValidatingAdmissionPolicy" as const,
        metadata: { name: CLUSTER_BUNDLE_POLICY_NAME, labels },
        spec: {
            failurePolicy: "Fail",
            matchConstraints: {
                resourceRules: [
                    { apiGroups: [SUBSCRIPTION_GROUP], apiVersions: [SUBSCRIPTION_VERSION], operations: ["CREATE", "UPDATE"], resources: [CLUSTER_BUNDLE_PLURAL] },
                ],
            },
            validations: [
                {
                    expression: `has(object.metadata.deletionTimestamp) || object.metadata.name in ${celList(declared)}`,
                    messageExpression: `'${CLUSTER_BUNDLE_KIND} ' + object.metadata.name + ' is not declared in ${CLUSTER_BUNDLES_CONFIG_KEY}; declare it there (the cluster-platform stack then creates its shares, its ClusterRole and the driver\\'s read access), a ${CLUSTER_BUNDLE_KIND} created any other way would mount nothing'`,
                    reason: "Invalid",
                },
            ],
        },
    };
    const binding = {
        apiVersion: "admissionregistration.k8s.io/v1" as const,
        kind: "ValidatingAdmissionPolicyBinding" as const,
        metadata: { name: CLUSTER_BUNDLE_POLICY_NAME, labels },
        spec: { policyName: CLUSTER_BUNDLE_POLICY_NAME, validationActions: ["Deny"] },
    };
    return { policy, binding };
}
