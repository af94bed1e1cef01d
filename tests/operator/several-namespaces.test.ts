import { CSV_DIR, objectsOf, readCsv, renderOperators, writeBundle, Yaml } from "../helpers/operators";
import { resourcesOfType } from "../helpers/render";

const ETCD = `${CSV_DIR}/etcdoperator-0.9.4.clusterserviceversion.yaml`;
const team = (name: string, csv = ETCD) => ({ name, csv, namespace: name, targetNamespaces: [name] });

describe("one operator installed in several namespaces (OwnNamespace per team)", () => {
    test("GIVEN etcd installed OwnNamespace in team-a and team-b WHEN rendered THEN each team gets its own Deployment and namespaced RBAC, and the cluster-scoped per-API roles are declared once, by the first install, kept on its removal", async () => {
        const result = await renderOperators([team("team-a"), team("team-b")]);
        expect(result.errors).toEqual([]);
        expect(objectsOf(result, "Deployment").map((d) => `${d.metadata.namespace}/${d.metadata.name}`)).toEqual([
            "team-a/etcd-operator",
            "team-b/etcd-operator",
        ]);
        // OLM's per-API roles: four per owned CRD version (admin, edit, view, crdview), named after the API, once in the cluster.
        const owned: Yaml[] = readCsv("etcdoperator-0.9.4.clusterserviceversion.yaml").spec.customresourcedefinitions.owned;
        const expected = owned.flatMap((o) => ["admin", "crdview", "edit", "view"].map((s) => `${o.name}-${o.version}-${s}`)).sort();
        const perApi = resourcesOfType(result, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole").filter((r) =>
            expected.includes((r.inputs as Yaml).metadata.name),
        );
        expect(perApi.map((r) => (r.inputs as Yaml).metadata.name).sort()).toEqual(expected);
        expect(new Set(perApi.map((r) => [r.name.split("-clusterrole-")[0], r.options.retainOnDelete].join(" ")))).toEqual(
            new Set(["team-a true"]),
        );
        // Each team's Role binds its own ServiceAccount in its own namespace.
        expect(
            objectsOf(result, "RoleBinding")
                .map((b) => `${b.metadata.namespace} ${b.subjects[0].namespace}`)
                .sort(),
        ).toEqual(["team-a team-a", "team-b team-b"]);
    });

    test("GIVEN the two installs on bundles that disagree on an owned API (another kind for etcdclusters v1beta2) WHEN checked THEN each of its four shared roles is refused, naming both installs", async () => {
        const csv = readCsv("etcdoperator-0.9.4.clusterserviceversion.yaml");
        csv.spec.customresourcedefinitions.owned = csv.spec.customresourcedefinitions.owned.map((o: Yaml) =>
            o.name === "etcdclusters.etcd.database.coreos.com" ? { ...o, kind: "EtcdClusterV2" } : o,
        );
        const other = writeBundle(csv);
        const result = await renderOperators([team("team-a"), team("team-b", other)]);
        expect(result.ok).toBe(false);
        const lines = result.errors
            .join("\n")
            .split("\n")
            .filter((l) => l.includes("differs from"));
        expect(lines).toEqual(
            ["admin", "crdview", "edit", "view"].map(
                (s) =>
                    `  - cluster-platform:operators[1].csv: operator "team-b": ClusterRole etcdclusters.etcd.database.coreos.com-v1beta2-${s} differs from the one operator "team-a" (operators[0]) installs from "${ETCD}": installs of one operator in several namespaces share their cluster-scoped objects, so they must use the same bundle version`,
            ),
        );
    });

    test("GIVEN packageserver (an APIService and a webhook-style serving certificate) installed in team-a and team-b WHEN rendered THEN its APIService and OLM's fixed-name serving bindings exist once, the bindings with both teams' ServiceAccounts and not kept on removal, the APIService served by the first team's Service", async () => {
        const packages = (name: string) => team(name, `${CSV_DIR}/packageserver-0.16.1.clusterserviceversion.yaml`);
        const result = await renderOperators([packages("team-a"), packages("team-b")]);
        expect(result.errors).toEqual([]);
        const subjects = ["team-a", "team-b"].map((namespace) => ({
            kind: "ServiceAccount",
            name: "olm-operator-serviceaccount",
            namespace,
        }));
        expect(
            objectsOf(result, "ClusterRoleBinding").filter((b) => b.metadata.name === "packageserver-service-system:auth-delegator"),
        ).toEqual([expect.objectContaining({ subjects })]);
        expect(objectsOf(result, "RoleBinding").filter((b) => b.metadata.name === "packageserver-service-auth-reader")).toEqual([
            expect.objectContaining({ metadata: expect.objectContaining({ namespace: "kube-system" }), subjects }),
        ]);
        expect(objectsOf(result, "APIService").map((a) => a.spec.service)).toEqual([
            { name: "packageserver-service", namespace: "team-a", port: 5443 },
        ]);
        const bindings = resourcesOfType(result, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding").filter((r) =>
            r.name.endsWith("-system:auth-delegator"),
        );
        expect(bindings.map((r) => [r.name, r.options.retainOnDelete])).toEqual([
            ["team-a-clusterrolebinding-packageserver-service-system:auth-delegator", false],
        ]);
        // Each team still gets its own Service and serving certificate for its pods.
        expect(objectsOf(result, "Service").map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
            "team-a/packageserver-service",
            "team-b/packageserver-service",
        ]);
    });
});
