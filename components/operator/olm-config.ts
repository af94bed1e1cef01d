/**
 * What the stack writes into OLM's own configuration (`OLMConfig/cluster`), decided purely.
 * Only `spec.features.disableCopiedCSVs` is ever written: OLMConfig's `spec.features` has no
 * fields for the three RBAC toggles (they never landed in OLM), so the API server would prune
 * them and every preview would show a diff.
 */
import type { OlmConfig } from "../config/schema";

export const OLM_CONFIG_API_VERSION = "operators.coreos.com/v1";
export const OLM_CONFIG_NAME = "cluster";
/** The field manager of the stack's patch, so `kubectl get --show-managed-fields` names it. */
export const OLM_CONFIG_FIELD_MANAGER = "cluster-platform-olm-config";

export type OlmConfigDecision =
    { action: "none" } | { action: "patch"; body: OlmConfigPatchBody; warning: string } | { action: "skip"; warning: string };

export interface OlmConfigPatchBody {
    apiVersion: typeof OLM_CONFIG_API_VERSION;
    kind: "OLMConfig";
    metadata: { name: typeof OLM_CONFIG_NAME; annotations: Record<string, string> };
    spec: { features: { disableCopiedCSVs: true } };
}

export const OLM_CONFIG_WARNING =
    "olm.manageOLMConfig: server-side-applying OLMConfig/cluster spec.features.disableCopiedCSVs: true because olm.disableAllNamespacePermissionPromotion is true: copied CSVs would advertise operators in namespaces where they have no RBAC (seed 003). No other OLMConfig field is touched; the RBAC toggles are not OLMConfig fields.";

/** Whether and how to patch OLMConfig/cluster for this config and cluster. */
export function olmConfigDecision(olm: OlmConfig, live: boolean, skipped: (what: string) => string): OlmConfigDecision {
    if (!olm.manageOLMConfig || !olm.disableAllNamespacePermissionPromotion) {
        return { action: "none" };
    }
    if (!live) {
        return {
            action: "skip",
            warning: `olm.manageOLMConfig: ${skipped("the OLMConfig/cluster patch (spec.features.disableCopiedCSVs: true)")}`,
        };
    }
    return {
        action: "patch",
        warning: OLM_CONFIG_WARNING,
        body: {
            apiVersion: OLM_CONFIG_API_VERSION,
            kind: "OLMConfig",
            metadata: { name: OLM_CONFIG_NAME, annotations: { "pulumi.com/patchFieldManager": OLM_CONFIG_FIELD_MANAGER } },
            spec: { features: { disableCopiedCSVs: true } },
        },
    };
}
