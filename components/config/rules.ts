/**
 * Rules that span config sections or need more than shape checks. Each runs only on the
 * sections that parsed, so every section's own problems are reported alongside these.
 */
import { awsAssetPlan, plannedAssetResources } from "../aws-assets/rules";
import { awsTagConfigProblems } from "../aws-tags/rules";
import { caInjectionModeProblems, effectiveCertificateSettings } from "../certificates/rules";
import { clusterConnection } from "../shared/cluster";
import { describeValue, formatPath, Problem } from "../shared/problems";
import { buildsWebhookImage, webhookImageOutput, webhookImageProblems } from "../webhook-image/rules";
import { derivedResyncSeconds, RECONCILE_OFF_BY_OPERATOR, scheduleProblem, stackNameProblem } from "../reconcile/rules";
import type { StackConfig } from "./schema";

export interface RuleResult {
    problems: Problem[];
    warnings: string[];
}

export function crossSectionRules(config: Partial<StackConfig>): RuleResult {
    const problems: Problem[] = [];
    const warnings: string[] = [];
    const { cluster, certificates, operators, olm, caInjection, aws, subscriptions, webhookImage, reconcile } = config;

    if (reconcile?.enabled && cluster?.renderYamlToDirectory !== undefined) {
        problems.push({
            path: "reconcile.enabled",
            message:
                "true needs a live cluster, but cluster.renderYamlToDirectory renders YAML instead: PKO would apply what a render only writes",
        });
    }
    if (reconcile && !reconcile.enabled && cluster?.runByOperator) {
        problems.push({ path: "reconcile.enabled", message: RECONCILE_OFF_BY_OPERATOR });
    }
    if (reconcile?.enabled && cluster) {
        const problem = stackNameProblem(cluster.name);
        if (problem !== undefined) {
            problems.push({ path: "cluster.name", message: problem });
        }
    }
    if (reconcile?.enabled && certificates) {
        const seconds = reconcile.resyncFrequencySeconds ?? derivedResyncSeconds(certificates.renewBeforeDays);
        const problem = scheduleProblem(seconds, certificates.renewBeforeDays);
        if (problem !== undefined) {
            problems.push({ path: "reconcile.resyncFrequencySeconds", message: problem });
        }
    }

    const connection = cluster ? clusterConnection(cluster) : undefined;
    problems.push(...(connection?.problems ?? []));

    if (webhookImage && subscriptions && aws && cluster) {
        problems.push(
            ...webhookImageProblems(webhookImage, {
                built: buildsWebhookImage(subscriptions),
                awsEnabled: aws.enabled,
                live: cluster.renderYamlToDirectory === undefined,
            }),
        );
    }

    if (cluster && aws) {
        // A section that did not parse has its own problems reported; its assets are then not planned.
        const plan = awsAssetPlan({
            aws,
            subscriptions: subscriptions ?? { enabled: false, webhook: {} },
            webhookImage: webhookImage
                ? { ...webhookImage, output: webhookImageOutput(webhookImage, cluster.renderYamlToDirectory === undefined) }
                : { output: "oci-layout", repository: "" },
        });
        problems.push(...awsTagConfigProblems(aws, plannedAssetResources(cluster.name, plan)));
    }

    if (cluster && certificates?.mode === "service-ca" && cluster.platform !== "openshift") {
        problems.push({
            path: "certificates.mode",
            message: `"service-ca" needs OpenShift's service-ca operator, but cluster.platform is ${describeValue(cluster.platform)}`,
        });
    }

    if (certificates && caInjection) {
        problems.push(...caInjectionModeProblems(certificates.mode, caInjection));
    }

    operators?.forEach((op, i) => {
        if (
            certificates &&
            op.certificates?.issuer &&
            effectiveCertificateSettings(certificates, op.certificates).mode !== "cert-manager"
        ) {
            problems.push({
                path: formatPath(["operators", i, "certificates", "issuer"]),
                message: `operator ${describeValue(op.name)}: is only used when the operator's certificate mode is "cert-manager" (it is ${describeValue(effectiveCertificateSettings(certificates, op.certificates).mode)})`,
            });
        }
        if (subscriptions?.enabled && op.namespace === subscriptions.namespace) {
            // Both capabilities own their namespace (labels, exclusions from their webhooks); one
            // namespace would be declared twice, under two resource names.
            problems.push({
                path: formatPath(["operators", i, "namespace"]),
                message: `operator ${describeValue(op.name)}: ${describeValue(op.namespace)} is also subscriptions.namespace, the subscription webhook's own namespace; give the operator a namespace of its own`,
            });
        }
        if (cluster && op.certificates?.mode === "service-ca" && cluster.platform !== "openshift") {
            problems.push({
                path: formatPath(["operators", i, "certificates", "mode"]),
                message: `operator ${describeValue(op.name)}: "service-ca" needs OpenShift, but cluster.platform is ${describeValue(cluster.platform)}`,
            });
        }
        if (!olm) {
            return;
        }
        const allNamespaces = op.targetNamespaces.length === 0;
        const promotionDisabled = olm.disableAllNamespacePermissionPromotion;
        if (allNamespaces && promotionDisabled && (!op.rbacNamespaces || op.rbacNamespaces.length === 0)) {
            problems.push({
                path: formatPath(["operators", i, "rbacNamespaces"]),
                message: `operator ${describeValue(op.name)}: is required (a non-empty list) when targetNamespaces is [] (AllNamespaces) and olm.disableAllNamespacePermissionPromotion is true: it names the namespaces that get the operator's Roles`,
            });
        }
        if (op.rbacNamespaces && !(allNamespaces && promotionDisabled)) {
            warnings.push(
                `cluster-platform:${formatPath(["operators", i, "rbacNamespaces"])}: ignored for operator "${op.name}": it applies only to AllNamespaces installs with olm.disableAllNamespacePermissionPromotion`,
            );
        }
    });
    return { problems, warnings };
}
