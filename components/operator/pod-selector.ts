/**
 * What selects one operator Deployment's pods: the CSV's `spec.selector.matchLabels` plus the
 * stack's `cluster-platform.io/deployment` label. OLM fronts a webhook with a Service whose
 * selector is the Deployment's `matchLabels` alone (operator-framework/operator-lifecycle-manager
 * `pkg/controller/install/certresources.go`, `installCertRequirementsForDeployment`:
 * `WithSelector(depSpec.Selector.MatchLabels)`); kubebuilder's `control-plane: controller-manager` is shared by
 * many operators, so in a shared namespace (`openshift-operators`) that Service also selects
 * other operators' pods, whose certificates name other Services. A Deployment's name is unique in
 * its namespace, so the added label makes the selector unique.
 *
 * The label goes on the pod template and the Service selector only; the Deployment's own
 * `spec.selector` stays the CSV's. A Deployment's selector is immutable under apps/v1
 * (kubernetes `pkg/registry/apps/deployment/strategy.go`, `ValidateUpdate`: "field is
 * immutable"), so changing it would make every existing operator Deployment a replacement
 * (pulumi-kubernetes `provider/pkg/provider/diff.go`, `forceNew`: a Deployment's `.spec.selector`), with its pods gone meanwhile; pod labels are
 * mutable, so adding one is a rolling update. The selector still matches the pods (a superset of
 * its labels), and the Deployment's ReplicaSets carry their own pod-template-hash, so the extra
 * label changes nothing in what the Deployment owns.
 */
import { DEPLOYMENT_LABEL } from "../shared/labels";
import { contentHash } from "./names";

/** A label value holds 63 characters; longer Deployment names are cut and given a hash of the whole. */
const MAX_LABEL_VALUE = 63;

export function deploymentLabelValue(deploymentName: string): string {
    if (deploymentName.length <= MAX_LABEL_VALUE) {
        return deploymentName;
    }
    const hash = contentHash(deploymentName, 10);
    return `${deploymentName.slice(0, MAX_LABEL_VALUE - hash.length - 1).replace(/[.-]+$/, "")}-${hash}`;
}

/** The pod template's selected labels and the Service selector: the CSV's matchLabels and the Deployment's own label. */
export function podSelectorOf(deploymentName: string, matchLabels: Readonly<Record<string, string>>): Record<string, string> {
    return { ...matchLabels, [DEPLOYMENT_LABEL]: deploymentLabelValue(deploymentName) };
}
