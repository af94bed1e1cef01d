/**
 * Label selector semantics (apimachinery `metav1.LabelSelector`), as pure functions: whether a
 * selector matches a label set, and whether a namespaceSelector shuts out a namespace by its
 * name whatever other labels the namespace is given. No Pulumi imports.
 */

/** The label API servers set on every namespace (Kubernetes >= 1.21): its name. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

export interface SelectorRequirement {
    key: string;
    operator: string;
    values?: readonly string[];
}

export interface LabelSelector {
    matchLabels?: Readonly<Record<string, string>>;
    matchExpressions?: readonly SelectorRequirement[];
}

/**
 * A selector's requirements, kept per selector object: the RBAC evaluator asks the same
 * aggregation selectors of hundreds of roles for every role a pack judges. Selectors are never
 * mutated once built; a policy's proxied one is a new object at every read, so it is never kept.
 */
const requirementCache = new WeakMap<LabelSelector, readonly SelectorRequirement[]>();

/** Every requirement of a selector, matchLabels as `In` requirements. */
export function requirementsOf(selector: LabelSelector): readonly SelectorRequirement[] {
    let requirements = requirementCache.get(selector);
    if (requirements === undefined) {
        requirements = [
            ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, operator: "In", values: [value] })),
            ...(selector.matchExpressions ?? []),
        ];
        requirementCache.set(selector, requirements);
    }
    return requirements;
}

/** Whether one requirement (a matchLabels entry is an `In`) holds of a label set, as apimachinery's. */
export function requirementMatches(requirement: SelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
    const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
        case "In":
            return has && values.includes(labels[requirement.key]);
        case "NotIn":
            return !has || !values.includes(labels[requirement.key]);
        case "Exists":
            return has;
        case "DoesNotExist":
            return !has;
        default:
            // The API server rejects other operators; a selector with one matches nothing.
            return false;
    }
}

/** Whether `selector` selects an object with `labels`. An absent or empty selector selects everything. */
export function selectorMatches(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
    return requirementsOf(selector ?? {}).every((r) => requirementMatches(r, labels));
}

/**
 * Whether a namespaceSelector can never select the namespace `name`, however the namespace is
 * labelled: some requirement on its name label (which the API server sets and nobody can change)
 * rules it out. A selector that relies on other labels does not count, because anyone who may
 * label the namespace could make it match.
 */
export function selectorExcludesNamespace(selector: LabelSelector | undefined, name: string): boolean {
    return requirementsOf(selector ?? {})
        .filter((r) => r.key === NAMESPACE_NAME_LABEL)
        .some((r) => !requirementMatches(r, { [NAMESPACE_NAME_LABEL]: name }));
}
