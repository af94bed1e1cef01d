/**
 * The stack's adoption rule (components/shared/adoption.ts) over everything the program declares:
 * every Kubernetes resource of every capability has a decision for its type and role, the ones
 * decided `adopt` are exactly those listed below (objects that may exist before the stack
 * declares them) and go through the adopting provider, and nothing else does. A resource added
 * with a type or role the rule does not decide fails the first test, naming it.
 */
import * as path from "node:path";
import { adoptionKey, adoptionOf } from "../../components/shared/adoption";
import { ClusterState } from "../../scripts/render/cluster-state";
import { flattenConfig, readConfigFile } from "../../scripts/render/config-file";
import { renderProgram, RenderResult } from "../../scripts/render/render";
import { CSV_DIR, SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig, ROOT } from "../helpers/render";
import { tlsComputed } from "../helpers/tls-signer";

const RBAC = "kubernetes:rbac.authorization.k8s.io/v1";

/** What may already exist when the stack declares it, by type and role: taken over, never refused. */
const ADOPTED = [
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
    `${RBAC}:ClusterRole csv.clusterPermissions`,
    `${RBAC}:ClusterRole olm.aggregateCRDRoles`,
    `${RBAC}:ClusterRole olm.aggregateOLMRoles`,
    `${RBAC}:ClusterRole olm.allNamespacesPromotion`,
    `${RBAC}:ClusterRoleBinding csv.clusterPermissions`,
    `${RBAC}:ClusterRoleBinding olm.allNamespacesPromotion`,
    `${RBAC}:ClusterRoleBinding olm.servingCertificate`,
    `${RBAC}:Role csv.permissions`,
    `${RBAC}:Role csv.permissions.targetNamespaces`,
    `${RBAC}:Role olm.servingCertificate`,
    `${RBAC}:Role operators.rbacNamespaces`,
    `${RBAC}:RoleBinding csv.permissions`,
    `${RBAC}:RoleBinding csv.permissions.targetNamespaces`,
    `${RBAC}:RoleBinding olm.servingCertificate`,
    `${RBAC}:RoleBinding operators.rbacNamespaces`,
];

interface Declared {
    key: string;
    name: string;
    decision: string | undefined;
    provider: string | undefined;
}

/** Every Kubernetes resource a render declares (reads are not declarations), keyed as the rule keys it. */
function declared(result: RenderResult): Declared[] {
    return result.resources.flatMap((r) => {
        const key = r.read === undefined ? adoptionKey(r.type, r.inputs) : undefined;
        return key === undefined
            ? []
            : [{ key, name: r.name, decision: adoptionOf(r.type, r.inputs)?.decision, provider: r.options.provider }];
    });
}

/** Resources whose type and role the rule leaves undecided, as `<key> (<resource>)`. */
function undecided(resources: readonly Declared[]): string[] {
    return resources.filter((r) => r.decision === undefined).map((r) => `${r.key} (${r.name})`);
}

describe("the adoption rule over every capability", () => {
    let resources: Declared[];
    beforeAll(async () => {
        // Every capability on OpenShift (the full example, reconcile on, promotion disabled), with
        // operators that bring webhooks, conversion, an APIService and two installs of one bundle.
        const example = readConfigFile(path.join(ROOT, "examples", "openshift-aws.yaml"));
        const extra = flattenConfig({
            reconcile: { enabled: true, git: { repository: "https://github.com/platform-team/cluster-platform.git", branch: "main" } },
            operators: [
                { name: "widgets", csv: SAMPLE_CSVS.widgets, namespace: "widgets", targetNamespaces: [], rbacNamespaces: ["team-a"] },
                {
                    name: "backups-a",
                    csv: SAMPLE_CSVS.backups,
                    namespace: "team-a",
                    createNamespace: false,
                    targetNamespaces: ["team-a", "team-b"],
                },
                { name: "backups-b", csv: SAMPLE_CSVS.backups, namespace: "policy", createNamespace: false, targetNamespaces: ["policy"] },
                {
                    name: "packages",
                    csv: `${CSV_DIR}/packageserver-0.16.1.clusterserviceversion.yaml`,
                    namespace: "packages",
                    targetNamespaces: ["packages"],
                },
            ],
        });
        const everything = await renderProgram({
            config: { values: { ...example.values, ...extra.values }, secretKeys: example.secretKeys },
            stack: "prod-east",
            preview: false,
            computed: tlsComputed({ now: new Date("2026-01-01T00:00:00Z") }),
            cluster: ClusterState.fromFile(path.join(ROOT, "tests", "fixtures", "certificates", "openshift-aws.cluster.yaml")),
        });
        // Plain Kubernetes with OLM's defaults: AllNamespaces permissions promoted, clusterPermissions.
        const promoted = await renderConfig({
            cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
            operators: [
                {
                    name: "maintenance",
                    csv: `${CSV_DIR}/node-maintenance-operator-0.0.1.clusterserviceversion.yaml`,
                    namespace: "maintenance",
                    targetNamespaces: [],
                },
            ],
        });
        for (const result of [everything, promoted]) {
            expect({ errors: result.errors, problems: result.problems }).toEqual({ errors: [], problems: [] });
        }
        resources = [...declared(everything), ...declared(promoted)];
    }, 120_000);

    test("GIVEN every capability rendered WHEN each Kubernetes resource is looked up THEN its type and role have a decision", () => {
        expect(undecided(resources)).toEqual([]);
    });

    test("GIVEN every capability rendered THEN exactly the listed types and roles are adopted, each through the adopting provider, and every other resource through the stack's", () => {
        const adopted = [...new Set(resources.filter((r) => r.decision === "adopt").map((r) => r.key))].sort();
        expect(adopted).toEqual([...ADOPTED].sort());
        const misplaced = resources
            .filter((r) => (r.decision === "adopt") !== (r.provider === "kubernetes-adopting"))
            .map((r) => `${r.key} (${r.name}) via ${r.provider ?? "the stack's provider"}`);
        expect(misplaced).toEqual([]);
    });

    test("GIVEN a resource of a type or role the rule does not decide WHEN looked up THEN it is reported, so adding one without a decision fails the test above", () => {
        const added: Declared[] = declared({
            resources: [
                { type: "kubernetes:batch/v1:Job", name: "job", parent: null, inputs: { kind: "Job" }, options: { provider: undefined } },
                {
                    type: `${RBAC}:ClusterRole`,
                    name: "role",
                    parent: null,
                    inputs: { kind: "ClusterRole", metadata: { name: "x", labels: { "cluster-platform.io/generated-by": "bundle" } } },
                    options: {},
                },
            ],
        } as unknown as RenderResult);
        expect(undecided(added)).toEqual(["kubernetes:batch/v1:Job (job)", `${RBAC}:ClusterRole bundle (role)`]);
    });
});
