/**
 * RBAC as Kubernetes defines it, written for the tests rather than taken from the product (so a
 * test of the product's rules does not check them against themselves): a rule allows a request
 * when its apiGroups, resources and verbs each contain the request's value (kubernetes
 * plugin/pkg/auth/authorizer/rbac/rbac.go RuleAllows; the rules checked here use no wildcards), and
 * a kind's resource is what the API server names it: the CRD manifests the render holds, else the
 * discovery the real tier's API server answered (components/shared/api-resources.table.json, data read
 * here directly, not through the product's resolver).
 */
import table from "../../components/shared/api-resources.table.json";

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

type Resource = { group: string; kind: string; plural: string };

/** `apiVersion`/`kind` → plural, from `crds` (CustomResourceDefinition manifests) then discovery; throws when neither knows it. */
export function pluralOf(apiVersion: string, kind: string, crds: readonly unknown[] = []): string {
    const group = groupOf(apiVersion);
    const fromCrd = crds
        .map((c) => c as { kind?: string; spec?: { group?: string; names?: { kind?: string; plural?: string } } })
        .find((c) => c.kind === "CustomResourceDefinition" && c.spec?.group === group && c.spec?.names?.kind === kind)?.spec?.names?.plural;
    const known = [...(table as { discovered: Resource[] }).discovered, ...(table as { crds: Resource[] }).crds].find(
        (r) => r.group === group && r.kind === kind,
    );
    const plural = fromCrd ?? known?.plural;
    if (plural === undefined) throw new Error(`rbac-oracle: no CRD or discovery entry names the resource of ${kind} (${apiVersion})`);
    return plural;
}

/** `kubernetes:<group>/<version>:<Kind>` (core: `core/v1`) as apiVersion and kind; a `<Kind>Patch` patches `<Kind>`. */
export function kindOfToken(token: string): { apiVersion: string; kind: string } | undefined {
    const match = /^kubernetes:([^:]+):([A-Za-z]+)$/.exec(token);
    return match ? { apiVersion: match[1].replace(/^core\//, ""), kind: match[2].replace(/Patch$/, "") } : undefined;
}
