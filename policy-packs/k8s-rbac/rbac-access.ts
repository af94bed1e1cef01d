/**
 * RBAC that grants too much: a `*` verb on `*` resources, and cluster-admin bound to a service
 * account (a workload's token would then own the cluster).
 */
import { clusterAdminServiceAccounts, describeSubject, givesEverything, GrantProblem, grantProblems, isEveryoneSubject, isWildcardRule, RbacRule, RbacSubject } from "../../components/shared/rbac";
import { carriedObjects, describeObject, identityOf, isKind, k8sTypeOf, objectPolicy, RBAC_GROUP } from "../shared/k8s";
import { PolicyMeta, stackPolicy, stringList } from "../shared/policy";
import { asArray, asObject, Obj } from "../shared/values";

interface WildcardConfig {
    allowedRoles: string[];
}

/** How an allow-list names a role: `name` for a ClusterRole, `namespace/name` for a Role. */
function allowListName(kind: string, identity: { name: string; namespace?: string }): string {
    return kind === "Role" ? `${identity.namespace ?? "default"}/${identity.name}` : identity.name;
}

export function rulesOf(props: Obj): RbacRule[] {
    return asArray(props.rules).map((rule) => {
        const r = asObject(rule) ?? {};
        return {
            apiGroups: asArray(r.apiGroups) as string[],
            resources: asArray(r.resources) as string[],
            verbs: asArray(r.verbs) as string[],
            resourceNames: asArray(r.resourceNames) as string[],
        };
    });
}

type RolePolicyMeta = Omit<PolicyMeta, "config" | "enforcementLevel"> & { severity: "critical" | "high" };

/**
 * A resource policy over the rules of Roles and ClusterRoles (lists and patches included): each
 * rule `grants` finds too broad is reported with the role, the rule, what it grants and `remedy`;
 * roles on the policy's allowedRoles are not judged.
 */
function rolePolicy(meta: RolePolicyMeta, allowedRoles: string, remedy: string, grants: (rule: RbacRule) => string[]) {
    return objectPolicy<WildcardConfig>({ ...meta, config: { allowedRoles: stringList(allowedRoles) } }, (args, config, report) => {
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
            for (const grant of grants(rule)) {
                report(`${describeObject(type.kind, identity)} rules[${index}] ${grant}; ${remedy}, or add ${JSON.stringify(allowName)} to allowedRoles`);
            }
        });
    });
}

export const noWildcardAccess = rolePolicy(
    {
        name: "k8s-no-wildcard-access",
        description: "Roles and ClusterRoles grant no \"*\" verb on \"*\" resources, unless they are on the allow-list.",
        severity: "critical",
        remediationSteps:
            "List the verbs and resources the role needs instead of \"*\". If a role really must do everything (a break-glass role), add its name (ClusterRole) or namespace/name (Role) to this policy's allowedRoles.",
    },
    "Roles that may grant \"*\" on \"*\": ClusterRole names, and Roles as namespace/name.",
    "list the verbs and resources it needs",
    (rule) => (isWildcardRule(rule) ? [`grants every verb ("*") on every resource ("*") of API groups ${JSON.stringify(rule.apiGroups)}`] : []),
);

export const noClusterAdminServiceAccounts = objectPolicy(
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

/** One policy per check of `grantProblems`, each with its own allow-list. */
function grantPolicy(check: GrantProblem["check"], remedy: string, meta: RolePolicyMeta) {
    return rolePolicy(meta, "Roles this policy does not judge: ClusterRole names, and Roles as namespace/name.", remedy, (rule) =>
        grantProblems(rule)
            .filter((p) => p.check === check)
            .map((p) => p.message),
    );
}

export const noSecretsWildcardVerbs = grantPolicy("secrets-wildcard-verbs", "list the verbs it needs on Secrets", {
    name: "k8s-no-secrets-wildcard-verbs",
    description: "No Role or ClusterRole grants every verb (\"*\") on Secrets, aggregated or not.",
    severity: "critical",
    remediationSteps: "List the verbs the role needs on Secrets (get on named Secrets, with resourceNames, where it can). Every verb includes list and watch, which read every Secret of the namespace (or cluster), and delete.",
});

export const noAllResourcesAccess = grantPolicy("all-resources", "list the resources it needs", {
    name: "k8s-no-all-resources-access",
    description: "No Role or ClusterRole grants verbs on every resource (\"*\"): a read-everything role reads every Secret.",
    severity: "high",
    remediationSteps: "List the resources the role needs instead of \"*\". \"*\" covers Secrets and every resource an API group adds later.",
});

export const noEscalationVerbs = grantPolicy("escalation-verbs", "remove these verbs", {
    name: "k8s-no-escalation-verbs",
    description: "No Role or ClusterRole grants escalate, bind or impersonate.",
    severity: "critical",
    remediationSteps: "Remove escalate, bind and impersonate from the role. escalate and bind let the holder grant itself any permission; impersonate lets it act as any user, group or service account.",
});

/**
 * cluster-admin, or a role of the stack with "*" on "*" of every group, bound to everyone:
 * system:authenticated, system:unauthenticated, system:anonymous or every service account. A
 * stack policy, because whether a role gives everything is read from the role the stack declares.
 */
export const noEverythingForEveryone = stackPolicy(
    {
        name: "k8s-no-admin-for-everyone",
        description: "No binding gives cluster-admin, or a role with \"*\" on \"*\", to system:authenticated, system:unauthenticated, system:anonymous or all service accounts.",
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it. A binding to system:authenticated gives it to every account of the cluster (and of its identity provider), to system:unauthenticated or system:anonymous to anyone who can reach the API server, to system:serviceaccounts to every workload.",
    },
    (args, _config, report) => {
        const roles = new Map<string, RbacRule[]>();
        const bindings: { kind: string; props: Obj; name: string; urn: string }[] = [];
        for (const resource of args.resources) {
            for (const object of carriedObjects(resource)) {
                const type = k8sTypeOf(object.type);
                if (isKind(type, RBAC_GROUP, ["Role", "ClusterRole"]) && !type.patch) {
                    const identity = identityOf(object.props, object.name);
                    roles.set(`${type.kind}/${type.kind === "Role" ? `${identity.namespace ?? "default"}/` : ""}${identity.name}`, rulesOf(object.props));
                } else if (isKind(type, RBAC_GROUP, ["RoleBinding", "ClusterRoleBinding"])) {
                    bindings.push({ kind: type.kind, props: object.props, name: object.name, urn: resource.urn });
                }
            }
        }
        for (const binding of bindings) {
            const roleRef = (asObject(binding.props.roleRef) ?? {}) as { kind?: string; name?: string };
            const identity = identityOf(binding.props, binding.name);
            const key = roleRef.kind === "Role" ? `Role/${identity.namespace ?? "default"}/${roleRef.name}` : `ClusterRole/${roleRef.name}`;
            if (!givesEverything(roleRef, roles.get(key))) {
                continue;
            }
            const subjects = asArray(binding.props.subjects).map((s) => (asObject(s) ?? {}) as RbacSubject);
            // cluster-admin to every service account is k8s-no-cluster-admin-service-accounts' to report.
            const reported = new Set(clusterAdminServiceAccounts(roleRef, subjects));
            for (const subject of subjects.filter((s) => isEveryoneSubject(s) && !reported.has(s))) {
                report(
                    `${describeObject(binding.kind, identity)} binds ${roleRef.kind} ${JSON.stringify(roleRef.name)}, which grants everything, to ${describeSubject(subject)}; bind it to the named subjects that need it`,
                    binding.urn,
                );
            }
        }
    },
);
