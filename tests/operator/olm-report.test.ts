/**
 * The toggles govern the operators this stack installs; for operators OLM manages, the report
 * names what each toggle would have prevented, from the cluster's roles as kubectl lists them.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { ListedRole, olmToggleFindings } from "../../components/operator/olm-report";
import { main } from "../../scripts/olm/toggle-report";
import { temporaryDirectory } from "../helpers/temporary";

const owner = (csv: string, namespace: string) => ({
    "olm.owner": csv,
    "olm.owner.namespace": namespace,
    "olm.owner.kind": "ClusterServiceVersion",
});
/** Roles as OLM leaves them for an AllNamespaces operator in openshift-operators (names and labels from OLM's code). */
const CLUSTER: ListedRole[] = [
    {
        kind: "Role",
        metadata: {
            name: "cert-manager.v1.16.1-cert-manager-6xw9x",
            namespace: "openshift-operators",
            labels: owner("cert-manager.v1.16.1", "openshift-operators"),
        },
    },
    {
        kind: "ClusterRole",
        metadata: { name: "cert-manager.v1.16.1-cert-manager-6xw9x", labels: owner("cert-manager.v1.16.1", "openshift-operators") },
    },
    { kind: "ClusterRole", metadata: { name: "cert-manager.v1.16.1-4rs8b", labels: owner("cert-manager.v1.16.1", "openshift-operators") } },
    {
        kind: "ClusterRole",
        metadata: {
            name: "certificates.cert-manager.io-v1-admin",
            labels: {
                ...owner("cert-manager.v1.16.1", "openshift-operators"),
                "olm.opgroup.permissions/aggregate-to-5f1d2b3a4c5d6e7f-admin": "true",
                "rbac.authorization.k8s.io/aggregate-to-admin": "true",
            },
        },
    },
    { kind: "ClusterRole", metadata: { name: "aggregate-olm-view", labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } } },
    { kind: "ClusterRole", metadata: { name: "admin", labels: {} } },
    // This stack's own per-API role: governed by the toggles already, never reported.
    {
        kind: "ClusterRole",
        metadata: {
            name: "widgets.samples.cluster-platform.io-v1-admin",
            labels: {
                "app.kubernetes.io/managed-by": "cluster-platform",
                "olm.opgroup.permissions/aggregate-to-0123456789abcdef-admin": "true",
            },
        },
    },
];

describe("what the toggles would have prevented for OLM's operators", () => {
    test("GIVEN OLM's roles for cert-manager and every toggle set WHEN reported THEN the promoted role, the per-API role and OLM's aggregate role are named with their CSV; clusterPermissions and the stack's own roles are not", () => {
        expect(
            olmToggleFindings(CLUSTER, {
                disableOLMAggregateCRDRoles: true,
                disableAggregateCRDRoles: true,
                disableAllNamespacePermissionPromotion: true,
            }),
        ).toEqual([
            {
                toggle: "disableAggregateCRDRoles",
                clusterRole: "certificates.cert-manager.io-v1-admin",
                owner: "openshift-operators/cert-manager.v1.16.1",
                why: "per-API aggregate role (label olm.opgroup.permissions/aggregate-to-5f1d2b3a4c5d6e7f-admin)",
            },
            {
                toggle: "disableAllNamespacePermissionPromotion",
                clusterRole: "cert-manager.v1.16.1-cert-manager-6xw9x",
                owner: "openshift-operators/cert-manager.v1.16.1",
                why: "promoted from the Role openshift-operators/cert-manager.v1.16.1-cert-manager-6xw9x",
            },
            { toggle: "disableOLMAggregateCRDRoles", clusterRole: "aggregate-olm-view", why: "OLM's own aggregate role" },
        ]);
    });

    test("GIVEN a stack config with only promotion disabled WHEN the CLI reports THEN it prints only the promoted role, and exits 0", () => {
        const dir = temporaryDirectory("toggle-report-");
        fs.writeFileSync(path.join(dir, "roles.json"), JSON.stringify({ apiVersion: "v1", kind: "List", items: CLUSTER }));
        fs.writeFileSync(
            path.join(dir, "Pulumi.test.yaml"),
            "config:\n  cluster-platform:cluster:\n    name: test\n    platform: openshift\n    kubeContext: test\n  cluster-platform:olm:\n    disableAllNamespacePermissionPromotion: true\n  cluster-platform:operators:\n    - name: op\n      csv: ../shared/testdata/csvs/node-maintenance-operator-0.0.1.clusterserviceversion.yaml\n      namespace: ops\n      rbacNamespaces: [team-a]\n",
        );
        const lines: string[] = [];
        const errors: string[] = [];
        expect(
            main(
                [path.join(dir, "roles.json"), "--config", path.join(dir, "Pulumi.test.yaml")],
                (l) => lines.push(l),
                (l) => errors.push(l),
            ),
        ).toBe(0);
        expect(errors).toEqual([]);
        expect(lines).toEqual([
            "disableAllNamespacePermissionPromotion: ClusterRole cert-manager.v1.16.1-cert-manager-6xw9x (CSV openshift-operators/cert-manager.v1.16.1): promoted from the Role openshift-operators/cert-manager.v1.16.1-cert-manager-6xw9x",
        ]);
    });

    test("GIVEN no file WHEN the CLI runs THEN it prints its usage and exits 2", () => {
        const errors: string[] = [];
        expect(
            main(
                [],
                () => undefined,
                (l) => errors.push(l),
            ),
        ).toBe(2);
        expect(errors[0]).toMatch(/^usage: npm run olm:toggle-report/);
    });
});
