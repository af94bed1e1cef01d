/**
 * Kubernetes' RBAC authorizer, enough to answer SubjectAccessReviews in the stand-in API the way
 * an API server would. Facts from kubernetes/kubernetes:
 * - pkg/registry/rbac/validation/rule.go `VisitRulesFor`: every ClusterRoleBinding applies; the
 *   RoleBindings apply only when the request has a namespace, and only those in it.
 *   `appliesToUser`: a User subject matches the user name, a Group subject one of the request's
 *   groups, a ServiceAccount subject the user `system:serviceaccount:<ns>:<name>` (its namespace
 *   defaulting to the binding's). A RoleBinding's roleRef is a Role in its namespace or a ClusterRole.
 * - plugin/pkg/auth/authorizer/rbac/rbac.go `RuleAllows`: verb, group, resource and (if listed)
 *   resourceNames must match; components/shared/rbac.ts encodes the first three.
 * - pkg/controller/clusterroleaggregation: a ClusterRole with an aggregationRule holds the rules of
 *   every ClusterRole its selectors match; the bootstrap roles chain view into edit into admin by
 *   carrying the aggregate-to labels themselves (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).
 */
import { aggregationLabel, PolicyRule, ruleGrants } from "../../../components/shared/rbac";
import type { RequestAttributes, SubjectAccessReviewSpec } from "./fake-kube-api";

export interface Subject {
    kind: "User" | "Group" | "ServiceAccount";
    name: string;
    namespace?: string;
}

export interface ClusterRoleObject {
    metadata: { name: string; labels?: Record<string, string> };
    rules?: PolicyRule[];
    aggregationRule?: { clusterRoleSelectors: { matchLabels: Record<string, string> }[] };
}

export interface RoleObject {
    metadata: { name: string; namespace: string };
    rules: PolicyRule[];
}

export interface BindingObject {
    metadata: { name: string; namespace?: string };
    roleRef: { kind: "Role" | "ClusterRole"; name: string };
    subjects: Subject[];
}

export interface RbacState {
    clusterRoles: ClusterRoleObject[];
    roles?: RoleObject[];
    clusterRoleBindings?: BindingObject[];
    roleBindings?: BindingObject[];
}

/** Kubernetes' user-facing roles as bootstrapped: admin ⊇ edit ⊇ view through aggregation labels (their own rules left out). */
export const BOOTSTRAP_AGGREGATED_ROLES: ClusterRoleObject[] = [
    { metadata: { name: "admin" }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregationLabel("admin")]: "true" } }] } },
    {
        metadata: { name: "edit", labels: { [aggregationLabel("admin")]: "true" } },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregationLabel("edit")]: "true" } }] },
    },
    {
        metadata: { name: "view", labels: { [aggregationLabel("edit")]: "true" } },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregationLabel("view")]: "true" } }] },
    },
];

function matches(labels: Record<string, string> | undefined, selector: Record<string, string>): boolean {
    return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** The rules a ClusterRole holds once the aggregation controller has run. */
function clusterRoleRules(state: RbacState, name: string, seen = new Set<string>()): PolicyRule[] {
    const role = state.clusterRoles.find((r) => r.metadata.name === name);
    if (!role || seen.has(name)) return [];
    seen.add(name);
    if (!role.aggregationRule) return role.rules ?? [];
    return state.clusterRoles
        .filter(
            (other) =>
                other.metadata.name !== name &&
                role.aggregationRule!.clusterRoleSelectors.some((s) => matches(other.metadata.labels, s.matchLabels)),
        )
        .flatMap((other) => clusterRoleRules(state, other.metadata.name, seen));
}

function appliesTo(subject: Subject, user: string, groups: readonly string[], bindingNamespace: string | undefined): boolean {
    switch (subject.kind) {
        case "User":
            return subject.name === user;
        case "Group":
            return groups.includes(subject.name);
        case "ServiceAccount": {
            const namespace = subject.namespace || bindingNamespace;
            return namespace !== undefined && user === `system:serviceaccount:${namespace}:${subject.name}`;
        }
    }
}

function ruleAllows(rule: PolicyRule, attributes: SubjectAccessReviewSpec["resourceAttributes"]): boolean {
    const names = rule.resourceNames ?? [];
    return (
        ruleGrants(rule, { group: attributes.group, resource: attributes.resource, verb: attributes.verb }) &&
        (names.length === 0 || names.includes(attributes.name))
    );
}

/** Whether RBAC allows the review's request. */
export function rbacAllows(state: RbacState, spec: SubjectAccessReviewSpec): boolean {
    const groups = spec.groups ?? [];
    const namespace = spec.resourceAttributes.namespace || undefined;
    const rulesOf = (binding: BindingObject): PolicyRule[] =>
        binding.roleRef.kind === "ClusterRole"
            ? clusterRoleRules(state, binding.roleRef.name)
            : ((state.roles ?? []).find(
                  (r) => r.metadata.name === binding.roleRef.name && r.metadata.namespace === binding.metadata.namespace,
              )?.rules ?? []);
    const bindings = [
        ...(state.clusterRoleBindings ?? []),
        ...(namespace === undefined ? [] : (state.roleBindings ?? []).filter((b) => b.metadata.namespace === namespace)),
    ];
    return bindings.some(
        (binding) =>
            binding.subjects.some((subject) => appliesTo(subject, spec.user, groups, binding.metadata.namespace)) &&
            rulesOf(binding).some((rule) => ruleAllows(rule, spec.resourceAttributes)),
    );
}

/** The groups the API server gives a service account's token (kubernetes pkg/serviceaccount/util.go `MakeGroupNames`). */
export function serviceAccountGroups(user: string): string[] {
    const namespace = user.split(":")[2];
    return ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"];
}

/**
 * The RBAC objects among rendered manifests (ClusterRoles, Roles and their bindings), with the
 * bootstrap admin/edit/view aggregation, as an RbacState.
 */
export function rbacStateOf(manifests: readonly Record<string, unknown>[], extra: Partial<RbacState> = {}): RbacState {
    const of = <T>(kind: string) => manifests.filter((m) => m.kind === kind) as unknown as T[];
    return {
        clusterRoles: [...BOOTSTRAP_AGGREGATED_ROLES, ...of<ClusterRoleObject>("ClusterRole"), ...(extra.clusterRoles ?? [])],
        roles: [...of<RoleObject>("Role"), ...(extra.roles ?? [])],
        clusterRoleBindings: [...of<BindingObject>("ClusterRoleBinding"), ...(extra.clusterRoleBindings ?? [])],
        roleBindings: [...of<BindingObject>("RoleBinding"), ...(extra.roleBindings ?? [])],
    };
}

/** A stand-in API's `authorizeRequest` that answers as RBAC would with `state` (a function, so the state can change). */
export function requestAuthorizer(state: () => RbacState): (attributes: RequestAttributes) => boolean {
    return (attributes) =>
        rbacAllows(state(), {
            user: attributes.user,
            groups: serviceAccountGroups(attributes.user),
            resourceAttributes: {
                group: attributes.group,
                resource: attributes.resource,
                verb: attributes.verb,
                name: attributes.name ?? "",
                namespace: attributes.namespace,
            },
        });
}
