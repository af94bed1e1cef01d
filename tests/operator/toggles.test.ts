/**
 * The three RBAC toggles of seed 003 on a real AllNamespaces CSV (node-maintenance: one
 * permission, one clusterPermission, one owned CRD): whole sets of RBAC objects for all 8
 * combinations, and the rendered difference each toggle makes on its own.
 */
import type { RenderResult } from "../../scripts/render/render";
import { CSV_DIR, readCsv, rbacSet, renderOperators, Yaml } from "../helpers/operators";

const FILE = "node-maintenance-operator-0.0.1.clusterserviceversion.yaml";
const csv = readCsv(FILE);
const permission = csv.spec.install.spec.permissions[0];
const clusterPermission = csv.spec.install.spec.clusterPermissions[0];
const SA = "node-maintenance-operator-controller-manager";
const SERVICE = "node-maintenance-operator-controller-manager-service";
// OLM's names (rbac.go since Nov 2023), computed by Go: encoding/json, crypto/sha256 Sum224, math/big Text(62).
const ROLE = "node-maintenance-operato-1z7jy0mls8iZgkRrEoZSo0qrzHuSSDjO6Mzb9m";
const CLUSTER_ROLE = "node-maintenance-operato-1GLeZOJ2RW16gVvkr7NIpMLUgh6yq2Z78l4DD9";
const CRD = "nodemaintenances.nodemaintenance.medik8s.io";
// fnv64a("NodeMaintenance.v1beta1.nodemaintenance.medik8s.io"), OLM's APIKeyToGVKHash.
const API_HASH = "2a009fb5b607d846";

const operator = { name: "nmo", csv: `${CSV_DIR}/${FILE}`, namespace: "ops", targetNamespaces: [], rbacNamespaces: ["team-a", "team-b"] };

type Toggles = { disableOLMAggregateCRDRoles: boolean; disableAggregateCRDRoles: boolean; disableAllNamespacePermissionPromotion: boolean };
const render = (toggles: Toggles): Promise<RenderResult> => renderOperators([operator], { olm: toggles });

const binding = (kind: string, namespace: string, name: string, generatedBy: string) => ({
    key: `${kind} ${namespace}/${name}`,
    generatedBy,
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: kind === "RoleBinding" ? "Role" : "ClusterRole", name },
    subjects: [{ kind: "ServiceAccount", name: SA, namespace: "ops" }],
});

/** The expected RBAC of one combination, written out from OLM's behaviour (not derived by the code under test). */
function expected(t: Toggles): Record<string, unknown>[] {
    const set: Record<string, unknown>[] = [
        { key: `Role ops/${ROLE}`, generatedBy: "csv.permissions", rules: permission.rules },
        binding("RoleBinding", "ops", ROLE, "csv.permissions"),
        { key: `ClusterRole /${CLUSTER_ROLE}`, generatedBy: "csv.clusterPermissions", rules: clusterPermission.rules },
        binding("ClusterRoleBinding", "", CLUSTER_ROLE, "csv.clusterPermissions"),
        // OLM's RBAC for the webhook's serving certificate (certresources.go), whatever the toggles.
        {
            key: `Role ops/${SERVICE}-cert`,
            generatedBy: "olm.servingCertificate",
            rules: [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: [`${SERVICE}-cert`] }],
        },
        binding("RoleBinding", "ops", `${SERVICE}-cert`, "olm.servingCertificate"),
        {
            ...binding("ClusterRoleBinding", "", `${SERVICE}-system:auth-delegator`, "olm.servingCertificate"),
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
        },
        {
            ...binding("RoleBinding", "kube-system", `${SERVICE}-auth-reader`, "olm.servingCertificate"),
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extension-apiserver-authentication-reader" },
        },
    ];
    if (!t.disableOLMAggregateCRDRoles) {
        const olmResources = ["clusterserviceversions", "catalogsources", "installplans", "subscriptions"];
        const view = ["get", "list", "watch"];
        set.push(
            {
                key: "ClusterRole /aggregate-olm-edit",
                // OLM's own roles, adopted: they carry no label of this stack.
                generatedBy: undefined,
                aggregation: {
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                },
                rules: [
                    { apiGroups: ["operators.coreos.com"], resources: ["subscriptions"], verbs: ["create", "update", "patch", "delete"] },
                    { apiGroups: ["operators.coreos.com"], resources: olmResources, verbs: ["delete"] },
                ],
            },
            {
                key: "ClusterRole /aggregate-olm-view",
                generatedBy: undefined,
                aggregation: {
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                    "rbac.authorization.k8s.io/aggregate-to-view": "true",
                },
                rules: [
                    { apiGroups: ["operators.coreos.com"], resources: [...olmResources, "operatorgroups"], verbs: view },
                    { apiGroups: ["packages.operators.coreos.com"], resources: ["packagemanifests", "packagemanifests/icon"], verbs: view },
                ],
            },
        );
    }
    if (!t.disableAggregateCRDRoles) {
        const aggregation = (suffix: string) => ({
            [`rbac.authorization.k8s.io/aggregate-to-${suffix}`]: "true",
            [`olm.opgroup.permissions/aggregate-to-${API_HASH}-${suffix}`]: "true",
        });
        const own = (verbs: string[]) => [{ verbs, apiGroups: ["nodemaintenance.medik8s.io"], resources: ["nodemaintenances"] }];
        set.push(
            {
                key: `ClusterRole /${CRD}-v1beta1-admin`,
                generatedBy: "olm.aggregateCRDRoles",
                aggregation: aggregation("admin"),
                rules: own(["*"]),
            },
            {
                key: `ClusterRole /${CRD}-v1beta1-edit`,
                generatedBy: "olm.aggregateCRDRoles",
                aggregation: aggregation("edit"),
                rules: own(["create", "update", "patch", "delete"]),
            },
            {
                key: `ClusterRole /${CRD}-v1beta1-view`,
                generatedBy: "olm.aggregateCRDRoles",
                aggregation: aggregation("view"),
                rules: own(["get", "list", "watch"]),
            },
            {
                key: `ClusterRole /${CRD}-v1beta1-crdview`,
                generatedBy: "olm.aggregateCRDRoles",
                aggregation: aggregation("view"),
                rules: [
                    { verbs: ["get"], apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], resourceNames: [CRD] },
                ],
            },
        );
    }
    if (t.disableAllNamespacePermissionPromotion) {
        for (const namespace of ["team-a", "team-b"]) {
            set.push(
                { key: `Role ${namespace}/${ROLE}`, generatedBy: "operators.rbacNamespaces", rules: permission.rules },
                binding("RoleBinding", namespace, ROLE, "operators.rbacNamespaces"),
            );
        }
    } else {
        set.push(
            {
                key: `ClusterRole /${ROLE}`,
                generatedBy: "olm.allNamespacesPromotion",
                rules: [...permission.rules, { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] }],
            },
            binding("ClusterRoleBinding", "", ROLE, "olm.allNamespacesPromotion"),
        );
    }
    return set.sort((a, b) => String(a.key).localeCompare(String(b.key)));
}

const combinations: Toggles[] = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => ({
    disableOLMAggregateCRDRoles: (bits & 1) !== 0,
    disableAggregateCRDRoles: (bits & 2) !== 0,
    disableAllNamespacePermissionPromotion: (bits & 4) !== 0,
}));

describe("the 8 combinations of the RBAC toggles", () => {
    test.each(combinations)(
        "GIVEN %j WHEN node-maintenance is installed for all namespaces THEN exactly the expected ClusterRoles, Roles and bindings exist",
        async (toggles) => {
            const result = await render(toggles);
            expect(result.errors).toEqual([]);
            expect(rbacSet(result)).toEqual(expected(toggles));
        },
    );
});

/** Manifests by file, for diffs: added, removed and changed files between two renders. */
function diff(before: RenderResult, after: RenderResult): { added: string[]; removed: string[]; changed: string[] } {
    const index = (r: RenderResult) => new Map(r.manifests.map((m) => [m.file, JSON.stringify(m.object)]));
    const a = index(before);
    const b = index(after);
    return {
        added: [...b.keys()].filter((k) => !a.has(k)).sort(),
        removed: [...a.keys()].filter((k) => !b.has(k)).sort(),
        changed: [...a.keys()].filter((k) => b.has(k) && a.get(k) !== b.get(k)).sort(),
    };
}

describe("flipping one toggle changes only the objects it governs", () => {
    const off: Toggles = {
        disableOLMAggregateCRDRoles: false,
        disableAggregateCRDRoles: false,
        disableAllNamespacePermissionPromotion: false,
    };
    let base: RenderResult;
    beforeAll(async () => {
        base = await render(off);
    });
    const rbac = (kind: string, namespace: string, name: string) => `${kind}_rbac.authorization.k8s.io_${namespace}_${name}.yaml`;

    test("GIVEN disableOLMAggregateCRDRoles WHEN flipped THEN only OLM's two aggregate roles go", async () => {
        expect(diff(base, await render({ ...off, disableOLMAggregateCRDRoles: true }))).toEqual({
            added: [],
            removed: [rbac("ClusterRole", "cluster", "aggregate-olm-edit"), rbac("ClusterRole", "cluster", "aggregate-olm-view")],
            changed: [],
        });
    });

    test("GIVEN disableAggregateCRDRoles WHEN flipped THEN only the CRD's four aggregate roles go", async () => {
        expect(diff(base, await render({ ...off, disableAggregateCRDRoles: true }))).toEqual({
            added: [],
            removed: ["admin", "crdview", "edit", "view"].map((s) => rbac("ClusterRole", "cluster", `${CRD}-v1beta1-${s}`)),
            changed: [],
        });
    });

    test("GIVEN disableAllNamespacePermissionPromotion WHEN flipped THEN the promotion goes, Roles appear in the rbacNamespaces and WATCH_NAMESPACE names them", async () => {
        const flipped = await render({ ...off, disableAllNamespacePermissionPromotion: true });
        expect(diff(base, flipped)).toEqual({
            added: [
                rbac("RoleBinding", "team-a", ROLE),
                rbac("RoleBinding", "team-b", ROLE),
                rbac("Role", "team-a", ROLE),
                rbac("Role", "team-b", ROLE),
            ].sort(),
            removed: [rbac("ClusterRoleBinding", "cluster", ROLE), rbac("ClusterRole", "cluster", ROLE)].sort(),
            // The webhook now sees the rbacNamespaces only (components/operator/webhooks.ts, webhookScopeOf).
            changed: [
                `Deployment_apps_ops_${SA}.yaml`,
                `ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_ops.${SA}.yaml`,
            ],
        });
        const selector = (r: RenderResult) =>
            (
                r.manifests.find((m) => m.file === `ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_ops.${SA}.yaml`)
                    ?.object as Yaml
            ).webhooks.map((w: Yaml) => w.namespaceSelector);
        expect(selector(flipped)).toEqual([
            {
                matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "team-b"] },
                    { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "ops"] },
                ],
            },
        ]);
        const env = (r: RenderResult) =>
            (r.manifests.find((m) => m.file === `Deployment_apps_ops_${SA}.yaml`)?.object as Yaml).spec.template.spec.containers.map(
                (c: Yaml) => c.env,
            );
        const conditionName = { name: "OPERATOR_CONDITION_NAME", value: csv.metadata.name };
        expect(env(base)).toEqual([
            [{ name: "OPERATOR_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } }, conditionName],
        ]);
        expect(env(flipped)).toEqual([
            [
                { name: "OPERATOR_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                conditionName,
                { name: "WATCH_NAMESPACE", value: "team-a,team-b" },
            ],
        ]);
    });
});
