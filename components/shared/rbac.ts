/**
 * How Kubernetes RBAC matches a request against a PolicyRule, and the RBAC shapes no platform
 * should ship (a `*` verb on `*` resources, cluster-admin bound to a service account), as pure
 * functions. Components that generate RBAC and the k8s-rbac policy pack share them. Matching is
 * the API server's authorizer's, function for function (kubernetes
 * pkg/apis/rbac/v1/evaluation_helpers.go `VerbMatches`, `APIGroupMatches`, `ResourceMatches`,
 * `ResourceNameMatches`, `NonResourceURLMatches`; plugin/pkg/auth/authorizer/rbac/rbac.go
 * `RuleAllows`). No Pulumi imports. Its answers are held to the API server's SubjectAccessReview
 * answers over a generated population by tests/real/rbac-authorizer.real.ts (docs/policy-packs.md).
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

/** A request for `verb` on `resource` (optionally `resource/subresource`) in `group`, on some object. */
export interface RbacRequest {
    group: string;
    resource: string;
    verb: string;
}

/**
 * A resource request as the authorizer sees it (k8s.io/apiserver `authorizer.Attributes`): the
 * namespace is "" for cluster-scoped objects and for requests across all namespaces, the name ""
 * for collections (list, watch, create).
 */
export interface ResourceRequest {
    verb: string;
    group: string;
    resource: string;
    subresource?: string;
    name?: string;
    namespace?: string;
}

/** A request for a URL that is not a resource (`/healthz`, `/metrics`, `/logs/...`). */
export interface NonResourceRequest {
    verb: string;
    path: string;
}

export type AuthorizationRequest = ResourceRequest | NonResourceRequest;

export function isNonResourceRequest(request: AuthorizationRequest): request is NonResourceRequest {
    return "path" in request;
}

/** `VerbMatches`: `*` or the verb. */
export function ruleMatchesVerb(rule: Partial<PolicyRule>, verb: string): boolean {
    return (rule.verbs ?? []).some((v) => v === ALL || v === verb);
}

/** `APIGroupMatches`: `*` or the group. */
export function ruleMatchesGroup(rule: Partial<PolicyRule>, group: string): boolean {
    return (rule.apiGroups ?? []).some((g) => g === ALL || g === group);
}

/**
 * `ResourceMatches`: `*`, the combined `resource/subresource`, or `*\/<subresource>` when the
 * request names a subresource. Nothing else is a pattern: `pods/*` is a literal that matches no
 * request the API server makes.
 */
export function ruleMatchesSubresource(rule: Partial<PolicyRule>, resource: string, subresource: string | undefined): boolean {
    const combined = subresource ? `${resource}/${subresource}` : resource;
    return (rule.resources ?? []).some(
        (r) => r === ALL || r === combined || (subresource !== undefined && subresource !== "" && r === `${ALL}/${subresource}`),
    );
}

/** `ResourceMatches` for a `resource` that may carry its subresource (`pods/exec`). */
export function ruleMatchesResource(rule: Partial<PolicyRule>, resource: string): boolean {
    const slash = resource.indexOf("/");
    return slash < 0
        ? ruleMatchesSubresource(rule, resource, undefined)
        : ruleMatchesSubresource(rule, resource.slice(0, slash), resource.slice(slash + 1));
}

/** `ResourceNameMatches`: a rule without resourceNames matches every name, "" (a collection's) included. */
export function ruleMatchesName(rule: Partial<PolicyRule>, name: string): boolean {
    const names = rule.resourceNames ?? [];
    return names.length === 0 || names.includes(name);
}

/** `NonResourceURLMatches`: `*`, the URL, or a prefix ending in `*` (every trailing `*` trimmed). */
export function ruleMatchesNonResourceURL(rule: Partial<PolicyRule>, path: string): boolean {
    return urlsMatch(rule.nonResourceURLs ?? [], path);
}

function urlsMatch(urls: readonly string[], path: string): boolean {
    return urls.some((url) => url === ALL || url === path || (url.endsWith(ALL) && path.startsWith(url.replace(/\*+$/, ""))));
}

/** A rule's lists as sets, so each request is a few lookups (the evaluator asks thousands per role). */
interface CompiledRule {
    verbs: ReadonlySet<string>;
    groups: ReadonlySet<string>;
    resources: ReadonlySet<string>;
    names: ReadonlySet<string>;
    urls: readonly string[];
}

const compiled = new WeakMap<object, CompiledRule>();

function compile(rule: Partial<PolicyRule>): CompiledRule {
    let c = compiled.get(rule);
    if (!c) {
        c = {
            verbs: new Set(rule.verbs ?? []),
            groups: new Set(rule.apiGroups ?? []),
            resources: new Set(rule.resources ?? []),
            names: new Set(rule.resourceNames ?? []),
            urls: rule.nonResourceURLs ?? [],
        };
        compiled.set(rule, c);
    }
    return c;
}

/**
 * `RuleAllows` (kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go): whether one rule allows the
 * request, exactly as the RBAC authorizer decides it (the same matching as the functions above,
 * over the rule's lists as sets).
 */
export function ruleAllows(rule: Partial<PolicyRule>, request: AuthorizationRequest): boolean {
    return compiledAllows(compile(rule), request);
}

/**
 * The index of the first of `rules` that allows a request, as a function: each rule compiled
 * once, for a caller that asks a whole request set of one rule set.
 */
export function firstAllowing(rules: readonly Partial<PolicyRule>[]): (request: AuthorizationRequest) => number {
    const all = rules.map(compile);
    return (request) => {
        for (let i = 0; i < all.length; i++) {
            if (compiledAllows(all[i], request)) {
                return i;
            }
        }
        return -1;
    };
}

function compiledAllows(c: CompiledRule, request: AuthorizationRequest): boolean {
    if (!(c.verbs.has(ALL) || c.verbs.has(request.verb))) {
        return false;
    }
    if (isNonResourceRequest(request)) {
        return urlsMatch(c.urls, request.path);
    }
    if (!(c.groups.has(ALL) || c.groups.has(request.group))) {
        return false;
    }
    const sub = request.subresource;
    const combined = sub ? `${request.resource}/${sub}` : request.resource;
    if (!(c.resources.has(ALL) || c.resources.has(combined) || (sub !== undefined && sub !== "" && c.resources.has(`${ALL}/${sub}`)))) {
        return false;
    }
    return c.names.size === 0 || c.names.has(request.name ?? "");
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

/**
 * Groups that stand for everyone, for every logged-in user, or for every workload of the
 * cluster: a binding to one of them gives the role's power to all of them (k8s.io/apiserver
 * pkg/authentication/user: system:authenticated, system:unauthenticated, system:serviceaccounts;
 * OpenShift's system:authenticated:oauth is every user who logged in through its OAuth server).
 */
export const BROAD_GROUPS = [
    "system:authenticated",
    "system:authenticated:oauth",
    "system:unauthenticated",
    "system:serviceaccounts",
] as const;

/** A subject that reaches many callers (BROAD_GROUPS), `system:anonymous`, or every service account of a namespace. */
export function isBroadSubject(subject: RbacSubject): boolean {
    const name = subject.name ?? "";
    if (subject.kind === "User") {
        return name === "system:anonymous";
    }
    return subject.kind === "Group" && ((BROAD_GROUPS as readonly string[]).includes(name) || name.startsWith("system:serviceaccounts:"));
}
