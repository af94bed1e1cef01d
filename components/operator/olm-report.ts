/**
 * What the seed-003 toggles would have prevented for the operators OLM manages on a cluster: the
 * toggles govern only the installs of this stack, so an admin reads the cluster's roles
 * (`kubectl get clusterroles,roles -A -o json`) and this report names each OLM-generated object a
 * toggle disables, with the CSV that owns it. OLM marks what it generates with its owner labels
 * (operator-framework/operator-lifecycle-manager `pkg/lib/ownerutil/util.go`: `olm.owner`,
 * `olm.owner.namespace`, `olm.owner.kind`); a promoted permission is a ClusterRole with the name
 * and labels of a Role of the CSV in its namespace (`pkg/controller/operators/olm/operatorgroup.go`,
 * `ensureSingletonRBAC`); per-API roles carry OLM's `olm.opgroup.permissions/aggregate-to-*`
 * labels (`ensureProvidedAPIClusterRole`). Pure.
 */
import { MANAGED_BY_LABEL, platformLabels } from "../shared/labels";
import { OLM_AGGREGATE_ROLE_NAMES, OlmToggles, OPERATOR_GROUP_AGGREGATION_PREFIX } from "./rbac";
import { compareText } from "../shared/order";

export const OLM_OWNER_LABEL = "olm.owner";
export const OLM_OWNER_NAMESPACE_LABEL = "olm.owner.namespace";
export const OLM_OWNER_KIND_LABEL = "olm.owner.kind";

/** A Role or ClusterRole as `kubectl get -o json` lists it (the fields the report reads). */
export interface ListedRole {
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
}

export interface ToggleFinding {
    toggle: keyof OlmToggles;
    clusterRole: string;
    /** `<namespace>/<csv>` that owns it, when OLM labelled it. */
    owner?: string;
    why: string;
}

/** Every OLM-managed ClusterRole that a set toggle would have prevented, sorted by toggle then name. */
export function olmToggleFindings(items: readonly ListedRole[], toggles: OlmToggles): ToggleFinding[] {
    const stackManager = platformLabels("operator")[MANAGED_BY_LABEL];
    const roles = new Set(items.filter((i) => i.kind === "Role").map((r) => `${r.metadata.namespace}/${r.metadata.name}`));
    const findings: ToggleFinding[] = [];
    for (const item of items) {
        const labels = item.metadata.labels ?? {};
        if (item.kind !== "ClusterRole" || labels[MANAGED_BY_LABEL] === stackManager) {
            continue; // this stack's own roles follow the toggles already
        }
        const owner =
            labels[OLM_OWNER_LABEL] && labels[OLM_OWNER_NAMESPACE_LABEL]
                ? `${labels[OLM_OWNER_NAMESPACE_LABEL]}/${labels[OLM_OWNER_LABEL]}`
                : undefined;
        const name = item.metadata.name;
        if (toggles.disableOLMAggregateCRDRoles && OLM_AGGREGATE_ROLE_NAMES.includes(name)) {
            findings.push({ toggle: "disableOLMAggregateCRDRoles", clusterRole: name, why: "OLM's own aggregate role" });
        }
        const perApi = Object.keys(labels).find((key) => key.startsWith(OPERATOR_GROUP_AGGREGATION_PREFIX));
        if (toggles.disableAggregateCRDRoles && perApi !== undefined) {
            findings.push({
                toggle: "disableAggregateCRDRoles",
                clusterRole: name,
                owner,
                why: `per-API aggregate role (label ${perApi})`,
            });
        }
        const csvOwned = labels[OLM_OWNER_KIND_LABEL] === "ClusterServiceVersion" && owner !== undefined;
        if (toggles.disableAllNamespacePermissionPromotion && csvOwned && roles.has(`${labels[OLM_OWNER_NAMESPACE_LABEL]}/${name}`)) {
            findings.push({
                toggle: "disableAllNamespacePermissionPromotion",
                clusterRole: name,
                owner,
                why: `promoted from the Role ${labels[OLM_OWNER_NAMESPACE_LABEL]}/${name}`,
            });
        }
    }
    return findings.sort((a, b) => compareText(a.toggle, b.toggle) || compareText(a.clusterRole, b.clusterRole));
}

/** The report's lines: one per finding, or a line saying there is none. */
export function toggleReportLines(findings: readonly ToggleFinding[]): string[] {
    if (findings.length === 0) {
        return ["no OLM-generated ClusterRole that the set toggles would prevent"];
    }
    return findings.map((f) => `${f.toggle}: ClusterRole ${f.clusterRole}${f.owner ? ` (CSV ${f.owner})` : ""}: ${f.why}`);
}
