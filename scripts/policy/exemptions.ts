/**
 * The exemptions a correct stack needs from the packs, each named with its reason (issue 29,
 * point 6): `npm run policy:config` adds them to the knob they name and prints one line each.
 * Pure. An exemption follows the stack's config, so it names exactly the stack's own resources.
 */
import type { StackConfig } from "../../components/config";
import { pkoStackName, RECONCILE_ROLE_EXEMPTION_REASON, reconcileRoleName } from "../../components/reconcile/names";
import { referencesOf } from "../../components/subscriptions/bundles";
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
        const webhook = subscriptions.webhook;
        const roles = webhook.readAllNamespaces
            ? [WEBHOOK_NAMES.clusterRole]
            : webhookReadScopes(subscriptions.clusterBundles, subscriptions.bundles, webhook.readNamespaces)
                  .filter((scope) => (scope.rule.resources as readonly string[]).includes("secrets"))
                  .map((scope) => `${scope.namespace}/${WEBHOOK_NAMES.keyReadRole}`);
        if (roles.length > 0) {
            exemptions.push({
                pack: "k8s-rbac",
                policy: "k8s-no-broad-grants",
                knob: "allowedRoles",
                values: roles,
                reason: webhook.readAllNamespaces
                    ? "the subscription webhook lists Secrets cluster-wide (subscriptions.webhook.readAllNamespaces) to resolve entitlement key names (seed 000)"
                    : "the subscription webhook lists Secrets in exactly the namespaces the declared bundles reference, to resolve entitlement key names (seed 000)",
            });
        }
        const driverRoles = subscriptions.clusterBundles
            .flatMap(referencesOf)
            .filter((reference) => reference.kind === "Secret")
            .map((reference) => `${reference.ref.namespace}/${reference.share}`);
        if (driverRoles.length > 0) {
            exemptions.push({
                pack: "k8s-rbac",
                policy: "k8s-no-broad-grants",
                knob: "allowedRoles",
                values: [...new Set(driverRoles)],
                reason: "the Shared Resource CSI driver lists and watches Secrets in each shared Secret's namespace, which its refresh informers need (components/subscriptions/bundles.ts driverReadManifests)",
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
