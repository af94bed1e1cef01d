import fc from "fast-check";
import { installedCrds, retentionMessages } from "../../components/shared/crd-retention";
import type { RenderResult } from "../../scripts/render/render";
import { patchesOf, renderOperators, SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig, resourcesOfType } from "../helpers/render";

const CRD = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
const WIDGETS = {
    name: "widgets",
    csv: SAMPLE_CSVS.widgets,
    namespace: "widget-operator",
};
const BACKUPS = {
    name: "backups",
    csv: SAMPLE_CSVS.backups,
    namespace: "backup-operator",
    targetNamespaces: ["backup-operator"],
};

const crdOptions = (result: RenderResult) =>
    Object.fromEntries(
        resourcesOfType(result, CRD)
            .filter((r) => r.read === undefined)
            .map((r) => [r.name, r.options.retainOnDelete]),
    );

/** The output the next update reads back, as the update that `first` previews would publish it. */
const lastUpdate = (first: RenderResult) => ({
    installedCrds: first.stackOutputs.installedCrds,
    conversionResets: first.stackOutputs.conversionResets,
});

describe("CRDs outlive their operator", () => {
    test("GIVEN two operators with the defaults WHEN rendered THEN every CRD is kept on delete, the preview names them, and the stack output records them", async () => {
        const result = await renderOperators([WIDGETS, BACKUPS]);
        expect(result.errors).toEqual([]);
        expect(crdOptions(result)).toEqual({
            "widgets-crd-widgets.samples.cluster-platform.io": true,
            "backups-crd-backups.samples.cluster-platform.io": true,
        });
        expect(result.infos).toEqual([
            "operator backups: CRDs kept in the cluster, with their custom resources, when it is removed from config or the stack is destroyed (retainOnDelete): backups.samples.cluster-platform.io",
            "operator widgets: CRDs kept in the cluster, with their custom resources, when it is removed from config or the stack is destroyed (retainOnDelete): widgets.samples.cluster-platform.io",
        ]);
        expect(result.stackOutputs.installedCrds).toEqual({
            "backups.samples.cluster-platform.io": { owner: "operator backups", onRemoval: "keep" },
            "widgets.samples.cluster-platform.io": { owner: "operator widgets", onRemoval: "keep", conversion: "webhook", kind: "Widget" },
        });
    });

    test("GIVEN one operator opted in to deleteCrdsOnRemoval WHEN rendered THEN only its CRD may be deleted, and the preview says so", async () => {
        const result = await renderOperators([{ ...WIDGETS, deleteCrdsOnRemoval: true }, BACKUPS]);
        expect(crdOptions(result)).toEqual({
            "widgets-crd-widgets.samples.cluster-platform.io": false,
            "backups-crd-backups.samples.cluster-platform.io": true,
        });
        expect(result.infos).toContain(
            "operator widgets: CRDs DELETED, with every custom resource in them, when it is removed from config or the stack is destroyed (deleteCrdsOnRemoval: true): widgets.samples.cluster-platform.io",
        );
    });

    test("GIVEN an update that installed two operators WHEN one is removed from config THEN its CRD is no longer declared and the preview names it as left in the cluster", async () => {
        const first = await renderOperators([WIDGETS, BACKUPS]);
        const second = await renderOperators([BACKUPS], { render: { stackOutputs: lastUpdate(first) } });
        expect(second.errors).toEqual([]);
        expect(Object.keys(crdOptions(second))).toEqual(["backups-crd-backups.samples.cluster-platform.io"]);
        expect(second.warnings).toContain(
            "operator widgets: CRDs no longer declared, left in the cluster with their custom resources (retainOnDelete; the stack stops managing them): widgets.samples.cluster-platform.io; delete them with kubectl once nothing needs their data",
        );
    });

    test("GIVEN an update that installed an operator whose webhook converts its CRD WHEN the operator is removed THEN the render applies strategy None to the kept CRD under the conversion field manager, kept on delete, and the preview names the CRD and what None means for stored objects", async () => {
        const first = await renderOperators([WIDGETS, BACKUPS]);
        const second = await renderOperators([BACKUPS], { render: { stackOutputs: lastUpdate(first) } });
        expect(second.errors).toEqual([]);
        expect(patchesOf(second)).toEqual([
            {
                apiVersion: "apiextensions.k8s.io/v1",
                kind: "CustomResourceDefinition",
                metadata: {
                    name: "widgets.samples.cluster-platform.io",
                    annotations: { "pulumi.com/patchFieldManager": "cluster-platform-crd-conversion", "pulumi.com/patchForce": "true" },
                },
                spec: { group: "samples.cluster-platform.io", names: { kind: "Widget" }, conversion: { strategy: "None" } },
            },
        ]);
        const reset = resourcesOfType(second, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch");
        expect(reset.map((r) => [r.name, r.options.retainOnDelete, r.options.dependsOn])).toEqual([
            ["crd-conversion-none-widgets.samples.cluster-platform.io", true, ["crd-conversion-reset-widgets.samples.cluster-platform.io"]],
        ]);
        // First OLM's update (a merge patch dropping the webhook block whoever wrote it), through the
        // provider's own connection: the context, no kubeconfig path, and the kubeconfig argument (""
        // here, a file's contents with cluster.kubeconfig) kept secret (conversion-reset-operations.ts).
        const merge = resourcesOfType(second, "pulumi-nodejs:dynamic:Resource").filter((r) => r.name.startsWith("crd-conversion-reset-"));
        expect(merge.map((r) => [r.name, r.inputs.crd, r.inputs.context, r.inputs.kubeconfig])).toEqual([
            ["crd-conversion-reset-widgets.samples.cluster-platform.io", "widgets.samples.cluster-platform.io", "test", "[secret]"],
        ]);
        expect(second.warnings).toContain(
            "operator widgets: its conversion webhook leaves with it, so these kept CRDs get spec.conversion.strategy None (no webhook, no caBundle), as OLM sets when a CSV is removed and not replaced: widgets.samples.cluster-platform.io; each custom resource is then served at every version as stored (only apiVersion rewritten, no field converted, and fields the version read does not declare pruned): read them at their stored version (status.storedVersions), or re-add an operator that converts them, before clients use another version",
        );
        expect(second.stackOutputs.conversionResets).toEqual({ "widgets.samples.cluster-platform.io": "Widget" });
        // The updates after it hold the reset (no change to preview) and warn no more, until the operator is re-added.
        const third = await renderOperators([BACKUPS], { render: { stackOutputs: lastUpdate(second) } });
        expect(patchesOf(third)).toEqual(patchesOf(second));
        expect(third.warnings.filter((w) => w.includes("conversion webhook leaves"))).toEqual([]);
        const readded = await renderOperators([WIDGETS, BACKUPS], { render: { stackOutputs: lastUpdate(third) } });
        expect(patchesOf(readded).map((p) => p.spec.conversion.strategy)).toEqual(["Webhook"]);
        expect(readded.stackOutputs.conversionResets).toBeUndefined();
    });

    test("GIVEN an opted-in (deleteCrdsOnRemoval) converting operator WHEN removed THEN its CRD is deleted, not reset", async () => {
        const first = await renderOperators([{ ...WIDGETS, deleteCrdsOnRemoval: true }]);
        const second = await renderOperators([], { render: { stackOutputs: lastUpdate(first) } });
        expect(patchesOf(second)).toEqual([]);
    });

    test("GIVEN an update whose opted-in operator is removed WHEN previewed THEN the preview names its CRD as deleted with its custom resources", async () => {
        const first = await renderOperators([{ ...WIDGETS, deleteCrdsOnRemoval: true }]);
        const second = await renderOperators([], { render: { stackOutputs: lastUpdate(first) } });
        expect(second.warnings).toContain(
            "operator widgets: CRDs no longer declared, DELETED with every custom resource in them (deleteCrdsOnRemoval was true at the last update): widgets.samples.cluster-platform.io",
        );
    });

    test("GIVEN subscriptions WHEN rendered THEN the Bundle and ClusterBundle CRDs are kept on delete and named as such", async () => {
        const result = await renderConfig({
            cluster: { name: "c", platform: "kubernetes", kubeContext: "test" },
            subscriptions: { enabled: true, webhook: { image: `quay.io/example/subscription-webhook@sha256:${"5".repeat(64)}` } },
        });
        expect(result.errors).toEqual([]);
        expect(crdOptions(result)).toEqual({ "bundles.subscription.openshift.io": true, "clusterbundles.subscription.openshift.io": true });
        expect(result.infos).toEqual([
            "subscriptions: CRDs kept in the cluster, with their custom resources, when it is removed from config or the stack is destroyed (retainOnDelete): bundles.subscription.openshift.io, clusterbundles.subscription.openshift.io",
        ]);
    });

    test("GIVEN any previous and current CRD sets WHEN compared THEN exactly the dropped CRDs are named, each once, with the fate recorded at the last update", () => {
        const names = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}\.x\.io$/), { maxLength: 8 });
        fc.assert(
            fc.property(names, names, fc.boolean(), (before, after, deleteOnRemoval) => {
                const previous = installedCrds([{ owner: "operator a", crds: before, deleteOnRemoval }]);
                const current = installedCrds([{ owner: "operator a", crds: after, deleteOnRemoval: false }]);
                const { warnings } = retentionMessages(current, previous);
                const dropped = before.filter((n) => !after.includes(n)).sort();
                const named = warnings.flatMap((w) => w.match(/[a-z]+\.x\.io/g) ?? []);
                expect(named.sort()).toEqual(dropped);
                for (const warning of warnings) {
                    expect(warning).toContain(deleteOnRemoval ? "DELETED" : "left in the cluster");
                }
            }),
        );
    });
});
