/**
 * The k8s-rbac pack's policies, in the order docs/policy-packs.md documents them. Tests and benchmarks
 * import this module; only index.ts constructs the PolicyPack (which starts its gRPC server).
 */
import type { Policies } from "@pulumi/policy";
import { aggregatedRoles } from "./aggregated-roles";
import { olmRbacToggles } from "./olm-toggles";
import { podSecurityRestricted } from "./pod-security";
import { noBroadGrants, noClusterAdminServiceAccounts, noEverythingForEveryone, noWildcardAccess } from "./rbac-access";
import { unjudgedContent } from "./unjudged-content";
import { webhookFailClosedAvailability } from "./webhook-availability";
import { webhookForbiddenRules, webhookNamespaceExclusions, webhookSideEffects, webhookTimeout } from "./webhooks";

export const PACK_NAME = "k8s-rbac";
export const PACK_DESCRIPTION =
    "Kubernetes RBAC and webhook safety for cluster-platform stacks: the OLM RBAC toggles, aggregated roles, wildcard, Secrets, read-everything and escalation grants, cluster-admin and everything-for-everyone bindings, admission webhook rules, timeouts, side effects, namespace exclusions and availability, the restricted Pod Security profile (restricted-v2 on OpenShift), and advisories for content it cannot judge.";

export const K8S_RBAC_POLICIES: Policies = [
    olmRbacToggles,
    aggregatedRoles,
    noWildcardAccess,
    noBroadGrants,
    noClusterAdminServiceAccounts,
    noEverythingForEveryone,
    webhookForbiddenRules,
    webhookTimeout,
    webhookSideEffects,
    webhookNamespaceExclusions,
    webhookFailClosedAvailability,
    podSecurityRestricted,
    unjudgedContent,
];
