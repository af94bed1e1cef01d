/**
 * What selects one operator Deployment's pods: the CSV's `spec.selector.matchLabels` plus the
 * stack's `cluster-platform.io/deployment` label. OLM fronts a webhook with a Service whose
 * selector is the Deployment's `matchLabels` alone (operator-framework/operator-lifecycle-manager
 * `pkg/controller/install/certresources.go`, `installCertRequirementsForDeployment`:
 * `WithSelector(depSpec.Selector.MatchLabels)`); kubebuilder's `control-plane: controller-manager` is shared by
 * many operators, so in a shared namespace (`openshift-operators`) that Service also selects
 * other operators' pods, whose certificates name other Services. A Deployment's name is unique in
 * its namespace, so the added label makes the selector unique.
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

/** The Deployment's selector, pod labels and Service selector: the CSV's matchLabels and the Deployment's own label. */
export function podSelectorOf(deploymentName: string, matchLabels: Readonly<Record<string, string>>): Record<string, string> {
    return { ...matchLabels, [DEPLOYMENT_LABEL]: deploymentLabelValue(deploymentName) };
}
