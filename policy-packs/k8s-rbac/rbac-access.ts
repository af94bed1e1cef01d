/**
 * RBAC that grants too much: a `*` verb on `*` resources; every verb on Secrets, read-everything
 * and escalation grants; cluster-admin bound to a service account (a workload's token would then
 * own the cluster); and cluster-admin, or a role that gives everything, bound to everyone.
 */
import { clusterAdminServiceAccounts, describeSubject, isWildcardRule, PolicyRule, RbacSubject } from "../../components/shared/rbac";
import {
    aggregationPower,
    bindingPowers,
    BROAD_GROUPS,
    BUILT_IN_ROLE_POWERS,
    GrantProblem,
    grantProblems,
    isBroadSubject,
    Power,
    POWERS,
} from "../../components/shared/rbac-power";
import { LabelSelector } from "../../components/shared/label-selector";
import { CarriedObject, carriedObjects, describeObject, identityOf, isRbacKind, k8sTypeOf, objectPolicy } from "../shared/k8s";
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
            nonResourceURLs: asArray(r.nonResourceURLs) as string[],
        };
    });
}

function aggregationRuleOf(props: Obj): { clusterRoleSelectors?: LabelSelector[] } | undefined {
    const rule = asObject(props.aggregationRule);
    return rule ? { clusterRoleSelectors: asArray(rule.clusterRoleSelectors).map((s) => (asObject(s) ?? {}) as LabelSelector) } : undefined;
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
    roleGrants: (props: Obj) => { grant: string; remedy: string }[] = () => [],
) {
    return objectPolicy<WildcardConfig>({ ...meta, config: { allowedRoles: stringList(allowedRoles) } }, (args, config, report) => {
        const type = k8sTypeOf(args.type);
        if (!isRbacKind(type, ["Role", "ClusterRole"])) {
            return;
        }
        const identity = identityOf(args.props, args.name);
        const allowName = allowListName(type.kind, identity);
        if (config.allowedRoles.includes(allowName)) {
            return;
        }
        for (const { grant, remedy } of roleGrants(args.props)) {
            report(`${describeObject(type.kind, identity)} ${grant}; ${remedy}, or add ${JSON.stringify(allowName)} to allowedRoles`);
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
        if (!isRbacKind(type, ["RoleBinding", "ClusterRoleBinding"])) {
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
    "escalation-verbs": "remove these verbs, or narrow them with resourceNames to roles or users that are not powerful",
    "effective-power": "list the verbs, resources and names it needs",
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
            'No Role or ClusterRole (rbac.authorization.k8s.io or OpenShift\'s authorization.openshift.io), aggregated or not, grants every verb on Secrets [secrets-wildcard-verbs], verbs on every resource of the core group [all-resources], escalate, bind or impersonate, named or through "*" [escalation-verbs], Secrets read, token minting, exec into pods or every non-resource URL [effective-power], or takes the rules of roles it does not bound through an aggregationRule [aggregation].',
        severity: "critical",
        remediationSteps:
            'List the verbs and resources the role needs. Every verb on Secrets includes list and watch, which read every Secret in reach; "*" resources of the core group read Secrets too (a read-everything role); escalate and bind let the holder grant itself any permission, impersonate lets it act as any user, group or service account. A role that must keep such a grant once reviewed goes on allowedRoles.',
    },
    "Roles this policy does not judge: ClusterRole names, and Roles as namespace/name.",
    (rule) =>
        grantProblems(rule).map((problem) => ({ grant: `[${problem.check}] ${problem.message}`, remedy: GRANT_REMEDIES[problem.check] })),
    (props) => {
        const why = aggregationPower(aggregationRuleOf(props));
        return why === undefined
            ? []
            : [
                  {
                      grant: `aggregationRule [aggregation] ${why}: the role gets ${POWERS.aggregation}, whatever its own rules say`,
                      remedy: "select ClusterRoles by a label only the stack's own roles carry",
                  },
              ];
    },
);

/**
 * A binding that gives a broad group (every user, every OAuth user, every service account, the
 * anonymous user) a built-in role with power (cluster-admin, admin, edit, OpenShift's sudoer):
 * judged per resource, before the binding exists. A role the stack declares is judged by
 * k8s-no-admin-for-everyone, which sees the role.
 */
export const noPowerForBroadGroups = objectPolicy(
    {
        name: "k8s-no-power-for-broad-groups",
        description: `No binding gives a built-in role with power (${Object.keys(BUILT_IN_ROLE_POWERS).join(", ")}) to a broad group (${BROAD_GROUPS.join(", ")}, system:serviceaccounts:<namespace>, system:anonymous).`,
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it. On OpenShift system:authenticated:oauth is every user who can log in through the cluster's identity providers.",
    },
    (object, _config, report) => {
        const type = k8sTypeOf(object.type);
        if (!isRbacKind(type, ["RoleBinding", "ClusterRoleBinding"])) {
            return;
        }
        const roleRef = (asObject(object.props.roleRef) ?? {}) as { kind?: string; name?: string };
        const powers = roleRef.kind === "ClusterRole" ? bindingPowers(roleRef, undefined) : undefined;
        if (!powers || powers.length === 0) {
            return;
        }
        const subjects = asArray(object.props.subjects).map((s) => (asObject(s) ?? {}) as RbacSubject);
        // cluster-admin to every service account is k8s-no-cluster-admin-service-accounts' to report.
        const reported = new Set(clusterAdminServiceAccounts(roleRef, subjects));
        for (const subject of subjects.filter((s) => isBroadSubject(s) && !reported.has(s))) {
            report(
                `${describeObject(type.kind, identityOf(object.props, object.name))} binds ClusterRole ${JSON.stringify(roleRef.name)} (${powerList(powers)}) to ${describeSubject(subject)}; bind it to the named subjects that need it`,
            );
        }
    },
);

const powerList = (powers: readonly Power[]) => powers.map((p) => POWERS[p]).join("; ");

/**
 * cluster-admin, or a role of the stack with "*" on "*" of every group, bound to everyone:
 * system:authenticated, system:unauthenticated, system:anonymous or every service account. A
 * stack policy, because whether a role gives everything is read from the role the stack declares.
 */
export const noEverythingForEveryone = stackPolicy(
    {
        name: "k8s-no-admin-for-everyone",
        description:
            "No binding gives a role of the stack with power (everything, escalation, impersonation, Secrets, tokens, exec, aggregation) to a broad group: system:authenticated, system:authenticated:oauth, system:unauthenticated, system:anonymous, all service accounts (of the cluster or of a namespace).",
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it. A binding to system:authenticated gives it to every account of the cluster (and of its identity provider; on OpenShift system:authenticated:oauth to every user who logs in), to system:unauthenticated or system:anonymous to anyone who can reach the API server, to system:serviceaccounts to every workload.",
    },
    (args, _config, report) => {
        const objects = args.resources.flatMap((resource) =>
            carriedObjects(resource).map((object) => ({ object, urn: resource.urn, type: k8sTypeOf(object.type) })),
        );
        const bindings: { kind: string; props: Obj; name: string; urn: string; subjects: RbacSubject[] }[] = [];
        for (const { object, urn, type } of objects) {
            if (isRbacKind(type, ["RoleBinding", "ClusterRoleBinding"])) {
                const subjects = asArray(object.props.subjects).map((s) => (asObject(s) ?? {}) as RbacSubject);
                // Only bindings to broad subjects need their role read.
                if (subjects.some(isBroadSubject)) {
                    bindings.push({ kind: type.kind, props: object.props, name: object.name, urn, subjects });
                }
            }
        }
        if (bindings.length === 0) {
            return;
        }
        const roles = new Map<string, CarriedObject>();
        for (const { object, type } of objects) {
            if (isRbacKind(type, ["Role", "ClusterRole"]) && !type.patch) {
                const identity = identityOf(object.props, object.name);
                roles.set(`${type.kind}/${type.kind === "Role" ? `${identity.namespace ?? "default"}/` : ""}${identity.name}`, object);
            }
        }
        for (const binding of bindings) {
            const roleRef = (asObject(binding.props.roleRef) ?? {}) as { kind?: string; name?: string };
            const identity = identityOf(binding.props, binding.name);
            const key = roleRef.kind === "Role" ? `Role/${identity.namespace ?? "default"}/${roleRef.name}` : `ClusterRole/${roleRef.name}`;
            const role = roles.get(key);
            // A built-in role the stack does not declare is k8s-no-power-for-broad-groups' to report, before the binding exists.
            if (!role) {
                continue;
            }
            const powers = bindingPowers(roleRef, { rules: rulesOf(role.props), aggregationRule: aggregationRuleOf(role.props) }) ?? [];
            if (powers.length === 0) {
                continue;
            }
            const what = powers.includes("everything") ? "which grants everything" : `which gives ${powerList(powers)}`;
            for (const subject of binding.subjects.filter(isBroadSubject)) {
                report(
                    `${describeObject(binding.kind, identity)} binds ${roleRef.kind} ${JSON.stringify(roleRef.name)}, ${what}, to ${describeSubject(subject)}; bind it to the named subjects that need it`,
                    binding.urn,
                );
            }
        }
    },
);
