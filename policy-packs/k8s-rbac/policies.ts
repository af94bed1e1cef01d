/**
 * The k8s-rbac pack's policies, in the order the README documents them. Tests and benchmarks
 * import this module; only index.ts constructs the PolicyPack (which starts its gRPC server).
 */
import type { Policies } from "@pulumi/policy";
import { aggregatedRoles } from "./aggregated-roles";
import { olmRbacToggles } from "./olm-toggles";
import { podSecurityRestricted } from "./pod-security";
import { noClusterAdminServiceAccounts, noWildcardAccess } from "./rbac-access";
import { webhookFailClosedAvailability } from "./webhook-availability";
import { webhookForbiddenRules, webhookNamespaceExclusions, webhookSideEffects, webhookTimeout } from "./webhooks";

export const PACK_NAME = "k8s-rbac";
export const PACK_DESCRIPTION =
    "Kubernetes RBAC and webhook safety for cluster-platform stacks: the OLM RBAC toggles, aggregated roles, wildcard and cluster-admin grants, admission webhook rules, timeouts, side effects, namespace exclusions and availability, and the restricted Pod Security profile.";

export const K8S_RBAC_POLICIES: Policies = [
    olmRbacToggles,
    aggregatedRoles,
    noWildcardAccess,
    noClusterAdminServiceAccounts,
    webhookForbiddenRules,
    webhookTimeout,
    webhookSideEffects,
    webhookNamespaceExclusions,
    webhookFailClosedAvailability,
    podSecurityRestricted,
];
