/**
 * RBAC as Kubernetes defines it, written for the tests rather than taken from the product (so a
 * test of the product's rules does not check them against themselves): a rule allows a request
 * when its apiGroups, resources and verbs each contain the request's value (kubernetes
 * plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows; the rules checked here use no wildcards), and
 * a kind's resource is its lowercase plural (apimachinery pkg/api/meta/restmapper.go
 * UnsafeGuessKindToResource).
 */

export interface OracleRule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
}

export function allows(rules: readonly OracleRule[], group: string, resource: string, verb: string): boolean {
    return rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

export function groupOf(apiVersion: string): string {
    return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}

export function pluralOf(kind: string): string {
    const lower = kind.toLowerCase();
    if (lower.endsWith("s")) return `${lower}es`;
    if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
    return `${lower}s`;
}

/** `kubernetes:<group>/<version>:<Kind>` (core: `core/v1`) as apiVersion and kind; a `<Kind>Patch` patches `<Kind>`. */
export function kindOfToken(token: string): { apiVersion: string; kind: string } | undefined {
    const match = /^kubernetes:([^:]+):([A-Za-z]+)$/.exec(token);
    return match ? { apiVersion: match[1].replace(/^core\//, ""), kind: match[2].replace(/Patch$/, "") } : undefined;
}
