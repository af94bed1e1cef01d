/**
 * What a role can do, judged by the power it gives and not by how its rules are spelled: the one
 * evaluator the components that generate RBAC and the k8s-rbac policy pack share (issue 29,
 * point 5). Pure: no Pulumi imports. Each power is a request the API server would allow, probed
 * with the authorizer's own matching (`ruleGrants`, rbac.ts), so `*` verbs imply escalate, bind
 * and impersonate, `*` resources imply Secrets, `*\/token` implies token minting, and so on.
 *
 * Upstream rules encoded here (kubernetes/kubernetes unless named):
 * - matching: pkg/apis/rbac/v1/evaluation_helpers.go (`VerbMatches`, `APIGroupMatches`,
 *   `ResourceMatches`, `ResourceNameMatches`, `NonResourceURLMatches`: `*`, or a prefix ending in `*`);
 * - escalation: pkg/registry/rbac/escalation_check.go (`escalate` on roles/clusterroles lets a
 *   writer grant what it does not hold) and pkg/registry/rbac/rolebinding/policybased/storage.go
 *   (`bind` on the referenced role, which `resourceNames` narrows to named roles);
 *   pkg/registry/rbac/validation/rule.go (`ConfirmNoEscalation`);
 * - impersonation: staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go
 *   (`impersonate` on users, groups, serviceaccounts; userextras/<key> and uids of authentication.k8s.io);
 * - token minting: `create` on `serviceaccounts/token` (TokenRequest, pkg/registry/core/serviceaccount);
 * - aggregation: pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go
 *   (a ClusterRole with an `aggregationRule` gets the rules of every ClusterRole its selectors
 *   match, whatever its own `rules` say);
 * - OpenShift: authorization.openshift.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding
 *   (openshift/api authorization/v1/types.go) are the same RBAC under legacy kinds, served by
 *   openshift-apiserver; `system:authenticated:oauth` is every user who logged in through the
 *   OAuth server (openshift/origin bootstrap policy binds `self-provisioner` to it).
 */
import { LabelSelector } from "./label-selector";
import { ALL, CLUSTER_ADMIN_ROLE, isWildcardRule, PolicyRule, RbacSubject, ruleGrants, ruleMatchesGroup } from "./rbac";

/** The API groups whose Role/ClusterRole/…Binding kinds are RBAC: Kubernetes', and OpenShift's legacy ones. */
export const RBAC_GROUPS = ["rbac.authorization.k8s.io", "authorization.openshift.io"] as const;

/** The powers a role can give beyond its listed rules' face value. */
export const POWERS = {
    everything: "every verb on every resource of every API group",
    escalate: "escalate: write roles granting what its holder does not have",
    bind: "bind: bind any role, whatever its holder has",
    impersonate: "impersonate: act as any user, group or service account",
    "read-secrets": "read every Secret in reach (get, list or watch)",
    "mint-tokens": "mint tokens for any service account (create serviceaccounts/token)",
    "exec-pods": "run commands in any pod (create pods/exec or pods/attach)",
    "non-resource-urls": 'every non-resource URL ("*")',
    aggregation: "the rules of every ClusterRole its aggregationRule selects",
} as const;
export type Power = keyof typeof POWERS;

interface Probe {
    power: Power;
    group: string;
    resource: string;
    verb: string;
}

const probes = (power: Power, groups: readonly string[], resources: readonly string[], verbs: readonly string[]): Probe[] =>
    groups.flatMap((group) => resources.flatMap((resource) => verbs.map((verb) => ({ power, group, resource, verb }))));

/** Requests that each stand for a power (the first one a rule allows is the one reported). */
const PROBES: readonly Probe[] = [
    ...probes("escalate", RBAC_GROUPS, ["clusterroles", "roles"], ["escalate"]),
    ...probes("bind", RBAC_GROUPS, ["clusterroles", "roles"], ["bind"]),
    ...probes("impersonate", [""], ["users", "groups", "serviceaccounts"], ["impersonate"]),
    ...probes("impersonate", ["authentication.k8s.io"], ["uids", "userextras/scopes"], ["impersonate"]),
    ...probes("read-secrets", [""], ["secrets"], ["get", "list", "watch"]),
    ...probes("mint-tokens", [""], ["serviceaccounts/token"], ["create"]),
    ...probes("exec-pods", [""], ["pods/exec", "pods/attach"], ["create"]),
];

/**
 * Roles `bind` or `impersonate` may name without giving power away: a `bind` narrowed by
 * resourceNames to roles that are not themselves powerful, an `impersonate` narrowed to names
 * that are not the cluster's superusers. Names here are what the API server checks against.
 */
export const POWERFUL_ROLE_NAMES = ["cluster-admin", "admin", "edit", "sudoer", "system:masters"] as const;
export const SUPERUSER_NAMES = ["system:admin", "system:masters", "system:kube-controller-manager"] as const;

/** One power a rule gives, with the request that shows it. */
export interface RulePower {
    power: Power;
    /** `verb resource (group "g")`, or the URL for non-resource URLs. */
    request: string;
}

const describeRequest = (p: Probe) => `${p.verb} ${p.resource} (group ${JSON.stringify(p.group)})`;

/** Whether a resourceNames restriction keeps `power` narrow (see POWERFUL_ROLE_NAMES, SUPERUSER_NAMES). */
function narrowedByNames(power: Power, names: readonly string[]): boolean {
    if (names.length === 0) {
        return false;
    }
    switch (power) {
        case "bind":
        case "escalate":
            return !names.some((n) => (POWERFUL_ROLE_NAMES as readonly string[]).includes(n));
        case "impersonate":
            return !names.some((n) => (SUPERUSER_NAMES as readonly string[]).includes(n) || n.startsWith("system:serviceaccount"));
        default:
            // Named Secrets, tokens of named service accounts, exec into named pods: narrow.
            return true;
    }
}

/** A `*` verb on `*` resources of every API group (`*`): everything there is. */
function isEverythingRule(rule: Partial<PolicyRule>): boolean {
    return isWildcardRule(rule) && (rule.apiGroups ?? []).includes(ALL);
}

/** The powers one rule gives, one entry per power, in POWERS order. */
export function rulePowers(rule: Partial<PolicyRule>): RulePower[] {
    const found = new Map<Power, RulePower>();
    if (isEverythingRule(rule)) {
        found.set("everything", { power: "everything", request: '"*" on "*" of API groups ["*"]' });
    }
    for (const probe of PROBES) {
        if (!found.has(probe.power) && ruleGrants(rule, probe) && !narrowedByNames(probe.power, rule.resourceNames ?? [])) {
            found.set(probe.power, { power: probe.power, request: describeRequest(probe) });
        }
    }
    if ((rule.verbs ?? []).length > 0 && (rule.nonResourceURLs ?? []).includes(ALL)) {
        found.set("non-resource-urls", { power: "non-resource-urls", request: 'nonResourceURLs ["*"]' });
    }
    return (Object.keys(POWERS) as Power[]).flatMap((p) => (found.has(p) ? [found.get(p) as RulePower] : []));
}

/** Whether `rules` allow `request` on some object: the authorizer's union over rules. */
export function rulesAllow(rules: readonly Partial<PolicyRule>[], request: { group: string; resource: string; verb: string }): boolean {
    return rules.some((rule) => ruleGrants(rule, request));
}

// ---------------------------------------------------------------- aggregation

/** The labels of the built-in aggregated roles: a ClusterRole selecting one of them takes their rules. */
const BUILT_IN_AGGREGATION_PREFIXES = ["rbac.authorization.k8s.io/aggregate-to-", "authorization.openshift.io/aggregate-to-"] as const;

/**
 * Why an aggregationRule gives power its own rules do not show: a selector that selects every
 * ClusterRole (empty), that uses expressions (what they select cannot be bounded here), or that
 * selects the labels of built-in aggregated roles (admin, edit, view, cluster-reader…, which read
 * Secrets or more). Undefined when each selector only names labels of the stack's own choosing.
 */
export function aggregationPower(aggregationRule: { clusterRoleSelectors?: readonly LabelSelector[] } | undefined): string | undefined {
    const selectors = aggregationRule?.clusterRoleSelectors;
    if (selectors === undefined) {
        return undefined;
    }
    for (const [index, selector] of selectors.entries()) {
        const labels = Object.keys(selector.matchLabels ?? {});
        if ((selector.matchExpressions ?? []).length > 0) {
            return `clusterRoleSelectors[${index}] uses matchExpressions, whose selection cannot be bounded`;
        }
        if (labels.length === 0) {
            return `clusterRoleSelectors[${index}] is empty and selects every ClusterRole, cluster-admin's rules included`;
        }
        const builtIn = labels.find((l) => BUILT_IN_AGGREGATION_PREFIXES.some((p) => l.startsWith(p)));
        if (builtIn !== undefined) {
            return `clusterRoleSelectors[${index}] selects ${JSON.stringify(builtIn)}, the label of built-in aggregated roles`;
        }
    }
    return undefined;
}

// ---------------------------------------------------------------- bindings

/**
 * Subjects that stand for everyone, for every logged-in user, or for every workload of the
 * cluster or of a namespace: a binding to one of them gives the role's power to all of them.
 */
export const BROAD_GROUPS = [
    "system:authenticated",
    "system:authenticated:oauth",
    "system:unauthenticated",
    "system:serviceaccounts",
] as const;

/** A subject that reaches many callers (see BROAD_GROUPS), `system:anonymous`, or all service accounts of a namespace. */
export function isBroadSubject(subject: RbacSubject): boolean {
    const name = subject.name ?? "";
    if (subject.kind === "User") {
        return name === "system:anonymous";
    }
    return subject.kind === "Group" && ((BROAD_GROUPS as readonly string[]).includes(name) || name.startsWith("system:serviceaccounts:"));
}

/**
 * The powers of the built-in ClusterRoles a binding may name without the stack declaring them
 * (kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: admin and edit read and
 * write Secrets, impersonate service accounts and mint their tokens; openshift/origin bootstrap
 * policy: `sudoer` impersonates system:admin).
 */
export const BUILT_IN_ROLE_POWERS: Readonly<Record<string, readonly Power[]>> = {
    "cluster-admin": ["everything"],
    admin: ["impersonate", "read-secrets", "mint-tokens", "exec-pods"],
    edit: ["impersonate", "read-secrets", "mint-tokens", "exec-pods"],
    sudoer: ["impersonate"],
};

/** The powers of a role given its rules (and aggregationRule), in POWERS order, each once. */
export function rolePowers(role: {
    rules?: readonly Partial<PolicyRule>[];
    aggregationRule?: { clusterRoleSelectors?: readonly LabelSelector[] };
}): Power[] {
    const found = new Set<Power>((role.rules ?? []).flatMap((rule) => rulePowers(rule).map((p) => p.power)));
    if (aggregationPower(role.aggregationRule) !== undefined) {
        found.add("aggregation");
    }
    return (Object.keys(POWERS) as Power[]).filter((p) => found.has(p));
}

/**
 * The powers a binding gives: the declared role's (when the caller knows it), else a built-in
 * ClusterRole's by name; undefined when the role is neither (the caller cannot judge it).
 */
export function bindingPowers(
    roleRef: { kind?: string; name?: string },
    declared: { rules?: readonly Partial<PolicyRule>[]; aggregationRule?: { clusterRoleSelectors?: readonly LabelSelector[] } } | undefined,
): Power[] | undefined {
    if (declared) {
        return rolePowers(declared);
    }
    if (roleRef.kind === "ClusterRole" && roleRef.name !== undefined && roleRef.name in BUILT_IN_ROLE_POWERS) {
        return [...BUILT_IN_ROLE_POWERS[roleRef.name]];
    }
    return undefined;
}

// ---------------------------------------------------------------- grants no role should make

/** Verbs that let their holder act beyond its own permissions (kubernetes.io/docs/concepts/security/rbac-good-practices). */
export const ESCALATION_VERBS = ["escalate", "bind", "impersonate"] as const;

/**
 * Groups that stand for everyone, or for every service account: a binding to one of them gives
 * the role to every caller the API server authenticates (or does not), or to every workload.
 */
export const EVERYONE_SUBJECTS: readonly Required<Pick<RbacSubject, "kind" | "name">>[] = [
    { kind: "Group", name: "system:authenticated" },
    { kind: "Group", name: "system:unauthenticated" },
    { kind: "User", name: "system:anonymous" },
    { kind: "Group", name: "system:serviceaccounts" },
];

export function isEveryoneSubject(subject: RbacSubject): boolean {
    return EVERYONE_SUBJECTS.some((s) => s.kind === subject.kind && s.name === subject.name);
}

/** One way a role's rule grants too much: the check's name and what it grants. */
export interface GrantProblem {
    check: "secrets-wildcard-verbs" | "all-resources" | "escalation-verbs" | "effective-power";
    message: string;
}

const quoted = (values: readonly string[] | undefined) => JSON.stringify(values ?? []);

/** Every verb (`*`) on Secrets (or one of their subresources) of the core group; undefined otherwise. `*` on `*` is isWildcardRule's. */
export function secretsWildcardGrant(rule: Partial<PolicyRule>): string | undefined {
    const resources = rule.resources ?? [];
    if (
        isWildcardRule(rule) ||
        !(rule.verbs ?? []).includes(ALL) ||
        !ruleMatchesGroup(rule, "") ||
        !resources.some((r) => r === "secrets" || r.startsWith("secrets/"))
    ) {
        return undefined;
    }
    return `grants every verb ("*") on Secrets (apiGroups ${quoted(rule.apiGroups)}, resources ${quoted(resources)})`;
}

/** Verbs on every resource (`*`) of the core group or of every group: a read-everything role reads Secrets too. */
export function allResourcesGrant(rule: Partial<PolicyRule>): string | undefined {
    const verbs = rule.verbs ?? [];
    if (isWildcardRule(rule) || !(rule.resources ?? []).includes(ALL) || verbs.length === 0 || !ruleMatchesGroup(rule, "")) {
        return undefined;
    }
    return `grants ${quoted(verbs)} on every resource ("*") of API groups ${quoted(rule.apiGroups)}, Secrets included`;
}

/**
 * The escalation powers (escalate, bind, impersonate) a rule gives, named or implied by a `*`
 * verb, and not narrowed by resourceNames to harmless names: rbac-power.ts judges them.
 */
export function escalationGrant(rule: Partial<PolicyRule>): string | undefined {
    if (isEverythingRule(rule)) {
        // "*" on "*" of every group is k8s-no-wildcard-access's to report.
        return undefined;
    }
    const powers = rulePowers(rule)
        .map((p) => p.power)
        .filter((p): p is (typeof ESCALATION_VERBS)[number] => (ESCALATION_VERBS as readonly string[]).includes(p));
    if (powers.length === 0) {
        return undefined;
    }
    const verbs = rule.verbs ?? [];
    const named = verbs.filter((v) => (powers as readonly string[]).includes(v));
    const what = named.length === powers.length ? quoted(named) : `${quoted(powers)} (through verbs ${quoted(verbs)})`;
    return `grants ${what} on ${quoted(rule.resources)} (apiGroups ${quoted(rule.apiGroups)}): its holder can grant itself or act as anyone`;
}

/**
 * The other powers a rule gives by the requests it allows (rbac-power.ts): Secrets read with
 * get/list/watch spelled out, token minting, exec into pods, every non-resource URL. Secrets
 * under a `*` verb or `*` resources are the secrets-wildcard-verbs and all-resources checks'.
 */
export function effectivePowerGrant(rule: Partial<PolicyRule>): string | undefined {
    const shadowed = secretsWildcardGrant(rule) !== undefined || allResourcesGrant(rule) !== undefined || isWildcardRule(rule);
    const powers = rulePowers(rule).filter(
        (p) =>
            EFFECTIVE_POWERS.includes(p.power) &&
            !(shadowed && p.power === "read-secrets") &&
            !(isWildcardRule(rule) && p.power !== "non-resource-urls"),
    );
    if (powers.length === 0) {
        return undefined;
    }
    return `gives ${powers.map((p) => `${POWERS[p.power]} [${p.request}]`).join("; ")}`;
}
const EFFECTIVE_POWERS: readonly Power[] = ["read-secrets", "mint-tokens", "exec-pods", "non-resource-urls"];

/** The checks of what a Role/ClusterRole rule must not grant, besides `*` on `*` (isWildcardRule), by name. */
const GRANT_CHECKS = {
    "secrets-wildcard-verbs": secretsWildcardGrant,
    "all-resources": allResourcesGrant,
    "escalation-verbs": escalationGrant,
    "effective-power": effectivePowerGrant,
} as const;

/** Every grant of `rule` that no role should make besides `*` on `*`, one problem per check; [] for a rule within bounds. */
export function grantProblems(rule: Partial<PolicyRule>): GrantProblem[] {
    return (Object.keys(GRANT_CHECKS) as GrantProblem["check"][]).flatMap((check) => {
        const message = GRANT_CHECKS[check](rule);
        return message === undefined ? [] : [{ check, message }];
    });
}

/** Whether a role's rules give everything: cluster-admin by name, or a `*` verb on `*` resources of every group. */
export function givesEverything(roleRef: { kind?: string; name?: string }, rules: readonly Partial<PolicyRule>[] | undefined): boolean {
    if (roleRef.kind === "ClusterRole" && roleRef.name === CLUSTER_ADMIN_ROLE) {
        return true;
    }
    return (rules ?? []).some(isEverythingRule);
}
