/**
 * Namespaces: one the stack only labels (or fills) must exist before anything is registered (a
 * label patch would create it bare); every namespaced object in a namespace the stack creates
 * depends on that Namespace.
 */
import { formatReport } from "../../components/shared/problems";
import type { RenderResult } from "../../scripts/render/render";
import { CSV_DIR, renderOperators, scopableBundle } from "../helpers/operators";
import { renderConfig } from "../helpers/render";

const NAMESPACE = "kubernetes:core/v1:Namespace";

/** Each rendered Kubernetes object in a namespace the stack creates, with whether it depends on that Namespace. */
function namespacedDependencies(result: RenderResult): [string, boolean][] {
    const created = new Map(
        result.resources
            .filter((r) => r.type === NAMESPACE && r.read === undefined)
            .map((r) => [(r.inputs.metadata as { name: string }).name, r.name]),
    );
    return result.resources
        .filter(
            (r) =>
                r.type.startsWith("kubernetes:") &&
                r.read === undefined &&
                created.has((r.inputs.metadata as { namespace?: string } | undefined)?.namespace ?? ""),
        )
        .map((r) => [
            `${r.type} ${r.name}`,
            r.options.dependsOn.includes(created.get((r.inputs.metadata as { namespace: string }).namespace)!),
        ]);
}

describe("objects in a namespace the stack creates", () => {
    test.each(["self-signed", "cert-manager"])(
        "GIVEN an operator serving webhooks in mode %s WHEN rendered THEN every object in its namespace (serving Secret or Certificate, Service, PDB...) depends on the Namespace",
        async (mode) => {
            const certificates = mode === "cert-manager" ? { mode, issuer: { kind: "ClusterIssuer", name: "ca" } } : { mode };
            // Two replicas: a one-pod backend gets no PodDisruptionBudget (components/operator/replicas.ts).
            const install = { name: "op", csv: scopableBundle(), namespace: "ops", targetNamespaces: ["ops"], config: { replicas: 2 } };
            const result = await renderOperators([install], { certificates });
            expect(result.errors).toEqual([]);
            const dependencies = namespacedDependencies(result);
            expect(dependencies.map(([name]) => name)).toEqual(
                expect.arrayContaining([
                    "kubernetes:core/v1:Service op-node-maintenance-operator-controller-manager-webhooks-service",
                    "kubernetes:policy/v1:PodDisruptionBudget op-node-maintenance-operator-controller-manager-pdb",
                    mode === "cert-manager"
                        ? "kubernetes:cert-manager.io/v1:Certificate op-node-maintenance-operator-controller-manager-certificate"
                        : "kubernetes:core/v1:Secret op-node-maintenance-operator-controller-manager-serving-secret",
                ]),
            );
            expect(dependencies.filter(([, waits]) => !waits)).toEqual([]);
        },
    );

    test("GIVEN subscriptions WHEN rendered THEN every object in the webhook's namespace depends on it", async () => {
        const result = await renderConfig({
            cluster: { name: "c", platform: "kubernetes", kubeContext: "test" },
            subscriptions: { enabled: true, webhook: { image: `quay.io/example/subscription-webhook@sha256:${"5".repeat(64)}` } },
        });
        const dependencies = namespacedDependencies(result);
        expect(dependencies.length).toBeGreaterThan(4);
        expect(dependencies.filter(([, waits]) => !waits)).toEqual([]);
    });
});

describe("namespaces the stack only labels or fills", () => {
    const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    const operators = [
        { name: "op", csv: scopableBundle(), namespace: "ops", targetNamespaces: ["team-a", "team-b"] },
        {
            name: "other",
            csv: `${CSV_DIR}/etcdoperator-0.9.4.clusterserviceversion.yaml`,
            namespace: "openshift-operators",
            createNamespace: false,
            targetNamespaces: ["ops"],
        },
    ];

    test("GIVEN target namespaces and an existing operator namespace missing from the cluster WHEN rendered THEN one report names each, and nothing is registered", async () => {
        const result = await renderConfig(
            { cluster: { name: "c", platform: "kubernetes", kubeContext: "test" }, operators },
            { cluster: [namespace("team-a")] },
        );
        expect(result.errors).toEqual([
            formatReport([
                {
                    path: "operators[0].targetNamespaces[1]",
                    message:
                        'Namespace "team-b" does not exist in the cluster: operator "op" targets it, and the stack labels or fills target namespaces but never creates them (a label patch would create a bare namespace); create it first',
                },
                {
                    path: "operators[1].namespace",
                    message:
                        'Namespace "openshift-operators" does not exist in the cluster: operator "other" runs there and createNamespace is false; create it, or set createNamespace',
                },
            ]),
        ]);
        expect(result.resources).toEqual([]);
        expect(result.resources.filter((r) => r.type === "kubernetes:core/v1:NamespacePatch")).toEqual([]);
    });

    test("GIVEN every one of them exists WHEN rendered THEN the labels are patches of existing namespaces, and the stack's own namespace is not checked", async () => {
        const result = await renderConfig(
            { cluster: { name: "c", platform: "kubernetes", kubeContext: "test" }, operators },
            { cluster: [namespace("team-a"), namespace("team-b"), namespace("openshift-operators")] },
        );
        expect(result.errors).toEqual([]);
        // Namespaces asked about (the running Deployments are read too, for the upgrade checks: upgrade.test.ts).
        expect(
            result.lookups
                .filter((l) => l.type === "kubernetes:core/v1:Namespace")
                .map((l) => l.id)
                .sort(),
        ).toEqual(["openshift-operators", "team-a", "team-b"]);
        expect(
            result.resources
                .filter((r) => r.type === "kubernetes:core/v1:NamespacePatch")
                .map((r) => (r.inputs.metadata as { name: string }).name)
                .sort(),
        ).toEqual(["team-a", "team-b"]);
        // The other install's Role and RoleBinding in "ops", which the first install creates, wait for it.
        const inOps = namespacedDependencies(result).filter(([name]) => name.includes("other-"));
        expect(inOps.length).toBeGreaterThan(0);
        expect(inOps.filter(([, waits]) => !waits)).toEqual([]);
    });
});
