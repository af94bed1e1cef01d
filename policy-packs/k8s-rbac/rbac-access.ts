/**
 * RBAC that grants too much: a `*` verb on `*` resources; every verb on Secrets, read-everything
 * and escalation grants; cluster-admin bound to a service account (a workload's token would then
 * own the cluster); and cluster-admin, or a role that gives everything, bound to everyone.
 */
import {
    clusterAdminServiceAccounts,
    describeSubject,
    givesEverything,
    GrantProblem,
    grantProblems,
    isEveryoneSubject,
    isWildcardRule,
    PolicyRule,
    RbacSubject,
} from "../../components/shared/rbac";
import { CarriedObject, carriedObjects, describeObject, identityOf, isKind, k8sTypeOf, objectPolicy, RBAC_GROUP } from "../shared/k8s";
import { PolicyMeta, stackPolicy, stringList } from "../shared/policy";
import { asArray, asObject, Obj } from "../shared/values";

interface WildcardConfig {
    allowedRoles: string[];
}

/** How an allow-list names a role: `name` for a ClusterRole, `namespace/name` for a Role. */
function allowListName(kind: string, identity: { name: string; namespace?: string }): string {
    return kind === "Role" ? `${identity.namespace ?? "default"}/${identity.name}` : identity.name;
}

function rulesOf(props: Obj): Partial<PolicyRule>[] {
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
 * grant `grants` finds too broad in a rule is reported with the role, the rule and its remedy;
 * roles on the policy's allowedRoles are not judged.
 */
function rolePolicy(
    meta: RolePolicyMeta,
    allowedRoles: string,
    grants: (rule: Partial<PolicyRule>) => { grant: string; remedy: string }[],
) {
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
            for (const { grant, remedy } of grants(rule)) {
                report(
                    `${describeObject(type.kind, identity)} rules[${index}] ${grant}; ${remedy}, or add ${JSON.stringify(allowName)} to allowedRoles`,
                );
            }
        });
    });
}

export const noWildcardAccess = rolePolicy(
    {
        name: "k8s-no-wildcard-access",
        description: 'Roles and ClusterRoles grant no "*" verb on "*" resources, unless they are on the allow-list.',
        severity: "critical",
        remediationSteps:
            'List the verbs and resources the role needs instead of "*". If a role really must do everything (a break-glass role), add its name (ClusterRole) or namespace/name (Role) to this policy\'s allowedRoles.',
    },
    'Roles that may grant "*" on "*": ClusterRole names, and Roles as namespace/name.',
    (rule) =>
        isWildcardRule(rule)
            ? [
                  {
                      grant: `grants every verb ("*") on every resource ("*") of API groups ${JSON.stringify(rule.apiGroups)}`,
                      remedy: "list the verbs and resources it needs",
                  },
              ]
            : [],
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

/** What each check of `grantProblems` asks the role's author to do instead. */
const GRANT_REMEDIES: Record<GrantProblem["check"], string> = {
    "secrets-wildcard-verbs": "list the verbs it needs on Secrets",
    "all-resources": "list the resources it needs",
    "escalation-verbs": "remove these verbs",
};

/**
 * The grants no role should make besides `*` on `*`, one policy with a named check each (one
 * policy, so a role's rules are read once for the three checks): every verb on Secrets, verbs on
 * every resource of the core group, and escalate/bind/impersonate.
 */
export const noBroadGrants = rolePolicy(
    {
        name: "k8s-no-broad-grants",
        description:
            "No Role or ClusterRole, aggregated or not, grants every verb on Secrets [secrets-wildcard-verbs], verbs on every resource of the core group [all-resources], or escalate, bind or impersonate [escalation-verbs].",
        severity: "critical",
        remediationSteps:
            'List the verbs and resources the role needs. Every verb on Secrets includes list and watch, which read every Secret in reach; "*" resources of the core group read Secrets too (a read-everything role); escalate and bind let the holder grant itself any permission, impersonate lets it act as any user, group or service account. A role that must keep such a grant once reviewed goes on allowedRoles.',
    },
    "Roles this policy does not judge: ClusterRole names, and Roles as namespace/name.",
    (rule) =>
        grantProblems(rule).map((problem) => ({ grant: `[${problem.check}] ${problem.message}`, remedy: GRANT_REMEDIES[problem.check] })),
);

/**
 * cluster-admin, or a role of the stack with "*" on "*" of every group, bound to everyone:
 * system:authenticated, system:unauthenticated, system:anonymous or every service account. A
 * stack policy, because whether a role gives everything is read from the role the stack declares.
 */
export const noEverythingForEveryone = stackPolicy(
    {
        name: "k8s-no-admin-for-everyone",
        description:
            'No binding gives cluster-admin, or a role with "*" on "*", to system:authenticated, system:unauthenticated, system:anonymous or all service accounts.',
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it. A binding to system:authenticated gives it to every account of the cluster (and of its identity provider), to system:unauthenticated or system:anonymous to anyone who can reach the API server, to system:serviceaccounts to every workload.",
    },
    (args, _config, report) => {
        const objects = args.resources.flatMap((resource) =>
            carriedObjects(resource).map((object) => ({ object, urn: resource.urn, type: k8sTypeOf(object.type) })),
        );
        const bindings: { kind: string; props: Obj; name: string; urn: string; subjects: RbacSubject[] }[] = [];
        for (const { object, urn, type } of objects) {
            if (isKind(type, RBAC_GROUP, ["RoleBinding", "ClusterRoleBinding"])) {
                const subjects = asArray(object.props.subjects).map((s) => (asObject(s) ?? {}) as RbacSubject);
                // Only bindings to everyone need their role read.
                if (subjects.some(isEveryoneSubject)) {
                    bindings.push({ kind: type.kind, props: object.props, name: object.name, urn, subjects });
                }
            }
        }
        if (bindings.length === 0) {
            return;
        }
        const roles = new Map<string, CarriedObject>();
        for (const { object, type } of objects) {
            if (isKind(type, RBAC_GROUP, ["Role", "ClusterRole"]) && !type.patch) {
                const identity = identityOf(object.props, object.name);
                roles.set(`${type.kind}/${type.kind === "Role" ? `${identity.namespace ?? "default"}/` : ""}${identity.name}`, object);
            }
        }
        for (const binding of bindings) {
            const roleRef = (asObject(binding.props.roleRef) ?? {}) as { kind?: string; name?: string };
            const identity = identityOf(binding.props, binding.name);
            const key = roleRef.kind === "Role" ? `Role/${identity.namespace ?? "default"}/${roleRef.name}` : `ClusterRole/${roleRef.name}`;
            const role = roles.get(key);
            if (!givesEverything(roleRef, role ? rulesOf(role.props) : undefined)) {
                continue;
            }
            const subjects = binding.subjects;
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
