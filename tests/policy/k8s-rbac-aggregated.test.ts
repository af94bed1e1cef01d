import { clusterRoleManifest } from "../../components/subscriptions/bundles";
import { aggregatedRoles } from "../../policy-packs/k8s-rbac/aggregated-roles";
import { k8s, violations } from "./support";

const bundle = {
    name: "cluster",
    alwaysInject: false,
    entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
    yumRepositories: [{ name: "satellite-repos", namespace: "openshift-config" }],
    aggregateToClusterRoles: ["admin", "edit"],
};

/** A ClusterRole named `name`, aggregated into `roles`, with `rules`. */
function aggregated(name: string, roles: string[], rules: Record<string, unknown>[]) {
    return k8s({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name, labels: Object.fromEntries(roles.map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, "true"])) },
        rules,
    });
}

describe("k8s-aggregated-roles", () => {
    test("GIVEN the ClusterRole the subscriptions capability generates for a ClusterBundle WHEN analyzed THEN it passes: use on its own shares, by name", () => {
        expect(violations(aggregatedRoles, k8s(clusterRoleManifest(bundle)))).toEqual([]);
    });

    test("GIVEN that ClusterRole with the share names dropped WHEN analyzed THEN use on every SharedSecret is reported", () => {
        const role = clusterRoleManifest(bundle);
        const widened = {
            ...role,
            rules: role.rules.map((r) => ({ ...r, resourceNames: r.resources.includes("sharedsecrets") ? undefined : r.resourceNames })),
        };
        expect(violations(aggregatedRoles, k8s(widened))).toEqual([
            'ClusterRole "cluster-subscription-bundle" (aggregated into admin, edit) rules[1] grants "use" on every SharedSecret (sharedsecrets.sharedresource.openshift.io without resourceNames); name the shares the role may use',
        ]);
    });

    test("GIVEN a hand-written role aggregated into view that reads Secrets, and one using * on * WHEN analyzed THEN each rule reaching Secrets is reported", () => {
        expect(
            violations(
                aggregatedRoles,
                aggregated("secrets-reader", ["view"], [{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list"] }]),
            ),
        ).toEqual([
            'ClusterRole "secrets-reader" (aggregated into view) rules[0] grants ["get","list"] on Secrets (apiGroups [""], resources ["secrets"]); a role aggregated into a default role must grant nothing on Secrets',
        ]);
        expect(
            violations(aggregatedRoles, aggregated("everything", ["admin"], [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }])),
        ).toEqual([
            'ClusterRole "everything" (aggregated into admin) rules[0] grants ["*"] on Secrets (apiGroups ["*"], resources ["*"]); a role aggregated into a default role must grant nothing on Secrets',
            'ClusterRole "everything" (aggregated into admin) rules[0] grants "use" on every SharedSecret (sharedsecrets.sharedresource.openshift.io without resourceNames); name the shares the role may use',
        ]);
    });

    test("GIVEN roles not aggregated, or aggregated into a role outside the judged set WHEN analyzed THEN they are not judged; naming the role in aggregatedRoles judges it", () => {
        const secrets = [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }];
        expect(violations(aggregatedRoles, aggregated("operator", [], secrets))).toEqual([]);
        const monitoring = aggregated("monitoring-secrets", ["monitoring"], secrets);
        expect(violations(aggregatedRoles, monitoring)).toEqual([]);
        expect(violations(aggregatedRoles, monitoring, { aggregatedRoles: ["admin", "edit", "view", "monitoring"] })).toEqual([
            'ClusterRole "monitoring-secrets" (aggregated into monitoring) rules[0] grants ["get"] on Secrets (apiGroups [""], resources ["secrets"]); a role aggregated into a default role must grant nothing on Secrets',
        ]);
        expect(
            violations(aggregatedRoles, aggregated("configmaps", ["edit"], [{ apiGroups: [""], resources: ["configmaps"], verbs: ["*"] }])),
        ).toEqual([]);
    });
});
