/**
 * Rules that span config sections or need more than shape checks. Each runs only on the
 * sections that parsed, so every section's own problems are reported alongside these.
 */
import { awsTagConfigProblems } from "../aws-tags/config";
import { caInjectionModeProblems, effectiveCertificateSettings } from "../certificates/rules";
import { describeValue, formatPath, Problem } from "../shared/problems";
import { buildsWebhookImage, webhookImageProblems } from "../webhook-image/rules";
import { derivedResyncSeconds, scheduleProblem } from "../reconcile/schedule";
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
            message: "true needs a live cluster, but cluster.renderYamlToDirectory renders YAML instead: PKO would apply what a render only writes",
        });
    }
    if (reconcile?.enabled && certificates) {
        const seconds = reconcile.resyncFrequencySeconds ?? derivedResyncSeconds(certificates.renewBeforeDays);
        const problem = scheduleProblem(seconds, certificates.renewBeforeDays);
        if (problem !== undefined) {
            problems.push({ path: "reconcile.resyncFrequencySeconds", message: problem });
        }
    }

    if (webhookImage && subscriptions && aws) {
        problems.push(...webhookImageProblems(webhookImage, { built: buildsWebhookImage(subscriptions), awsEnabled: aws.enabled }));
    }

    if (cluster && aws) {
        problems.push(...awsTagConfigProblems(aws, cluster.name));
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
        if (certificates && op.certificates?.issuer && effectiveCertificateSettings(certificates, op.certificates).mode !== "cert-manager") {
            problems.push({
                path: formatPath(["operators", i, "certificates", "issuer"]),
                message: `operator ${describeValue(op.name)}: is only used when the operator's certificate mode is "cert-manager" (it is ${describeValue(effectiveCertificateSettings(certificates, op.certificates).mode)})`,
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
