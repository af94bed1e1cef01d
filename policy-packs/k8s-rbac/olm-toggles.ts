/**
 * The OLM RBAC toggles (seed 003): with a toggle set, the cluster-scoped RBAC it disables must not
 * be declared (promoted permissions, per-CRD aggregate roles, OLM's aggregate roles). The pack
 * cannot read stack config: its config carries the toggles, and `npm run policy:config` writes
 * the stack's own.
 */
import { OlmToggles, toggleBreach } from "../../components/operator/rbac";
import { describeObject, identityOf, isKind, k8sTypeOf, labelsOf, objectPolicy, RBAC_GROUP } from "../shared/k8s";
import { flag } from "../shared/policy";
import { knownEntries, knownStringMap } from "../shared/values";

const WHAT: Record<keyof OlmToggles, string> = {
    disableAllNamespacePermissionPromotion: "namespaced permissions promoted to cluster scope for an AllNamespaces install",
    disableAggregateCRDRoles: "a per-CRD role aggregated to admin, edit or view",
    disableOLMAggregateCRDRoles: "one of OLM's aggregate-olm-edit and aggregate-olm-view roles",
};

export const olmRbacToggles = objectPolicy<OlmToggles>(
    {
        name: "k8s-olm-rbac-toggles",
        description:
            "No ClusterRole or ClusterRoleBinding that a set OLM RBAC toggle disables: promoted permissions, per-CRD aggregate roles, OLM's aggregate roles.",
        severity: "high",
        remediationSteps:
            "Remove the object, or unset the toggle in the stack's olm section and regenerate this pack's config (npm run policy:config). Operator installs of this stack already leave these objects out when the toggle is set; a breach comes from RBAC declared elsewhere.",
        config: {
            disableOLMAggregateCRDRoles: flag("The stack's olm.disableOLMAggregateCRDRoles: no aggregate-olm-edit/-view."),
            disableAggregateCRDRoles: flag("The stack's olm.disableAggregateCRDRoles: no per-CRD admin/edit/view/crdview aggregate roles."),
            disableAllNamespacePermissionPromotion: flag(
                "The stack's olm.disableAllNamespacePermissionPromotion: no permissions promoted to ClusterRoles/Bindings.",
            ),
        },
    },
    (args, toggles, report) => {
        const type = k8sTypeOf(args.type);
        if (
            !isKind(type, RBAC_GROUP, ["ClusterRole", "ClusterRoleBinding"]) ||
            !(toggles.disableAggregateCRDRoles || toggles.disableAllNamespacePermissionPromotion || toggles.disableOLMAggregateCRDRoles)
        ) {
            return;
        }
        const identity = identityOf(args.props, args.name);
        const breach = toggleBreach(
            { kind: type.kind, name: identity.name, labels: knownEntries(knownStringMap(labelsOf(args.props))) },
            toggles,
        );
        if (breach) {
            report(
                `${describeObject(type.kind, identity)} is ${WHAT[breach.toggle]} (recognised by ${breach.recognisedBy}), but olm.${breach.toggle} is set`,
            );
        }
    },
);
