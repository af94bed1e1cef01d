import {
    aggregateRolesFor,
    deriveOperatorRbac,
    OlmToggles,
    olmAggregateRoles,
    OperatorRbacInput,
    RbacObject,
} from "../../components/operator/rbac";

const managed = {
    "app.kubernetes.io/managed-by": "cluster-platform",
    "app.kubernetes.io/part-of": "cluster-platform",
    "cluster-platform.io/capability": "olm-rbac",
};
const off: OlmToggles = {
    disableOLMAggregateCRDRoles: false,
    disableAggregateCRDRoles: false,
    disableAllNamespacePermissionPromotion: false,
};

const leases = { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "update"] };
const nodes = { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] };

const input = (overrides: Partial<OperatorRbacInput> = {}): OperatorRbacInput => ({
    operator: "nmo",
    csvName: "node-maintenance-operator.v0.0.1",
    namespace: "node-maintenance",
    targetNamespaces: [],
    permissions: [{ serviceAccountName: "nmo-controller", rules: [leases] }],
    clusterPermissions: [{ serviceAccountName: "nmo-controller", rules: [nodes] }],
    ownedApis: [],
    toggles: off,
    ...overrides,
});

/** `Kind namespace/name` of each object, in order. */
const keys = (objects: RbacObject[]) => objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`);

describe("OLM's aggregate roles", () => {
    test("GIVEN the toggle off WHEN derived THEN aggregate-olm-edit and aggregate-olm-view are exactly OLM's", () => {
        expect(olmAggregateRoles(off)).toEqual([
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: {
                    name: "aggregate-olm-edit",
                    labels: {
                        "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                    },
                },
                rules: [
                    { apiGroups: ["operators.coreos.com"], resources: ["subscriptions"], verbs: ["create", "update", "patch", "delete"] },
                    {
                        apiGroups: ["operators.coreos.com"],
                        resources: ["clusterserviceversions", "catalogsources", "installplans", "subscriptions"],
                        verbs: ["delete"],
                    },
                ],
            },
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: {
                    name: "aggregate-olm-view",
                    labels: {
                        "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                        "rbac.authorization.k8s.io/aggregate-to-view": "true",
                    },
                },
                rules: [
                    {
                        apiGroups: ["operators.coreos.com"],
                        resources: ["clusterserviceversions", "catalogsources", "installplans", "subscriptions", "operatorgroups"],
                        verbs: ["get", "list", "watch"],
                    },
                    {
                        apiGroups: ["packages.operators.coreos.com"],
                        resources: ["packagemanifests", "packagemanifests/icon"],
                        verbs: ["get", "list", "watch"],
                    },
                ],
            },
        ]);
    });

    test("GIVEN disableOLMAggregateCRDRoles WHEN derived THEN there are none", () => {
        expect(olmAggregateRoles({ disableOLMAggregateCRDRoles: true })).toEqual([]);
    });
});

describe("per-API aggregate roles", () => {
    const aggregation = (suffix: string, hash: string) => ({
        ...managed,
        "cluster-platform.io/generated-by": "olm.aggregateCRDRoles",
        "cluster-platform.io/operator": "etcd",
        [`rbac.authorization.k8s.io/aggregate-to-${suffix}`]: "true",
        [`olm.opgroup.permissions/aggregate-to-${hash}-${suffix}`]: "true",
    });
    // fnv64a("EtcdCluster.v1beta2.etcd.database.coreos.com"), OLM's APIKeyToGVKHash.
    const hash = "c571d720f17289d3";

    test("GIVEN an owned CRD version WHEN derived THEN admin, edit, view and crdview match OLM's names, verbs and labels", () => {
        const roles = aggregateRolesFor(
            {
                name: "etcdclusters.etcd.database.coreos.com",
                group: "etcd.database.coreos.com",
                plural: "etcdclusters",
                version: "v1beta2",
                kind: "EtcdCluster",
                source: "CustomResourceDefinition",
            },
            "etcd",
        );
        const role = (name: string, labels: Record<string, string>, rule: Record<string, string[]>) => ({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name, labels },
            rules: [rule],
        });
        expect(roles).toEqual([
            role("etcdclusters.etcd.database.coreos.com-v1beta2-admin", aggregation("admin", hash), {
                verbs: ["*"],
                apiGroups: ["etcd.database.coreos.com"],
                resources: ["etcdclusters"],
            }),
            role("etcdclusters.etcd.database.coreos.com-v1beta2-edit", aggregation("edit", hash), {
                verbs: ["create", "update", "patch", "delete"],
                apiGroups: ["etcd.database.coreos.com"],
                resources: ["etcdclusters"],
            }),
            role("etcdclusters.etcd.database.coreos.com-v1beta2-view", aggregation("view", hash), {
                verbs: ["get", "list", "watch"],
                apiGroups: ["etcd.database.coreos.com"],
                resources: ["etcdclusters"],
            }),
            role("etcdclusters.etcd.database.coreos.com-v1beta2-crdview", aggregation("view", hash), {
                verbs: ["get"],
                apiGroups: ["apiextensions.k8s.io"],
                resources: ["customresourcedefinitions"],
                resourceNames: ["etcdclusters.etcd.database.coreos.com"],
            }),
        ]);
    });

    test("GIVEN an owned APIService WHEN derived THEN admin, edit and view are declared, without crdview", () => {
        const roles = aggregateRolesFor({
            name: "flunders",
            group: "wardle.example.com",
            plural: "flunders",
            version: "v1alpha1",
            kind: "Flunder",
            source: "APIService",
        });
        expect(roles.map((r) => [r.metadata.name, r.rules])).toEqual([
            ["flunders-v1alpha1-admin", [{ verbs: ["*"], apiGroups: ["wardle.example.com"], resources: ["flunders"] }]],
            [
                "flunders-v1alpha1-edit",
                [{ verbs: ["create", "update", "patch", "delete"], apiGroups: ["wardle.example.com"], resources: ["flunders"] }],
            ],
            ["flunders-v1alpha1-view", [{ verbs: ["get", "list", "watch"], apiGroups: ["wardle.example.com"], resources: ["flunders"] }]],
        ]);
    });
});

describe("CSV permissions by install mode", () => {
    // OLM cuts the base so base, dash and 37-38 base-62 characters fit 63 (rbac.go, generateName).
    const role = /^node-maintenance-operato-[0-9A-Za-z]{38}$/;
    const roleName = deriveOperatorRbac(input())[0].metadata.name;
    const clusterRoleName = deriveOperatorRbac(input()).find(
        (o) => o.metadata.labels["cluster-platform.io/generated-by"] === "csv.clusterPermissions",
    )?.metadata.name;

    test("GIVEN names WHEN derived THEN Roles are <csv>-<sa>-<hash> and ClusterRoles <csv>-<hash>, as OLM names them", () => {
        expect(roleName).toMatch(role);
        expect(clusterRoleName).toMatch(role);
        expect(clusterRoleName).not.toBe(roleName);
    });

    test("GIVEN AllNamespaces with promotion WHEN derived THEN permissions stay a Role in the operator's namespace and are promoted with namespace viewing", () => {
        const objects = deriveOperatorRbac(input());
        expect(keys(objects)).toEqual([
            `Role node-maintenance/${roleName}`,
            `RoleBinding node-maintenance/${roleName}`,
            `ClusterRole /${roleName}`,
            `ClusterRoleBinding /${roleName}`,
            `ClusterRole /${clusterRoleName}`,
            `ClusterRoleBinding /${clusterRoleName}`,
        ]);
        expect(objects[2]).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: {
                name: roleName,
                labels: {
                    ...managed,
                    "cluster-platform.io/generated-by": "olm.allNamespacesPromotion",
                    "cluster-platform.io/operator": "nmo",
                },
            },
            rules: [leases, { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["namespaces"] }],
        });
        expect(objects[3]).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: {
                name: roleName,
                labels: {
                    ...managed,
                    "cluster-platform.io/generated-by": "olm.allNamespacesPromotion",
                    "cluster-platform.io/operator": "nmo",
                },
            },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
            subjects: [{ kind: "ServiceAccount", name: "nmo-controller", namespace: "node-maintenance" }],
        });
    });

    test("GIVEN MultiNamespace including the operator's namespace WHEN derived THEN each other target namespace gets a copy bound to the operator's ServiceAccount", () => {
        const objects = deriveOperatorRbac(input({ targetNamespaces: ["node-maintenance", "team-a", "team-b"] }));
        expect(keys(objects)).toEqual([
            `Role node-maintenance/${roleName}`,
            `RoleBinding node-maintenance/${roleName}`,
            `Role team-a/${roleName}`,
            `RoleBinding team-a/${roleName}`,
            `Role team-b/${roleName}`,
            `RoleBinding team-b/${roleName}`,
            `ClusterRole /${clusterRoleName}`,
            `ClusterRoleBinding /${clusterRoleName}`,
        ]);
        const teamB = objects[5];
        expect(teamB).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: {
                name: roleName,
                namespace: "team-b",
                labels: {
                    ...managed,
                    "cluster-platform.io/generated-by": "csv.permissions.targetNamespaces",
                    "cluster-platform.io/operator": "nmo",
                },
            },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: roleName },
            subjects: [{ kind: "ServiceAccount", name: "nmo-controller", namespace: "node-maintenance" }],
        });
    });

    test("GIVEN AllNamespaces with promotion disabled WHEN derived THEN Roles go to the rbacNamespaces and nothing is promoted", () => {
        const objects = deriveOperatorRbac(
            input({ rbacNamespaces: ["team-a", "node-maintenance"], toggles: { ...off, disableAllNamespacePermissionPromotion: true } }),
        );
        expect(keys(objects)).toEqual([
            `Role node-maintenance/${roleName}`,
            `RoleBinding node-maintenance/${roleName}`,
            `Role team-a/${roleName}`,
            `RoleBinding team-a/${roleName}`,
            `ClusterRole /${clusterRoleName}`,
            `ClusterRoleBinding /${clusterRoleName}`,
        ]);
        expect(objects[2].metadata.labels["cluster-platform.io/generated-by"]).toBe("operators.rbacNamespaces");
    });

    test("GIVEN a permission without a ServiceAccount name WHEN derived THEN it binds the namespace's default ServiceAccount, as OLM does", () => {
        const objects = deriveOperatorRbac(input({ permissions: [{ serviceAccountName: "", rules: [leases] }], clusterPermissions: [] }));
        expect(objects[1]).toMatchObject({ subjects: [{ kind: "ServiceAccount", name: "default", namespace: "node-maintenance" }] });
        // OLM's base holds the name as the CSV writes it (empty); the Go-computed name of this permission.
        expect(objects[0].metadata.name).toBe("node-maintenance-operato-9h4XfFbhNxQBXWqzeNEZXZnK97HFYQHJFYLMF0");
    });

    test("GIVEN the same permission listed twice WHEN derived THEN its Role and binding are declared once (OLM names them by content)", () => {
        const permission = { serviceAccountName: "nmo-controller", rules: [leases] };
        expect(
            keys(
                deriveOperatorRbac(
                    input({ permissions: [permission, permission], clusterPermissions: [], targetNamespaces: ["node-maintenance"] }),
                ),
            ),
        ).toEqual([`Role node-maintenance/${roleName}`, `RoleBinding node-maintenance/${roleName}`]);
    });
});
