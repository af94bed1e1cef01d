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

/** Whether an aggregationRule selector selects `role` (for roles with open labels: whether it may). */
export function selectorSelectsRole(selector: LabelSelector, role: ClusterRoleObject): boolean {
    return requirementsOf(selector).every((r) => requirementMayMatch(r, role));
}

// ---------------------------------------------------------------- the evaluator

const ruleKey = (rule: Partial<PolicyRule>) =>
    JSON.stringify([rule.apiGroups ?? [], rule.resources ?? [], rule.verbs ?? [], rule.resourceNames ?? [], rule.nonResourceURLs ?? []]);

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
        const matched = new Map(
            aggregators.map((aggregator) => [
                aggregator.name,
                [...this.clusterRoles.values()]
                    .filter(
                        (other) =>
                            other.name !== aggregator.name &&
                            (aggregator.aggregationRule?.clusterRoleSelectors ?? []).some((s) => selectorSelectsRole(s, other)),
                    )
                    .map((other) => other.name),
            ]),
        );
        // As the controller runs: from the rules each role was written with, every aggregator recomputed from what the
        // others hold now, until nothing changes. An empty union leaves the role's rules as they are: the controller's
        // apply then carries no rules (`WithRules()` of nothing) and server-side apply keeps what another manager wrote
        // (clusterroleaggregation_controller.go `applyClusterRoles`; seen by the SubjectAccessReview differential). If the
        // controller had applied a union before (a patch emptied the selected roles later), it owned the rules and they
        // are removed instead; the differential saw both. Kept rules are the larger power, the safe answer for a pack.
        let current = new Map(aggregators.map((r) => [r.name, r.rules]));
        for (let round = 0; round <= aggregators.length + 1; round++) {
            let changed = false;
            const next = new Map<string, readonly Partial<PolicyRule>[]>();
            for (const aggregator of aggregators) {
                const into = new Map<string, Partial<PolicyRule>>();
                for (const name of matched.get(aggregator.name) ?? []) {
                    union(into, current.get(name) ?? (this.clusterRoles.get(name) as ClusterRoleObject).rules);
                }
                const rules = into.size > 0 ? [...into.values()] : aggregator.rules;
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

    /** The ClusterRoles an aggregated role's selectors match (itself excluded). */
    aggregatedFrom(name: string): ClusterRoleObject[] {
        const aggregator = this.clusterRoles.get(name);
        if (!aggregator?.aggregationRule) {
            return [];
        }
        return [...this.clusterRoles.values()].filter(
            (other) =>
                other.name !== name && (aggregator.aggregationRule?.clusterRoleSelectors ?? []).some((s) => selectorSelectsRole(s, other)),
        );
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
