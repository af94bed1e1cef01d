import { deriveOperatorRbac, OlmToggles, olmAggregateRoles, OwnedApi, RbacObject, toggleBreach } from "../../components/operator/rbac";
import { olmRbacToggles } from "../../policy-packs/k8s-rbac/olm-toggles";
import { webhookForbiddenRules } from "../../policy-packs/k8s-rbac/webhooks";
import { k8s, violations } from "./support";

const OFF: OlmToggles = {
    disableOLMAggregateCRDRoles: false,
    disableAggregateCRDRoles: false,
    disableAllNamespacePermissionPromotion: false,
};
const ON: OlmToggles = { disableOLMAggregateCRDRoles: true, disableAggregateCRDRoles: true, disableAllNamespacePermissionPromotion: true };

const widgets: OwnedApi = {
    name: "widgets.samples.io",
    group: "samples.io",
    plural: "widgets",
    version: "v1",
    kind: "Widget",
    source: "CustomResourceDefinition",
};

/** An AllNamespaces install's RBAC with every toggle off: OLM's behaviour, promotion and aggregate roles included. */
function oLMsRbac(): RbacObject[] {
    return [
        ...deriveOperatorRbac({
            operator: "widgets",
            csvName: "widget-operator.v1.0.0",
            namespace: "widget-operator",
            targetNamespaces: [],
            permissions: [
                { serviceAccountName: "widget-operator", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
            ],
            clusterPermissions: [],
            ownedApis: [widgets],
            toggles: OFF,
        }),
        ...olmAggregateRoles(OFF),
    ];
}

describe("k8s-olm-rbac-toggles", () => {
    test("GIVEN OLM's RBAC for an AllNamespaces install WHEN judged with every toggle set THEN each promoted, per-CRD and OLM aggregate object is reported, by the label or name that gives it away", () => {
        const reports = oLMsRbac().flatMap((object) => violations(olmRbacToggles, k8s(object), ON));
        expect(reports).toEqual([
            'ClusterRole "widget-operator.v1.0.0-w-50CsO3bBy8tRzwsJXuG5qa9wQ3f6DRsulUKnNg" is namespaced permissions promoted to cluster scope for an AllNamespaces install (recognised by its label cluster-platform.io/generated-by=olm.allNamespacesPromotion), but olm.disableAllNamespacePermissionPromotion is set',
            'ClusterRoleBinding "widget-operator.v1.0.0-w-50CsO3bBy8tRzwsJXuG5qa9wQ3f6DRsulUKnNg" is namespaced permissions promoted to cluster scope for an AllNamespaces install (recognised by its label cluster-platform.io/generated-by=olm.allNamespacesPromotion), but olm.disableAllNamespacePermissionPromotion is set',
            ...["admin", "edit", "view", "crdview"].map(
                (suffix) =>
                    `ClusterRole "widgets.samples.io-v1-${suffix}" is a per-CRD role aggregated to admin, edit or view (recognised by its label cluster-platform.io/generated-by=olm.aggregateCRDRoles), but olm.disableAggregateCRDRoles is set`,
            ),
            ...["edit", "view"].map(
                (suffix) =>
                    `ClusterRole "aggregate-olm-${suffix}" is one of OLM's aggregate-olm-edit and aggregate-olm-view roles (recognised by OLM's name for its aggregate roles (aggregate-olm-edit, aggregate-olm-view)), but olm.disableOLMAggregateCRDRoles is set`,
            ),
        ]);
    });

    test("GIVEN the same objects WHEN every toggle is off (the default config) THEN nothing is reported; the namespaced Role and RoleBinding never are", () => {
        expect(oLMsRbac().flatMap((object) => violations(olmRbacToggles, k8s(object)))).toEqual([]);
        expect(oLMsRbac().flatMap((object) => violations(olmRbacToggles, k8s(object), OFF))).toEqual([]);
    });

    test("GIVEN the RBAC the operator derives with the toggles set WHEN judged with them THEN nothing is reported: the derivation and the policy agree", () => {
        const derived = deriveOperatorRbac({
            operator: "widgets",
            csvName: "widget-operator.v1.0.0",
            namespace: "widget-operator",
            targetNamespaces: [],
            rbacNamespaces: ["team-a"],
            permissions: [
                { serviceAccountName: "widget-operator", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
            ],
            clusterPermissions: [
                { serviceAccountName: "widget-operator", rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }] },
            ],
            ownedApis: [widgets],
            toggles: ON,
        });
        expect([...derived, ...olmAggregateRoles(ON)].flatMap((object) => violations(olmRbacToggles, k8s(object), ON))).toEqual([]);
    });

    test("GIVEN hand-written RBAC without the generated-by label WHEN judged THEN OLM's role names and per-API aggregation labels still give it away", () => {
        expect(toggleBreach({ kind: "ClusterRole", name: "aggregate-olm-view", labels: {} }, ON)).toEqual({
            toggle: "disableOLMAggregateCRDRoles",
            recognisedBy: "OLM's name for its aggregate roles (aggregate-olm-edit, aggregate-olm-view)",
        });
        expect(
            toggleBreach(
                { kind: "ClusterRole", name: "x-v1-edit", labels: { "olm.opgroup.permissions/aggregate-to-1a2b-edit": "true" } },
                ON,
            ),
        ).toEqual({
            toggle: "disableAggregateCRDRoles",
            recognisedBy: "OLM's per-API aggregation label olm.opgroup.permissions/aggregate-to-1a2b-edit",
        });
        expect(toggleBreach({ kind: "ClusterRoleBinding", name: "aggregate-olm-view", labels: {} }, ON)).toBeUndefined();
        expect(toggleBreach({ kind: "ClusterRole", name: "aggregate-olm-view", labels: {} }, OFF)).toBeUndefined();
    });
});

describe("k8s-webhook-forbidden-rules", () => {
    const configuration = (rules: Record<string, unknown>[]) =>
        k8s({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: { name: "guard" },
            webhooks: [
                {
                    name: "guard.example.io",
                    rules,
                    sideEffects: "None",
                    admissionReviewVersions: ["v1"],
                    clientConfig: { url: "https://guard.example.io" },
                },
            ],
        });
    const rule = (apiGroups: string[], resources: string[]) => ({ operations: ["*"], apiGroups, apiVersions: ["*"], resources });

    test("GIVEN rules on CSVs, on every group and on the webhook configurations by plural WHEN analyzed THEN each is reported with OLM's message", () => {
        const target = configuration([
            rule(["operators.coreos.com"], ["clusterserviceversions"]),
            rule(["*"], ["pods"]),
            rule(["admissionregistration.k8s.io"], ["validatingwebhookconfigurations"]),
        ]);
        expect(violations(webhookForbiddenRules, target)).toEqual([
            'ValidatingWebhookConfiguration "guard" webhook "guard.example.io" (webhooks[0]) rules[0].apiGroups: Webhook rules cannot include the OLM group',
            'ValidatingWebhookConfiguration "guard" webhook "guard.example.io" (webhooks[0]) rules[1].apiGroups: Webhook rules cannot include all groups',
            'ValidatingWebhookConfiguration "guard" webhook "guard.example.io" (webhooks[0]) rules[2].resources: Webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources',
        ]);
    });

    test("GIVEN rules on named groups and resources WHEN analyzed THEN nothing is reported", () => {
        expect(violations(webhookForbiddenRules, configuration([rule([""], ["pods"]), rule(["apps"], ["deployments"])]))).toEqual([]);
    });
});
