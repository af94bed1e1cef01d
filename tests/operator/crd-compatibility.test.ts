import { existingResourceProblems, revalidatedVersions } from "../../components/operator/crd-compatibility";
import type { CrdObject } from "../../components/operator/bundle";
import { planOperators } from "../../components/operator";
import { validateStackConfig } from "../../components/config";
import type { CollectionRef } from "../../components/shared/object-presence";
import { SAMPLE_CSVS, WIDGET_V1_SCHEMA } from "../helpers/operators";
import { renderConfig, ROOT } from "../helpers/render";

const WIDGETS_CRD = "widgets.samples.cluster-platform.io";
const WIDGETS = { name: "widgets", csv: SAMPLE_CSVS.widgets, namespace: "widget-operator", targetNamespaces: [] };
const STACK = { cluster: { name: "test", platform: "kubernetes", kubeContext: "test" }, operators: [WIDGETS] };

const MANIFEST_V1ALPHA1_SCHEMA = {
    type: "object",
    properties: {
        spec: { type: "object", properties: { size: { type: "integer", minimum: 1 } } },
        status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    },
};

/** The widgets CRD as the cluster holds it: v1 served with `v1Schema`, v1alpha1 as the manifest has it. */
const clusterCrd = (v1Schema: unknown, v1Served = true) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: WIDGETS_CRD },
    spec: {
        group: "samples.cluster-platform.io",
        names: { plural: "widgets", kind: "Widget" },
        scope: "Namespaced",
        versions: [
            { name: "v1alpha1", served: true, storage: false, schema: { openAPIV3Schema: MANIFEST_V1ALPHA1_SCHEMA } },
            { name: "v1", served: v1Served, storage: true, schema: { openAPIV3Schema: v1Schema } },
        ],
    },
    status: { storedVersions: ["v1"] },
});

/** The v1 schema of an older bundle that allowed up to 20 replicas. */
const LOOSER_V1 = {
    ...WIDGET_V1_SCHEMA,
    properties: {
        ...WIDGET_V1_SCHEMA.properties,
        spec: {
            ...WIDGET_V1_SCHEMA.properties.spec,
            properties: { ...WIDGET_V1_SCHEMA.properties.spec.properties, replicas: { type: "integer", minimum: 1, maximum: 20 } },
        },
    },
};

const widget = (name: string, replicas: number) => ({
    apiVersion: "samples.cluster-platform.io/v1",
    kind: "Widget",
    metadata: { name, namespace: "team-a" },
    spec: { replicas },
});

function plans() {
    const config = validateStackConfig({ ...STACK });
    if (!config.ok) {
        throw new Error(JSON.stringify(config.problems));
    }
    return { operators: config.config.operators, plans: planOperators(config.config.operators, config.config.olm, ROOT).plans };
}

describe("upgrade safety: existing custom resources against the new schema (OLM's validateV1CRDCompatibility)", () => {
    test("GIVEN the cluster's CRD allows 20 replicas, two Widgets have 11 and 12, and the bundle allows 10 WHEN previewed THEN the pre-flight refuses, naming the operator, CRD, version and each object with its field, and nothing is registered", async () => {
        const result = await renderConfig(STACK, {
            cluster: [clusterCrd(LOOSER_V1), widget("small", 3), widget("big", 11), widget("bigger", 12)],
        });
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: operator "widgets": CRD "${WIDGETS_CRD}": the bundle's schema for version "v1" refuses 2 existing custom resources (OLM refuses this upgrade too: "updated validation is too restrictive", pkg/controller/operators/catalog/operator.go): Widget "team-a/big": spec.replicas: 11 is above the maximum 10 | Widget "team-a/bigger": spec.replicas: 12 is above the maximum 10; change those resources first, or keep a schema that accepts them`,
        ]);
        expect(result.resources.filter((r) => r.type.startsWith("kubernetes:"))).toEqual([]);
    });

    test("GIVEN Widgets the new schema accepts WHEN previewed THEN the install goes ahead", async () => {
        const result = await renderConfig(STACK, { cluster: [clusterCrd(LOOSER_V1), widget("small", 3), widget("edge", 10)] });
        expect(result.errors).toEqual([]);
    });

    test("GIVEN the cluster's CRD and the manifest WHEN the versions to check are chosen THEN every version both serve is listed, changed schema or not, as OLM lists them", () => {
        const manifest = {
            spec: {
                versions: [
                    { name: "v1alpha1", served: true, storage: false, schema: { openAPIV3Schema: MANIFEST_V1ALPHA1_SCHEMA } },
                    { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: WIDGET_V1_SCHEMA } },
                    { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: { type: "object" } } },
                ],
            },
        } as unknown as CrdObject;
        expect(revalidatedVersions(clusterCrd(LOOSER_V1), manifest).map((v) => v.version)).toEqual(["v1alpha1", "v1"]);
        expect(revalidatedVersions(clusterCrd(WIDGET_V1_SCHEMA), manifest).map((v) => v.version)).toEqual(["v1alpha1", "v1"]);
        expect(revalidatedVersions(clusterCrd(LOOSER_V1, false), manifest).map((v) => v.version)).toEqual(["v1alpha1"]);
    });

    test("GIVEN an unchanged schema and a Widget that, read at v1 through conversion, it refuses THEN the Widget is refused as OLM refuses it; GIVEN a list that fails THEN it is a warning naming the CRD and version, not a refusal", async () => {
        const { plans: planned, operators } = plans();
        const asked: CollectionRef[] = [];
        // Written at v1alpha1 (validated against that schema only) and converted for the v1 list.
        const converted = widget("converted", 11);
        const unchanged = await existingResourceProblems(
            planned,
            operators,
            new Map([[WIDGETS_CRD, clusterCrd(WIDGET_V1_SCHEMA)]]),
            async (ref) => {
                asked.push(ref);
                return ref.apiVersion.endsWith("/v1") ? [converted] : [];
            },
        );
        expect(asked.map((ref) => ref.apiVersion)).toEqual(["samples.cluster-platform.io/v1alpha1", "samples.cluster-platform.io/v1"]);
        expect(unchanged.warnings).toEqual([]);
        expect(unchanged.problems.map((p) => p.message)).toEqual([
            `operator "widgets": CRD "${WIDGETS_CRD}": the bundle's schema for version "v1" refuses 1 existing custom resource (OLM refuses this upgrade too: "updated validation is too restrictive", pkg/controller/operators/catalog/operator.go): Widget "team-a/converted": spec.replicas: 11 is above the maximum 10; change those resources first, or keep a schema that accepts them`,
        ]);

        asked.length = 0;
        const failing = await existingResourceProblems(
            planned,
            operators,
            new Map([[WIDGETS_CRD, clusterCrd(LOOSER_V1, false)]]),
            async (ref) => {
                asked.push(ref);
                throw new Error("cannot list Widget objects at samples.cluster-platform.io/v1alpha1: the API server answered HTTP 500");
            },
        );
        expect(asked).toEqual([{ apiVersion: "samples.cluster-platform.io/v1alpha1", kind: "Widget", plural: "widgets" }]);
        expect(failing).toEqual({
            problems: [],
            warnings: [
                `operators[0].csv: operator "widgets": CRD "${WIDGETS_CRD}": existing Widget objects at v1alpha1 not checked against the new schema: cannot list Widget objects at samples.cluster-platform.io/v1alpha1: the API server answered HTTP 500`,
            ],
        });
    });

    test("GIVEN more than five refused objects WHEN reported THEN five are named and the rest counted", async () => {
        const { plans: planned, operators } = plans();
        const objects = Array.from({ length: 7 }, (_, i) => widget(`w${i}`, 11 + i));
        const { problems } = await existingResourceProblems(
            planned,
            operators,
            new Map([[WIDGETS_CRD, clusterCrd(LOOSER_V1)]]),
            async () => objects,
        );
        expect(problems.map((p) => p.message.match(/Widget "team-a\/w\d"/g))).toEqual([
            ['Widget "team-a/w0"', 'Widget "team-a/w1"', 'Widget "team-a/w2"', 'Widget "team-a/w3"', 'Widget "team-a/w4"'],
        ]);
        expect(problems[0].message).toContain("refuses 7 existing custom resources");
        expect(problems[0].message).toContain("| and 2 more;");
    });
});
