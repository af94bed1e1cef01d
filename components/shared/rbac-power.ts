/**
 * What a set of RBAC objects lets a user do, decided as the API server decides it: the one
 * evaluator the k8s-rbac policy pack, `npm run policy:config` and the operator population
 * report share (issue 36). Pure: no Pulumi imports.
 *
 * Upstream behaviour encoded here (kubernetes/kubernetes unless named):
 * - one rule: plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows` over
 *   pkg/apis/rbac/v1/evaluation_helpers.go (components/shared/rbac.ts, `ruleAllows`);
 * - which rules apply: pkg/registry/rbac/validation/rule.go `VisitRulesFor`: every
 *   ClusterRoleBinding whose subjects apply; RoleBindings only for a request with a namespace, and
 *   only those in it; a RoleBinding's Role is looked up in the binding's namespace; `appliesToUser`:
 *   a User subject by name, a Group by one of the user's groups, a ServiceAccount by the user name
 *   `system:serviceaccount:<namespace>:<name>` (its namespace defaulting to the binding's);
 * - the superuser group: pkg/kubeapiserver/authorizer/config.go puts
 *   `authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)` (`system:masters`) before
 *   every other authorizer, so its members are allowed everything;
 * - aggregation: pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go
 *   `syncClusterRole`: a ClusterRole with an aggregationRule gets the union of the rules of every
 *   other ClusterRole one of its selectors matches, replacing its own `rules` (an empty selector
 *   matches every ClusterRole; an empty union leaves the role's own rules, unless the controller
 *   had already applied a union to it: then server-side apply removes them, and the evaluator
 *   keeps the written rules, the larger power); the controller requeues every aggregated role on any ClusterRole
 *   change, so chains (view into edit into admin) settle at the least fixed point computed here.
 *   Until the controller has run, the role holds the rules it was written with: `ownRules`.
 *
 * `RbacAuthorizer.allows` is held to the API server's SubjectAccessReview answers over a
 * generated population by tests/real/rbac-authorizer.real.ts (docs/policy-packs.md).
 */
import { LabelSelector, requirementMatches, requirementsOf, SelectorRequirement } from "./label-selector";
import { AuthorizationRequest, isNonResourceRequest, PolicyRule, RbacSubject, ruleAllows } from "./rbac";

/** The API groups whose Role/ClusterRole/…Binding kinds are RBAC: Kubernetes', and OpenShift's legacy ones (rbac-openshift.ts). */
export const RBAC_GROUPS = ["rbac.authorization.k8s.io", "authorization.openshift.io"] as const;

/** The group whose members the API server allows everything, before RBAC is asked (k8s.io/apiserver pkg/authentication/user `SystemPrivilegedGroup`). */
export const PRIVILEGED_GROUP = "system:masters";

export interface ClusterRoleObject {
    name: string;
    labels: Readonly<Record<string, string>>;
    /** The rules as written (what the role holds until the aggregation controller overwrites them). */
    rules: readonly Partial<PolicyRule>[];
    aggregationRule?: { clusterRoleSelectors?: readonly LabelSelector[] };
    /**
     * Label keys (or key prefixes ending in `/` or `.`) whose values are not known: a role that
     * stands for a family the cluster may hold (the ClusterRoles OLM generates for any operator),
     * which a selector may match whatever value it asks for.
     */
    openLabels?: readonly string[];
    /** Where the role comes from, for messages (`the stack`, `Kubernetes' bootstrap policy`, …). */
    source?: string;
}

export interface RoleObject {
    name: string;
    namespace: string;
    rules: readonly Partial<PolicyRule>[];
    source?: string;
}

export interface BindingObject {
    kind: "RoleBinding" | "ClusterRoleBinding";
    name: string;
    /** The RoleBinding's namespace; undefined for a ClusterRoleBinding. */
    namespace?: string;
    roleRef: { kind: string; name: string };
    subjects: readonly RbacSubject[];
    source?: string;
}

export interface RbacObjects {
    clusterRoles: readonly ClusterRoleObject[];
    roles: readonly RoleObject[];
    bindings: readonly BindingObject[];
}

/** Who asks: a user name and its groups, as authentication (or a SubjectAccessReview) gives them. */
export interface UserInfo {
    name: string;
    groups: readonly string[];
}

export const EMPTY_OBJECTS: RbacObjects = { clusterRoles: [], roles: [], bindings: [] };

/** The union of several object sets; later sets replace earlier objects of the same kind, namespace and name. */
export function mergeObjects(...sets: readonly RbacObjects[]): RbacObjects {
    const clusterRoles = new Map<string, ClusterRoleObject>();
    const roles = new Map<string, RoleObject>();
    const bindings = new Map<string, BindingObject>();
    for (const set of sets) {
        set.clusterRoles.forEach((r) => clusterRoles.set(r.name, r));
        set.roles.forEach((r) => roles.set(`${r.namespace}/${r.name}`, r));
        set.bindings.forEach((b) => bindings.set(`${b.kind}/${b.namespace ?? ""}/${b.name}`, b));
    }
    return { clusterRoles: [...clusterRoles.values()], roles: [...roles.values()], bindings: [...bindings.values()] };
}

// ---------------------------------------------------------------- selectors over roles

function isOpenKey(role: ClusterRoleObject, key: string): boolean {
    return (role.openLabels ?? []).some((open) => (open.endsWith("/") || open.endsWith(".") ? key.startsWith(open) : key === open));
}

function requirementMayMatch(requirement: SelectorRequirement, role: ClusterRoleObject): boolean {
    if (!Object.prototype.hasOwnProperty.call(role.labels, requirement.key) && isOpenKey(role, requirement.key)) {
        // A key whose value nobody knows: the role may carry any value, or none.
        return ["In", "NotIn", "Exists", "DoesNotExist"].includes(requirement.operator);
    }
    // Another operator makes apimachinery's LabelSelectorAsSelector fail: the controller then skips the role.
    return requirementMatches(requirement, role.labels);
}

/**
 * Answers kept per selector and role object: a pack builds an authorizer over the well-known roles
 * plus the one it judges, for every role of the stack, and the well-known pairs answer the same
 * each time. Neither object is mutated once built.
 */
const selects = new WeakMap<LabelSelector, WeakMap<ClusterRoleObject, boolean>>();

/** Whether an aggregationRule selector selects `role` (for roles with open labels: whether it may). */
export function selectorSelectsRole(selector: LabelSelector, role: ClusterRoleObject): boolean {
    let byRole = selects.get(selector);
    if (byRole === undefined) {
        byRole = new WeakMap();
        selects.set(selector, byRole);
    }
    let answer = byRole.get(role);
    if (answer === undefined) {
        answer = requirementsOf(selector).every((r) => requirementMayMatch(r, role));
        byRole.set(role, answer);
    }
    return answer;
}

/**
 * `names` ordered so that each comes after every name `dependsOn` gives for it; undefined when
 * they depend on each other in a cycle.
 */
function dependencyOrder(names: readonly string[], dependsOn: (name: string) => readonly string[]): string[] | undefined {
    const order: string[] = [];
    const state = new Map<string, "visiting" | "done">();
    const visit = (name: string): boolean => {
        const seen = state.get(name);
        if (seen === "done") return true;
        if (seen === "visiting") return false;
        state.set(name, "visiting");
        for (const other of dependsOn(name)) {
            if (!visit(other)) return false;
        }
        state.set(name, "done");
        order.push(name);
        return true;
    };
    return names.every(visit) ? order : undefined;
}

/** The aggregators (keys of `matched`) that are among `names` or select one of them, directly or through other aggregators. */
function reaching(matched: ReadonlyMap<string, readonly string[]>, names: ReadonlySet<string>): Set<string> {
    const found = new Set<string>();
    for (let grew = true; grew;) {
        grew = false;
        for (const [name, selected] of matched) {
            if (!found.has(name) && (names.has(name) || selected.some((other) => names.has(other) || found.has(other)))) {
                found.add(name);
                grew = true;
            }
        }
    }
    return found;
}

/** Whether one of `aggregator`'s selectors selects `other` (never itself). */
function selectsRole(aggregator: ClusterRoleObject, other: ClusterRoleObject): boolean {
    return (
        other.name !== aggregator.name &&
        (aggregator.aggregationRule?.clusterRoleSelectors ?? []).some((s) => selectorSelectsRole(s, other))
    );
}

// ---------------------------------------------------------------- the evaluator

/** Rule keys kept per rule object: the aggregation's fixed point unions the same well-known rules for every role judged. */
const ruleKeys = new WeakMap<Partial<PolicyRule>, string>();

function ruleKey(rule: Partial<PolicyRule>): string {
    let key = ruleKeys.get(rule);
    if (key === undefined) {
        key = JSON.stringify([
            rule.apiGroups ?? [],
            rule.resources ?? [],
            rule.verbs ?? [],
            rule.resourceNames ?? [],
            rule.nonResourceURLs ?? [],
        ]);
        ruleKeys.set(rule, key);
    }
    return key;
}

/** The rules of `after` that no rule of `before` equals (same lists, in the same order). */
export function rulesNotIn(after: readonly Partial<PolicyRule>[], before: readonly Partial<PolicyRule>[]): Partial<PolicyRule>[] {
    const keys = new Set(before.map(ruleKey));
    return after.filter((rule) => !keys.has(ruleKey(rule)));
}

function union(into: Map<string, Partial<PolicyRule>>, rules: readonly Partial<PolicyRule>[]): boolean {
    let grew = false;
    for (const rule of rules) {
        const key = ruleKey(rule);
        if (!into.has(key)) {
            into.set(key, rule);
            grew = true;
        }
    }
    return grew;
}

/** The user a binding subject stands for, as the API server authenticates it (its implicit groups included). */
export function userOfSubject(subject: RbacSubject, bindingNamespace?: string): UserInfo | undefined {
    const name = subject.name ?? "";
    switch (subject.kind) {
        case "ServiceAccount": {
            const namespace = subject.namespace || bindingNamespace;
            return namespace
                ? {
                      name: `system:serviceaccount:${namespace}:${name}`,
                      groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
                  }
                : undefined;
        }
        case "User":
            return { name, groups: name === "system:anonymous" ? ["system:unauthenticated"] : ["system:authenticated"] };
        case "Group":
            // A member of the group: who else it is does not matter to what the group is given.
            return { name: "", groups: [name] };
        default:
            return undefined;
    }
}

/**
 * The RBAC authorizer over a fixed set of objects: which rules each ClusterRole holds once the
 * aggregation controller has settled, and whether a user may make a request.
 */
export class RbacAuthorizer {
    readonly objects: RbacObjects;
    private readonly clusterRoles = new Map<string, ClusterRoleObject>();
    private readonly roles = new Map<string, RoleObject>();
    private readonly clusterBindings: BindingObject[] = [];
    private readonly roleBindingsByNamespace = new Map<string, BindingObject[]>();
    private aggregated: Map<string, Partial<PolicyRule>[]> | undefined;
    private matchedNames: ReadonlyMap<string, readonly string[]> | undefined;
    /** Set by `withClusterRoles`: the authorizer these objects extend, and the names of the roles added to it. */
    private reuse: { base: RbacAuthorizer; added: ReadonlySet<string> } | undefined;

    constructor(objects: RbacObjects) {
        this.objects = objects;
        objects.clusterRoles.forEach((r) => this.clusterRoles.set(r.name, r));
        objects.roles.forEach((r) => this.roles.set(`${r.namespace}/${r.name}`, r));
        for (const binding of objects.bindings) {
            if (binding.kind === "ClusterRoleBinding") {
                this.clusterBindings.push(binding);
            } else if (binding.namespace !== undefined) {
                const list = this.roleBindingsByNamespace.get(binding.namespace) ?? [];
                list.push(binding);
                this.roleBindingsByNamespace.set(binding.namespace, list);
            }
        }
    }

    clusterRole(name: string): ClusterRoleObject | undefined {
        return this.clusterRoles.get(name);
    }

    role(namespace: string, name: string): RoleObject | undefined {
        return this.roles.get(`${namespace}/${name}`);
    }

    /** Every aggregated role's rules at the controller's fixed point (computed once). */
    private aggregation(): Map<string, Partial<PolicyRule>[]> {
        if (this.aggregated) {
            return this.aggregated;
        }
        const aggregators = [...this.clusterRoles.values()].filter((r) => r.aggregationRule !== undefined);
        const matched = this.matched();
        // As the controller runs: every aggregator holds the union of what the roles it selects hold. An empty union
        // leaves the role's rules as they are: the controller's apply then carries no rules (`WithRules()` of nothing)
        // and server-side apply keeps what another manager wrote (clusterroleaggregation_controller.go
        // `applyClusterRoles`; seen by the SubjectAccessReview differential). If the controller had applied a union
        // before (a patch emptied the selected roles later), it owned the rules and they are removed instead; the
        // differential saw both. Kept rules are the larger power, the safe answer for a pack.
        const order = dependencyOrder(
            aggregators.map((r) => r.name),
            (name) => (matched.get(name) ?? []).filter((other) => this.clusterRoles.get(other)?.aggregationRule !== undefined),
        );
        const settled = (name: string, current: ReadonlyMap<string, readonly Partial<PolicyRule>[]>) => {
            const into = new Map<string, Partial<PolicyRule>>();
            for (const other of matched.get(name) ?? []) {
                union(into, current.get(other) ?? (this.clusterRoles.get(other) as ClusterRoleObject).rules);
            }
            return into.size > 0 ? [...into.values()] : [...(this.clusterRoles.get(name) as ClusterRoleObject).rules];
        };
        if (order !== undefined) {
            // No aggregator selects itself through others: the equations have one solution, which each aggregator
            // reaches once those it selects have theirs. An aggregator of `reuse` whose selection reaches no role added
            // to it holds what it holds there.
            const current = new Map<string, readonly Partial<PolicyRule>[]>();
            const changedByAdded = this.reuse && reaching(matched, this.reuse.added);
            for (const name of order) {
                const kept = changedByAdded && !changedByAdded.has(name) ? this.reuse?.base.aggregation().get(name) : undefined;
                current.set(name, kept ?? settled(name, current));
            }
            this.aggregated = new Map(aggregators.map((r) => [r.name, current.get(r.name) as Partial<PolicyRule>[]]));
            return this.aggregated;
        }
        // A cycle of aggregators: as the controller would, from the rules each role was written with, every aggregator
        // recomputed from what the others hold now, until nothing changes (or one round per aggregator has passed).
        let current = new Map<string, readonly Partial<PolicyRule>[]>(aggregators.map((r) => [r.name, r.rules]));
        for (let round = 0; round <= aggregators.length + 1; round++) {
            let changed = false;
            const next = new Map<string, readonly Partial<PolicyRule>[]>();
            for (const aggregator of aggregators) {
                const rules = settled(aggregator.name, current);
                const before = current.get(aggregator.name) ?? [];
                changed ||= rules.length !== before.length || rules.some((r, i) => ruleKey(r) !== ruleKey(before[i]));
                next.set(aggregator.name, rules);
            }
            current = next;
            if (!changed) break;
        }
        this.aggregated = new Map([...current].map(([name, rules]) => [name, [...rules]]));
        return this.aggregated;
    }

    /** The names of the ClusterRoles each aggregated role's selectors match (itself excluded), in the objects' order. */
    private matched(): ReadonlyMap<string, readonly string[]> {
        if (this.matchedNames === undefined) {
            const all = [...this.clusterRoles.values()];
            this.matchedNames = new Map(
                all
                    .filter((r) => r.aggregationRule !== undefined)
                    .map((aggregator) => [
                        aggregator.name,
                        all.filter((other) => selectsRole(aggregator, other)).map((other) => other.name),
                    ]),
            );
        }
        return this.matchedNames;
    }

    /**
     * The authorizer over `base`'s objects with `roles` added. When no added role replaces one of
     * `base`'s, what each of `base`'s aggregated roles selects is `base`'s answer plus the added
     * roles it selects (which come last, as in the merged objects' order), so only the added roles
     * are matched against the selectors: a pack asks this for every role of a stack.
     */
    static withClusterRoles(base: RbacAuthorizer, roles: readonly ClusterRoleObject[]): RbacAuthorizer {
        if (roles.some((role) => base.clusterRoles.has(role.name)) || new Set(roles.map((r) => r.name)).size !== roles.length) {
            return new RbacAuthorizer(mergeObjects(base.objects, { clusterRoles: roles, roles: [], bindings: [] }));
        }
        // No name replaced: what mergeObjects would give, base's objects in their order and then the added roles.
        const merged = new RbacAuthorizer({ ...base.objects, clusterRoles: [...base.objects.clusterRoles, ...roles] });
        const baseMatched = base.matched();
        const all = [...merged.clusterRoles.values()];
        const matchedNames = new Map<string, readonly string[]>();
        for (const aggregator of all.filter((r) => r.aggregationRule !== undefined)) {
            const known = baseMatched.get(aggregator.name);
            matchedNames.set(
                aggregator.name,
                known === undefined
                    ? all.filter((other) => selectsRole(aggregator, other)).map((other) => other.name)
                    : [...known, ...roles.filter((other) => selectsRole(aggregator, other)).map((other) => other.name)],
            );
        }
        merged.matchedNames = matchedNames;
        merged.reuse = { base, added: new Set(roles.map((r) => r.name)) };
        return merged;
    }

    /** The ClusterRoles an aggregated role's selectors match (itself excluded). */
    aggregatedFrom(name: string): ClusterRoleObject[] {
        return (this.matched().get(name) ?? []).map((other) => this.clusterRoles.get(other) as ClusterRoleObject);
    }

    /** A ClusterRole's rules once aggregation has settled (its written rules when it aggregates nothing); undefined when unknown. */
    clusterRoleRules(name: string): readonly Partial<PolicyRule>[] | undefined {
        const role = this.clusterRoles.get(name);
        if (!role) {
            return undefined;
        }
        return role.aggregationRule ? this.aggregation().get(name) : role.rules;
    }

    /** The rules a binding's roleRef resolves to (`GetRoleReferenceRules`), or undefined when the role is unknown. */
    roleRefRules(
        roleRef: { kind: string; name: string },
        bindingNamespace: string | undefined,
    ): readonly Partial<PolicyRule>[] | undefined {
        if (roleRef.kind === "ClusterRole") {
            return this.clusterRoleRules(roleRef.name);
        }
        if (roleRef.kind === "Role" && bindingNamespace) {
            return this.role(bindingNamespace, roleRef.name)?.rules;
        }
        return undefined;
    }

    /** `appliesTo`: whether one of the binding's subjects is the user. */
    static appliesTo(binding: BindingObject, user: UserInfo, namespace: string): boolean {
        return binding.subjects.some((subject) => {
            switch (subject.kind) {
                case "User":
                    return user.name === subject.name;
                case "Group":
                    return user.groups.includes(subject.name ?? "");
                case "ServiceAccount": {
                    const saNamespace = subject.namespace || namespace;
                    return saNamespace !== "" && user.name === `system:serviceaccount:${saNamespace}:${subject.name}`;
                }
                default:
                    return false;
            }
        });
    }

    /** The bindings that apply to `user` for a request in `namespace` ("" for cluster-scoped ones). */
    bindingsFor(user: UserInfo, namespace: string): BindingObject[] {
        return [
            ...this.clusterBindings.filter((b) => RbacAuthorizer.appliesTo(b, user, "")),
            ...(namespace === ""
                ? []
                : (this.roleBindingsByNamespace.get(namespace) ?? []).filter((b) => RbacAuthorizer.appliesTo(b, user, namespace))),
        ];
    }

    /** Whether the API server allows `user` the request: the superuser group, then RBAC. */
    allows(user: UserInfo, request: AuthorizationRequest): boolean {
        if (user.groups.includes(PRIVILEGED_GROUP)) {
            return true;
        }
        const namespace = isNonResourceRequest(request) ? "" : (request.namespace ?? "");
        return this.bindingsFor(user, namespace).some((binding) =>
            (this.roleRefRules(binding.roleRef, binding.namespace) ?? []).some((rule) => ruleAllows(rule, request)),
        );
    }
}

/** Whether `rules` allow the request (the authorizer's union over rules). */
export function rulesAllow(rules: readonly Partial<PolicyRule>[], request: AuthorizationRequest): boolean {
    return rules.some((rule) => ruleAllows(rule, request));
}

// ---------------------------------------------------------------- server-side-apply patches

/** What a patch sets of a role (undefined: left to the live object). */
export interface RolePatch {
    labels?: Readonly<Record<string, string>>;
    rules?: readonly Partial<PolicyRule>[];
    aggregationRule?: { clusterRoleSelectors?: readonly LabelSelector[] };
}

/** What a patch sets of a binding (undefined: left to the live object). */
export interface BindingPatch {
    roleRef?: { kind: string; name: string };
    subjects?: readonly RbacSubject[];
}

/**
 * The object a server-side-apply patch leaves: the RBAC lists (`rules`, `subjects`,
 * `clusterRoleSelectors`) are atomic (k8s.io/api rbac/v1 types.go `+listType=atomic`), so a
 * patch that sets one replaces it whole; labels are merged key by key; a field the patch leaves
 * out keeps the live value (a binding's roleRef, which cannot change).
 */
export function patchedRole<R extends ClusterRoleObject | RoleObject>(live: R, patch: RolePatch): R {
    const out = { ...live, ...(patch.rules !== undefined ? { rules: patch.rules } : {}) };
    if ("labels" in live) {
        Object.assign(out, {
            labels: { ...live.labels, ...(patch.labels ?? {}) },
            ...(patch.aggregationRule !== undefined ? { aggregationRule: patch.aggregationRule } : {}),
        });
    }
    return out;
}

export function patchedBinding(live: BindingObject, patch: BindingPatch): BindingObject {
    return {
        ...live,
        ...(patch.roleRef ? { roleRef: patch.roleRef } : {}),
        ...(patch.subjects !== undefined ? { subjects: patch.subjects } : {}),
    };
}
