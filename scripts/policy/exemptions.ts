/**
 * The exemptions a correct stack needs from the packs, each named with its reason (issue 29,
 * point 6): `npm run policy:config` adds them to the knob they name and prints one line each.
 * Pure. An exemption follows the stack's config, so it names exactly the stack's own resources.
 */
import type { StackConfig } from "../../components/config";
import { pkoStackName, RECONCILE_ROLE_EXEMPTION_REASON, reconcileRoleName } from "../../components/reconcile/names";
import { DRIVER_ACCESS_NAME, referencesOf } from "../../components/subscriptions/bundles";
import { webhookReadScopes, WEBHOOK_NAMES } from "../../components/subscriptions/webhook";

export interface PolicyExemption {
    pack: "aws-tags" | "k8s-rbac";
    policy: string;
    /** The policy's config knob (a list) the values are added to. */
    knob: string;
    values: string[];
    reason: string;
}

/** What the stack's config needs exempted, in a fixed order. */
export function policyExemptions(config: StackConfig, extra: { infraIds?: readonly string[] } = {}): PolicyExemption[] {
    const exemptions: PolicyExemption[] = [];
    const subscriptions = config.subscriptions;
    if (subscriptions.enabled) {
        const shared = subscriptions.clusterBundles.flatMap(referencesOf);
        const roles = webhookReadScopes(subscriptions.sourceNamespace, shared, subscriptions.bundles, subscriptions.webhook.readNamespaces)
            .filter((scope) => (scope.listed as readonly string[]).includes("secrets"))
            .map((scope) => `${scope.namespace}/${WEBHOOK_NAMES.keyReadRole}`);
        if (roles.length > 0) {
            exemptions.push({
                pack: "k8s-rbac",
                policy: "k8s-no-broad-grants",
                knob: "allowedRoles",
                values: roles,
                reason: "the subscription webhook lists Secrets in the source namespace, which holds only the copies ClusterBundles share, and in subscriptions.webhook.readNamespaces, to resolve entitlement key names (seed 000)",
            });
        }
        if (shared.some((reference) => reference.kind === "Secret")) {
            exemptions.push({
                pack: "k8s-rbac",
                policy: "k8s-no-broad-grants",
                knob: "allowedRoles",
                values: [`${subscriptions.sourceNamespace}/${DRIVER_ACCESS_NAME}`],
                reason: "the Shared Resource CSI driver lists and watches Secrets in the source namespace, which holds only the copies ClusterBundles share; its refresh informers need it (components/subscriptions/bundles.ts driverAccessManifests)",
            });
        }
    }
    if (config.reconcile.enabled) {
        exemptions.push({
            pack: "k8s-rbac",
            policy: "k8s-no-broad-grants",
            knob: "allowedRoles",
            values: [reconcileRoleName(pkoStackName(config.cluster.name))],
            reason: RECONCILE_ROLE_EXEMPTION_REASON,
        });
    }
    if (config.aws.enabled) {
        const ids = [...new Set([config.cluster.name, ...(extra.infraIds ?? [])])];
        exemptions.push({
            pack: "aws-tags",
            policy: "aws-reserved-tag-keys",
            knob: "clusterIds",
            values: ids,
            reason: "the AWS cloud provider finds this cluster's subnets and security groups by kubernetes.io/cluster/<id> (owned or shared); on OpenShift <id> is the infra id (pass --infra-id)",
        });
    }
    return exemptions;
}
