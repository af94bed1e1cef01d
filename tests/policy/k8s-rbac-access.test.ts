import { noClusterAdminServiceAccounts, noWildcardAccess } from "../../policy-packs/k8s-rbac/rbac-access";
import { k8s, violations } from "./support";

const everything = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };

describe("k8s-no-wildcard-access", () => {
    test("GIVEN a ClusterRole granting * on * WHEN analyzed THEN the rule is named with its groups and the allow-list entry that would permit it", () => {
        const role = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "operator-admin" },
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }, everything],
        });
        expect(violations(noWildcardAccess, role)).toEqual([
            'ClusterRole "operator-admin" rules[1] grants every verb ("*") on every resource ("*") of API groups ["*"]; list the verbs and resources it needs, or add "operator-admin" to allowedRoles',
        ]);
    });

    test("GIVEN a Role granting * on * in one group WHEN analyzed THEN it is reported under namespace/name", () => {
        const role = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: "all", namespace: "team-a" },
            rules: [{ apiGroups: ["apps"], resources: ["*"], verbs: ["*"] }],
        });
        expect(violations(noWildcardAccess, role)).toEqual([
            'Role "team-a/all" rules[0] grants every verb ("*") on every resource ("*") of API groups ["apps"]; list the verbs and resources it needs, or add "team-a/all" to allowedRoles',
        ]);
        expect(violations(noWildcardAccess, role, { allowedRoles: ["team-a/all"] })).toEqual([]);
        expect(violations(noWildcardAccess, role, { allowedRoles: ["all"] })).toHaveLength(1);
    });

    test("GIVEN an allow-listed ClusterRole, or * verbs on named resources (OLM's per-CRD admin role) WHEN analyzed THEN nothing is reported", () => {
        const allowed = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "break-glass" },
            rules: [everything],
        });
        expect(violations(noWildcardAccess, allowed, { allowedRoles: ["break-glass"] })).toEqual([]);
        const crdAdmin = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "widgets.samples.io-v1-admin" },
            rules: [{ apiGroups: ["samples.io"], resources: ["widgets"], verbs: ["*"] }],
        });
        expect(violations(noWildcardAccess, crdAdmin)).toEqual([]);
        const allResourcesReadOnly = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "reader" },
            rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["get", "list"] }],
        });
        expect(violations(noWildcardAccess, allResourcesReadOnly)).toEqual([]);
    });
});

describe("k8s-no-cluster-admin-service-accounts", () => {
    const binding = (kind: string, roleName: string, subjects: Record<string, string>[]) =>
        k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind,
            metadata: { name: "grant", ...(kind === "RoleBinding" ? { namespace: "team-a" } : {}) },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
            subjects,
        });

    test("GIVEN cluster-admin bound to a ServiceAccount, its user name and a service-account group WHEN analyzed THEN each subject is reported", () => {
        const grant = binding("ClusterRoleBinding", "cluster-admin", [
            { kind: "ServiceAccount", name: "operator", namespace: "ops" },
            { kind: "User", name: "system:serviceaccount:ops:other" },
            { kind: "Group", name: "system:serviceaccounts:ops" },
            { kind: "User", name: "alice" },
        ]);
        expect(violations(noClusterAdminServiceAccounts, grant)).toEqual([
            'ClusterRoleBinding "grant" binds ClusterRole "cluster-admin" to ServiceAccount "ops/operator"; bind a role with only the permissions the workload needs',
            'ClusterRoleBinding "grant" binds ClusterRole "cluster-admin" to User "system:serviceaccount:ops:other"; bind a role with only the permissions the workload needs',
            'ClusterRoleBinding "grant" binds ClusterRole "cluster-admin" to Group "system:serviceaccounts:ops"; bind a role with only the permissions the workload needs',
        ]);
    });

    test("GIVEN a RoleBinding of cluster-admin to every service account WHEN analyzed THEN it is reported too (namespace-wide admin)", () => {
        expect(
            violations(
                noClusterAdminServiceAccounts,
                binding("RoleBinding", "cluster-admin", [{ kind: "Group", name: "system:serviceaccounts" }]),
            ),
        ).toEqual([
            'RoleBinding "team-a/grant" binds ClusterRole "cluster-admin" to Group "system:serviceaccounts"; bind a role with only the permissions the workload needs',
        ]);
    });

    test("GIVEN cluster-admin bound to people, or another role bound to a service account WHEN analyzed THEN nothing is reported", () => {
        expect(
            violations(
                noClusterAdminServiceAccounts,
                binding("ClusterRoleBinding", "cluster-admin", [{ kind: "Group", name: "platform-admins" }]),
            ),
        ).toEqual([]);
        expect(
            violations(
                noClusterAdminServiceAccounts,
                binding("ClusterRoleBinding", "view", [{ kind: "ServiceAccount", name: "operator", namespace: "ops" }]),
            ),
        ).toEqual([]);
    });
});
