import fc from "fast-check";
import { installedCsvsOf, storedVersionProblems } from "../../components/operator/upgrade";
import { planOperators } from "../../components/operator";
import { OPERATOR_VERSION_ANNOTATION } from "../../components/operator/deployments";
import { validateStackConfig } from "../../components/config";
import { SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig, ROOT } from "../helpers/render";

const WIDGETS_CRD = "widgets.samples.cluster-platform.io";
const WIDGETS = { name: "widgets", csv: SAMPLE_CSVS.widgets, namespace: "widget-operator", targetNamespaces: [] };
const STACK = { cluster: { name: "test", platform: "kubernetes", kubeContext: "test" }, operators: [WIDGETS] };

/** The widgets CRD as the cluster holds it after earlier installs stored objects at `storedVersions`. */
const clusterCrd = (storedVersions: string[]) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: WIDGETS_CRD },
    spec: { group: "samples.cluster-platform.io", names: { plural: "widgets", kind: "Widget" }, scope: "Namespaced", versions: [] },
    status: { storedVersions },
});

describe("upgrade safety: stored versions (OLM's SafeStorageVersionUpgrade)", () => {
    test("GIVEN a cluster CRD that stored objects at v1beta1, which the bundle's manifest (v1alpha1, v1) drops WHEN previewed THEN the pre-flight refuses, naming operator, CRD and version, and nothing is registered", async () => {
        const result = await renderConfig(STACK, { cluster: [clusterCrd(["v1beta1", "v1"])] });
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: operator "widgets": CRD "${WIDGETS_CRD}": the bundle's manifest drops version "v1beta1", which the cluster's CRD lists in status.storedVersions, so objects stored at it could no longer be read (OLM refuses this upgrade too: pkg/lib/crd/storage.go); keep the version, or migrate every object to a kept version and remove "v1beta1" from status.storedVersions first`,
        ]);
        expect(result.resources.filter((r) => r.type.startsWith("kubernetes:"))).toEqual([]);
    });

    test("GIVEN a cluster CRD whose stored versions the manifest keeps, or no CRD yet WHEN previewed THEN the install goes ahead, and the CRD was read", async () => {
        for (const cluster of [[clusterCrd(["v1alpha1", "v1"])], []]) {
            const result = await renderConfig(STACK, { cluster });
            expect(result.errors).toEqual([]);
            expect(result.lookups).toContainEqual({
                type: "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
                id: WIDGETS_CRD,
                presence: cluster.length > 0 ? "present" : "absent",
            });
        }
    });

    test("GIVEN any stored versions WHEN checked THEN exactly the stored versions the manifest lacks are refused, in the order the cluster lists them", () => {
        const config = validateStackConfig({ ...STACK });
        if (!config.ok) {
            throw new Error(JSON.stringify(config.problems));
        }
        const planned = planOperators(config.config.operators, config.config.olm, ROOT);
        const manifestVersions = ["v1alpha1", "v1"];
        fc.assert(
            fc.property(fc.uniqueArray(fc.constantFrom("v1alpha1", "v1beta1", "v1", "v2", "v3"), { minLength: 1 }), (stored) => {
                const problems = storedVersionProblems(
                    planned.plans,
                    config.config.operators,
                    new Map([[WIDGETS_CRD, clusterCrd(stored)]]),
                );
                const dropped = stored.filter((v) => !manifestVersions.includes(v));
                expect(problems.map((p) => /drops version "([^"]+)"/.exec(p.message)?.[1])).toEqual(dropped);
                expect(problems.every((p) => p.path === "operators[0].csv")).toBe(true);
            }),
        );
    });
});

describe("upgrade paths against the running operator", () => {
    /** The widget operator's Deployment as an earlier install of `csvName` left it. */
    const running = (csvName: string, deployment = "widget-webhook") => ({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: deployment, namespace: "widget-operator" },
        spec: { template: { spec: { containers: [{ name: "webhook", env: [{ name: "OPERATOR_CONDITION_NAME", value: csvName }] }] } } },
    });

    test("GIVEN v1.0.0 running and a bundle (v1.2.0) that neither replaces nor skips it WHEN previewed THEN the jump is refused naming both", async () => {
        const result = await renderConfig(STACK, { cluster: [running("widget-operator.v1.0.0")] });
        expect(result.errors).toEqual([
            'invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: operator "widgets": "widget-operator.v1.2.0" does not replace or skip the installed "widget-operator.v1.0.0" (spec.replaces: null, spec.skips: []): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)',
        ]);
    });

    test("GIVEN v1.0.0 running only as the bundle's second Deployment (its first not yet installed) WHEN previewed THEN the jump is refused as well", async () => {
        const result = await renderConfig(STACK, { cluster: [running("widget-operator.v1.0.0", "widget-controller")] });
        expect(result.errors).toEqual([
            'invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: operator "widgets": "widget-operator.v1.2.0" does not replace or skip the installed "widget-operator.v1.0.0" (spec.replaces: null, spec.skips: []): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)',
        ]);
    });

    test("GIVEN an interrupted upgrade (one Deployment at v1.2.0, the other still at v1.0.0) WHEN previewed THEN the jump from v1.0.0 is refused", async () => {
        const result = await renderConfig(STACK, {
            cluster: [running("widget-operator.v1.2.0"), running("widget-operator.v1.0.0", "widget-controller")],
        });
        expect(result.errors).toHaveLength(1);
        expect(result.errors[0]).toContain('does not replace or skip the installed "widget-operator.v1.0.0"');
    });

    test("GIVEN Deployments recording one CSV, some with its version WHEN read THEN it is one installed CSV with the version", () => {
        const env = (name: string) => [{ name: "OPERATOR_CONDITION_NAME", value: name }];
        const deployment = (name: string, version?: string) => ({
            spec: {
                template: {
                    metadata: version ? { annotations: { [OPERATOR_VERSION_ANNOTATION]: version } } : {},
                    spec: { containers: [{ name: "c", env: env(name) }] },
                },
            },
        });
        expect(installedCsvsOf([deployment("a.v1"), "absent", deployment("a.v1", "1.0.0"), deployment("b.v2")])).toEqual([
            { name: "a.v1", version: "1.0.0" },
            { name: "b.v2" },
        ]);
    });

    test("GIVEN the same CSV running WHEN previewed THEN it is no upgrade and nothing is refused", async () => {
        const result = await renderConfig(STACK, { cluster: [running("widget-operator.v1.2.0")] });
        expect(result.errors).toEqual([]);
    });
});
