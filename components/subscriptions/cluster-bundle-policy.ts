/**
 * Every ClusterBundle works, or is refused. A ClusterBundle does nothing by itself: its shares,
 * its ClusterRole and the driver's read access are what this stack declares from
 * `subscriptions.clusterBundles` (there is no controller). One created any other way would be
 * accepted and useless, and the webhook would inject volumes naming shares that do not exist.
 * So a ValidatingAdmissionPolicy refuses to create or update a ClusterBundle that does not carry
 * the labels this stack puts on the ones it declares, with a message naming the config key.
 *
 * Why a policy, not a route in the webhook server: a ValidatingAdmissionPolicy is evaluated in the
 * API server itself ("a declarative, in-process alternative to validating admission webhooks",
 * https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/, stable in
 * Kubernetes 1.30, OpenShift 4.17): no server to be down, no certificate, no network path, and
 * failurePolicy only covers expression errors.
 *
 * Why the stack's labels, not a list of declared names: a list would change with the config, and
 * the API server applies policy changes eventually (its policy informers), so the stack's create
 * right after widening the list could be judged by the old one; and `pulumi preview` creates new
 * objects as a server-side dry run (pulumi-kubernetes provider/pkg/await/await.go `Creation`,
 * `DryRunAll`), which the old list would always refuse. This policy never changes. It is a guard
 * against the useless ClusterBundle, not a security boundary: whoever may create ClusterBundles
 * can copy the labels (and a cluster admin can delete the policy).
 *
 * Deletion is never matched, nor updates of a ClusterBundle being deleted (finalizers stay
 * removable), so removing a bundle from config, or `pulumi destroy`, always works.
 */
import { CLUSTER_BUNDLE_KIND, CLUSTER_BUNDLE_PLURAL, SUBSCRIPTION_GROUP, SUBSCRIPTION_VERSION } from "../../webhook/api";
import { CAPABILITY_LABEL, MANAGED_BY_LABEL, MANAGED_BY_VALUE, platformLabels } from "../shared/labels";

export const CLUSTER_BUNDLE_POLICY_NAME = "subscription-injection-managed-clusterbundles";

/** The config key an admin declares ClusterBundles in (named by the refusal). */
export const CLUSTER_BUNDLES_CONFIG_KEY = "cluster-platform:subscriptions.clusterBundles";

/** The labels that mark a ClusterBundle this stack declared (a subset of platformLabels("subscriptions")). */
export const MANAGED_CLUSTER_BUNDLE_LABELS: Record<string, string> = {
    [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
    [CAPABILITY_LABEL]: "subscriptions",
};

/** `labels` has every one of `required` (missing keys short-circuit, never an evaluation error). */
function celHasLabels(required: Record<string, string>): string {
    const checks = Object.entries(required).map(
        ([key, value]) =>
            `${JSON.stringify(key)} in object.metadata.labels && object.metadata.labels[${JSON.stringify(key)}] == ${JSON.stringify(value)}`,
    );
    return `(has(object.metadata.labels) && ${checks.join(" && ")})`;
}

/**
 * The ValidatingAdmissionPolicy and its binding (deny), at the version the cluster serves
 * (cluster-apis.ts): v1beta1 has the same fields this policy uses (kubernetes
 * staging/src/k8s.io/api/admissionregistration/v1beta1/types.go: matchConstraints, validations
 * with messageExpression and reason, failurePolicy, validationActions).
 */
export function clusterBundlePolicyManifests(version: "v1" | "v1beta1" = "v1") {
    const labels = platformLabels("subscriptions");
    const policy = {
        apiVersion: `admissionregistration.k8s.io/${version}` as const,
        kind: "ValidatingAdmissionPolicy" as const,
        metadata: { name: CLUSTER_BUNDLE_POLICY_NAME, labels },
        spec: {
            failurePolicy: "Fail",
            matchConstraints: {
                resourceRules: [
                    {
                        apiGroups: [SUBSCRIPTION_GROUP],
                        apiVersions: [SUBSCRIPTION_VERSION],
                        operations: ["CREATE", "UPDATE"],
                        resources: [CLUSTER_BUNDLE_PLURAL],
                    },
                ],
            },
            validations: [
                {
                    expression: `has(object.metadata.deletionTimestamp) || ${celHasLabels(MANAGED_CLUSTER_BUNDLE_LABELS)}`,
                    messageExpression: `'${CLUSTER_BUNDLE_KIND} ' + object.metadata.name + ' is not managed by cluster-platform: declare it in ${CLUSTER_BUNDLES_CONFIG_KEY} (the stack then creates it with its shares, its ClusterRole and the driver\\'s read access); a ${CLUSTER_BUNDLE_KIND} created any other way would mount nothing'`,
                    reason: "Invalid",
                },
            ],
        },
    };
    const binding = {
        apiVersion: `admissionregistration.k8s.io/${version}` as const,
        kind: "ValidatingAdmissionPolicyBinding" as const,
        metadata: { name: CLUSTER_BUNDLE_POLICY_NAME, labels },
        spec: { policyName: CLUSTER_BUNDLE_POLICY_NAME, validationActions: ["Deny"] },
    };
    return { policy, binding };
}
