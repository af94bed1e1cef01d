/**
 * Seed 002, *Webhook Upgrades*: a changed webhook is removed before its operator's Deployment
 * changes. The order follows from the options the program registers (`deleteBeforeReplace` on
 * the webhook generation, property dependencies, `replaceOnChanges` and `deleteBeforeReplace` on
 * the webhook configurations) under the engine's delete-before-replace rules (see
 * tests/helpers/engine-steps.ts, which cites pulumi/pulumi's step generator).
 */
import type { RenderResult } from "../../scripts/render/render";
import { stepsOf } from "../helpers/engine-steps";
import { readCsv, renderOperators, writeBundle, Yaml } from "../helpers/operators";

const FILE = "opentelemetry-operator-0.158.0.clusterserviceversion.yaml";
const DEPLOYMENT = "op-deployment-opentelemetry-operator-controller-manager";
const GENERATION = "op-webhook-generation";
const CONFIGURATIONS = [
    "op-opentelemetry-operator-controller-manager-webhooks-mutating",
    "op-opentelemetry-operator-controller-manager-webhooks-validating",
];

const render = (csv: Yaml): Promise<RenderResult> =>
    renderOperators([{ name: "op", csv: writeBundle(csv), namespace: "ops", targetNamespaces: [] }]);
const named = (result: RenderResult, name: string) => {
    const found = result.resources.find((r) => r.name === name && r.read === undefined);
    if (!found) {
        throw new Error(`no resource ${name}`);
    }
    return found;
};

describe("a changed webhook is removed before its Deployment changes", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await render(readCsv(FILE));
    });

    test("GIVEN an install with webhooks WHEN rendered THEN each configuration's metadata depends on the generation and is replaced, delete first, on any change of it", () => {
        expect(named(result, GENERATION).options.deleteBeforeReplace).toBe(true);
        expect(named(result, DEPLOYMENT).options.dependsOn).toContain(GENERATION);
        for (const name of CONFIGURATIONS) {
            const { options } = named(result, name);
            expect(options.propertyDependencies.metadata).toContain(GENERATION);
            expect(options.replaceOnChanges).toEqual(["metadata"]);
            expect(options.deleteBeforeReplace).toBe(true);
            expect(options.dependsOn).toContain(DEPLOYMENT);
        }
    });

    test("GIVEN a new version that changes a webhook and the Deployment WHEN the engine steps through it THEN the old configurations are deleted, then the generation, before the Deployment is updated, and recreated after it", async () => {
        const next = readCsv(FILE);
        next.spec.webhookdefinitions[1].timeoutSeconds = 5;
        next.spec.install.spec.deployments[0].spec.template.spec.containers[0].image =
            "ghcr.io/open-telemetry/opentelemetry-operator/opentelemetry-operator:0.159.0";
        const upgraded = await render(next);
        const oldName = result.manifests.find((m) => m.object.kind === "ConfigMap")?.object.metadata as { name: string };
        const newName = upgraded.manifests.find((m) => m.object.kind === "ConfigMap")?.object.metadata as { name: string };
        expect(newName.name).not.toBe(oldName.name);

        const steps = stepsOf(upgraded.resources, new Set([GENERATION]), new Set([DEPLOYMENT])).filter((s) => !s.startsWith("same "));
        expect(steps).toEqual([
            `delete ${CONFIGURATIONS[1]}`,
            `delete ${CONFIGURATIONS[0]}`,
            `delete ${GENERATION}`,
            `create ${GENERATION}`,
            `update ${DEPLOYMENT}`,
            `create ${CONFIGURATIONS[0]}`,
            `create ${CONFIGURATIONS[1]}`,
        ]);
    });

    test("GIVEN a new version that only changes the Deployment WHEN the engine steps through it THEN the webhooks stay and only the Deployment is updated", async () => {
        const next = readCsv(FILE);
        next.spec.install.spec.deployments[0].spec.template.spec.containers[0].image =
            "ghcr.io/open-telemetry/opentelemetry-operator/opentelemetry-operator:0.159.0";
        const upgraded = await render(next);
        expect(upgraded.manifests.find((m) => m.object.kind === "ConfigMap")?.object.metadata).toEqual(
            result.manifests.find((m) => m.object.kind === "ConfigMap")?.object.metadata,
        );
        expect(stepsOf(upgraded.resources, new Set(), new Set([DEPLOYMENT])).filter((s) => !s.startsWith("same "))).toEqual([
            `update ${DEPLOYMENT}`,
        ]);
    });

    test("GIVEN configurations registered without replaceOnChanges WHEN the generation is replaced THEN the model leaves them in place: the order rests on the options, not on the provider", () => {
        const withoutOption = result.resources.map((r) =>
            CONFIGURATIONS.includes(r.name) ? { ...r, options: { ...r.options, replaceOnChanges: [] } } : r,
        );
        const steps = stepsOf(withoutOption, new Set([GENERATION]), new Set([DEPLOYMENT])).filter((s) => !s.startsWith("same "));
        expect(steps).toEqual([`delete ${GENERATION}`, `create ${GENERATION}`, `update ${DEPLOYMENT}`]);
    });
});
