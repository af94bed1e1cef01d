/**
 * Labels and annotations every generated Kubernetes object carries, from one place, so
 * that names and provenance are predictable across capabilities (and policy can rely on them).
 */

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_VALUE = "cluster-platform";
export const PART_OF_LABEL = "app.kubernetes.io/part-of";
/** Names the capability (certificates, operator, subscriptions, aws-tags...) that made an object. */
export const CAPABILITY_LABEL = "cluster-platform.io/capability";
/** Names the rule or toggle that produced a generated object (e.g. an RBAC promotion). */
export const GENERATED_BY_LABEL = "cluster-platform.io/generated-by";
/** Names the operator install (`operators[].name`) an object belongs to. */
export const OPERATOR_LABEL = "cluster-platform.io/operator";
/**
 * Added to an operator Deployment's selector and pod template, and to its Service's selector, so
 * that the Service selects that Deployment's pods only: CSV selectors such as kubebuilder's
 * `control-plane: controller-manager` are shared by many operators in one namespace.
 */
export const DEPLOYMENT_LABEL = "cluster-platform.io/deployment";

export type Capability =
    "certificates" | "admission-webhook" | "operator" | "olm-rbac" | "subscriptions" | "aws-tags" | "webhook-image" | "reconcile";

/** The labels of an object made by `capability`, plus any extra ones. */
export function platformLabels(capability: Capability, extra: Record<string, string> = {}): Record<string, string> {
    return {
        [MANAGED_BY_LABEL]: MANAGED_BY_VALUE,
        [PART_OF_LABEL]: MANAGED_BY_VALUE,
        [CAPABILITY_LABEL]: capability,
        ...extra,
    };
}
