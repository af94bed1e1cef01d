/**
 * RBAC that grants too much: a `*` verb on `*` resources, and cluster-admin bound to a service
 * account (a workload's token would then own the cluster).
 */
import { clusterAdminServiceAccounts, describeSubject, isWildcardRule, RbacRule, RbacSubject } from "../../components/shared/rbac";
import { describeObject, identityOf, isKind, k8sTypeOf, RBAC_GROUP } from "../shared/k8s";
import { resourcePolicy, stringList } from "../shared/policy";
import { asArray, asObject, Obj } from "../shared/values";

interface WildcardConfig {
    allowedRoles: string[];
}

/** How an allow-list names a role: `name` for a ClusterRole, `namespace/name` for a Role. */
function allowListName(kind: string, identity: { name: string; namespace?: string }): string {
    return kind === "Role" ? `${identity.namespace ?? "default"}/${identity.name}` : identity.name;
}

function rulesOf(props: Obj): RbacRule[] {
    return asArray(props.rules).map((rule) => {
        const r = asObject(rule) ?? {};
        return { apiGroups: asArray(r.apiGroups) as string[], resources: asArray(r.resources) as string[], verbs: asArray(r.verbs) as string[] };
    });
}

export const noWildcardAccess = resourcePolicy<WildcardConfig>(
    {
        name: "k8s-no-wildcard-access",
        description: "Roles and ClusterRoles grant no \"*\" verb on \"*\" resources, unless they are on the allow-list.",
        severity: "critical",
        remediationSteps:
            "List the verbs and resources the role needs instead of \"*\". If a role really must do everything (a break-glass role), add its name (ClusterRole) or namespace/name (Role) to this policy's allowedRoles.",
        config: {
            allowedRoles: stringList("Roles that may grant \"*\" on \"*\": ClusterRole names, and Roles as namespace/name."),
        },
    },
    (args, config, report) => {
        const type = k8sTypeOf(args.type);
        if (!isKind(type, RBAC_GROUP, ["Role", "ClusterRole"])) {
            return;
        }
        const identity = identityOf(args.props, args.name);
        const allowName = allowListName(type.kind, identity);
        if (config.allowedRoles.includes(allowName)) {
            return;
        }
        rulesOf(args.props).forEach((rule, index) => {
            if (isWildcardRule(rule)) {
                report(
                    `${describeObject(type.kind, identity)} rules[${index}] grants every verb ("*") on every resource ("*") of API groups ${JSON.stringify(rule.apiGroups)}; list the verbs and resources it needs, or add ${JSON.stringify(allowName)} to allowedRoles`,
                );
            }
        });
    },
);

export const noClusterAdminServiceAccounts = resourcePolicy(
    {
        name: "k8s-no-cluster-admin-service-accounts",
        description: "No RoleBinding or ClusterRoleBinding gives the cluster-admin ClusterRole to a service account.",
        severity: "critical",
        remediationSteps:
            "Bind the service account to a Role or ClusterRole with only the permissions its workload needs. Anyone who can read the service account's token, or run a pod as it, would otherwise own the cluster.",
    },
    (args, _config, report) => {
        const type = k8sTypeOf(args.type);
        if (!isKind(type, RBAC_GROUP, ["RoleBinding", "ClusterRoleBinding"])) {
            return;
        }
        const roleRef = asObject(args.props.roleRef);
        const subjects = asArray(args.props.subjects).map((s) => (asObject(s) ?? {}) as RbacSubject);
        const admins = clusterAdminServiceAccounts(roleRef as { kind?: string; name?: string } | undefined, subjects);
        for (const subject of admins) {
            report(
                `${describeObject(type.kind, identityOf(args.props, args.name))} binds ClusterRole "cluster-admin" to ${describeSubject(subject)}; bind a role with only the permissions the workload needs`,
            );
        }
    },
);
