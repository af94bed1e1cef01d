/**
 * The k8s-rbac pack's policies, in the order docs/policy-packs.md documents them. Tests and benchmarks
 * import this module; only index.ts constructs the PolicyPack (which starts its gRPC server).
 */
import type { Policies } from "@pulumi/policy";
import { aggregatedRoles } from "./aggregated-roles";
import { olmRbacToggles } from "./olm-toggles";
import { podSecurityRestricted } from "./pod-security";
import { noAdmissionPolicyOverRbac } from "./admission-policies";
import {
    noBroadGrants,
    noClusterAdminServiceAccounts,
    noEverythingForEveryone,
    noPowerForBroadGroups,
    noPowerfulBindings,
    noWildcardAccess,
} from "./rbac-access";
import { unjudgedContent } from "./unjudged-content";
import { webhookFailClosedAvailability } from "./webhook-availability";
import { webhookForbiddenRules, webhookNamespaceExclusions, webhookSideEffects, webhookTimeout } from "./webhooks";

export const PACK_NAME = "k8s-rbac";
export const PACK_DESCRIPTION =
    "Kubernetes RBAC and webhook safety for cluster-platform stacks: the OLM RBAC toggles, aggregated roles, wildcard grants, roles and bindings judged by the requests they allow against a dangerous-request set (escalate, bind, impersonate, Secrets, exec, tokens, node proxy, admission, CRD and APIService writes, CSR approval, privileged SCCs), cluster-admin for service accounts and power for everyone, admission webhook rules, timeouts, side effects, namespace exclusions and availability, the restricted Pod Security profile (restricted-v2 on OpenShift), and advisories for content it cannot judge.";

export const K8S_RBAC_POLICIES: Policies = [
    olmRbacToggles,
    aggregatedRoles,
    noWildcardAccess,
    noBroadGrants,
    noClusterAdminServiceAccounts,
    noEverythingForEveryone,
    noPowerForBroadGroups,
    noPowerfulBindings,
    noAdmissionPolicyOverRbac,
    webhookForbiddenRules,
    webhookTimeout,
    webhookSideEffects,
    webhookNamespaceExclusions,
    webhookFailClosedAvailability,
    podSecurityRestricted,
    unjudgedContent,
];
