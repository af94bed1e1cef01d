/**
 * How Kubernetes RBAC matches a request against a PolicyRule, and the RBAC shapes no platform
 * should ship (a `*` verb on `*` resources, cluster-admin bound to a service account), as pure
 * functions. Components that generate RBAC and the k8s-rbac policy pack share them. Matching
 * follows the API server's authorizer (`rbac/v1` `VerbMatches`, `APIGroupMatches`,
 * `ResourceMatches`, `ResourceNameMatches`). No Pulumi imports.
 */

/**
 * An rbac.authorization.k8s.io/v1 PolicyRule (kubernetes/api rbac/v1/types.go): the one definition
 * for the rules the components generate, the CSVs carry and the policy packs judge.
 */
export interface PolicyRule {
    apiGroups?: string[];
    resources?: string[];
    verbs: string[];
    resourceNames?: string[];
    nonResourceURLs?: string[];
}

export interface RbacSubject {
    kind?: string;
    name?: string;
    namespace?: string;
    apiGroup?: string;
}

export const ALL = "*";
export const CLUSTER_ADMIN_ROLE = "cluster-admin";
/** The user-facing default roles, which select ClusterRoles labelled `rbac.authorization.k8s.io/aggregate-to-<role>: "true"`. */
export const DEFAULT_AGGREGATION_ROLES = ["admin", "edit", "view"] as const;
export const AGGREGATE_TO_LABEL_PREFIX = "rbac.authorization.k8s.io/aggregate-to-";

/** The label that aggregates a ClusterRole into `role` (when that role's aggregationRule selects it). */
export function aggregationLabel(role: string): string {
    return `${AGGREGATE_TO_LABEL_PREFIX}${role}`;
}

/** A request for `verb` on `resource` (optionally `resource/subresource`) in `group`. */
export interface RbacRequest {
    group: string;
    resource: string;
    verb: string;
}

export function ruleMatchesVerb(rule: Partial<PolicyRule>, verb: string): boolean {
    return (rule.verbs ?? []).some((v) => v === ALL || v === verb);
}

export function ruleMatchesGroup(rule: Partial<PolicyRule>, group: string): boolean {
    return (rule.apiGroups ?? []).some((g) => g === ALL || g === group);
}

/** `resource` may name a subresource (`pods/exec`); `*`, `pods/*` and `*\/exec` match as the authorizer does. */
export function ruleMatchesResource(rule: Partial<PolicyRule>, resource: string): boolean {
    const [base, subresource] = resource.split("/", 2);
    return (rule.resources ?? []).some(
        (r) => r === ALL || r === resource || (subresource !== undefined && (r === `${ALL}/${subresource}` || r === `${base}/${ALL}`)),
    );
}

/** Whether the rule grants `request` on some object (resourceNames, if any, narrow it to those names). */
export function ruleGrants(rule: Partial<PolicyRule>, request: RbacRequest): boolean {
    return ruleMatchesVerb(rule, request.verb) && ruleMatchesGroup(rule, request.group) && ruleMatchesResource(rule, request.resource);
}

/** Whether the rule grants `request` on every object, i.e. without a resourceNames restriction. */
export function ruleGrantsUnrestricted(rule: Partial<PolicyRule>, request: RbacRequest): boolean {
    return ruleGrants(rule, request) && (rule.resourceNames ?? []).length === 0;
}

/**
 * Whether the rule grants any verb on `resource` of `group` or on one of its subresources
 * (`*`, `secrets`, `secrets/<sub>`; in RBAC `*\/<sub>` names one subresource of every resource).
 */
export function ruleReachesResource(rule: Partial<PolicyRule>, group: string, resource: string): boolean {
    return (
        (rule.verbs ?? []).length > 0 &&
        ruleMatchesGroup(rule, group) &&
        (rule.resources ?? []).some((r) => r === ALL || r === resource || r.startsWith(`${resource}/`))
    );
}

/** A `*` verb on `*` resources: every action on everything the rule's groups serve. */
export function isWildcardRule(rule: Partial<PolicyRule>): boolean {
    return (rule.verbs ?? []).includes(ALL) && (rule.resources ?? []).includes(ALL);
}

/** Which of `roles` (by default admin, edit, view) a ClusterRole's labels aggregate it into, in that order. */
export function aggregatedInto(
    labels: Readonly<Record<string, unknown>> | undefined,
    roles: readonly string[] = DEFAULT_AGGREGATION_ROLES,
): string[] {
    return roles.filter((role) => labels?.[aggregationLabel(role)] === "true");
}

/**
 * A subject that is a service account, or a group of them: a ServiceAccount, the user name
 * `system:serviceaccount:<ns>:<name>` the API server gives one, or the groups
 * `system:serviceaccounts` and `system:serviceaccounts:<ns>`.
 */
export function isServiceAccountSubject(subject: RbacSubject): boolean {
    const name = subject.name ?? "";
    switch (subject.kind) {
        case "ServiceAccount":
            return true;
        case "User":
            return name.startsWith("system:serviceaccount:");
        case "Group":
            return name === "system:serviceaccounts" || name.startsWith("system:serviceaccounts:");
        default:
            return false;
    }
}

/** `ServiceAccount "ns/name"`, `Group "system:serviceaccounts"`. */
export function describeSubject(subject: RbacSubject): string {
    const name = subject.kind === "ServiceAccount" && subject.namespace ? `${subject.namespace}/${subject.name}` : subject.name;
    return `${subject.kind ?? "subject"} ${JSON.stringify(name)}`;
}

/** The service-account subjects a binding gives cluster-admin, or [] when it binds another role. */
export function clusterAdminServiceAccounts(
    roleRef: { kind?: string; name?: string } | undefined,
    subjects: readonly RbacSubject[],
): RbacSubject[] {
    if (roleRef?.kind !== "ClusterRole" || roleRef.name !== CLUSTER_ADMIN_ROLE) {
        return [];
    }
    return subjects.filter(isServiceAccountSubject);
}

/** Whether an object has the shape of a PolicyRule (verbs, and resources or nonResourceURLs): RBAC wherever it is carried. */
export function looksLikePolicyRule(value: unknown): boolean {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return false;
    }
    const o = value as Record<string, unknown>;
    return Array.isArray(o.verbs) && (Array.isArray(o.resources) || Array.isArray(o.nonResourceURLs));
}
