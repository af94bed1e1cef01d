import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { gatedMetadata, webhookGenerationTransformation } from "../../components/operator/webhook-gate";

/** The resources an Output depends on (what the engine records as a property dependency). */
async function dependenciesOf(output: pulumi.Output<unknown>): Promise<pulumi.Resource[]> {
    // `allResources` is the SDK's own (internal) accessor for an Output's dependencies.
    return [...(await (output as unknown as { allResources(): Promise<Set<pulumi.Resource>> }).allResources())];
}

beforeAll(async () => {
    await pulumi.runtime.setMocks(
        { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: () => ({}) },
        "project",
        "stack",
        false,
    );
});

describe("webhook configurations depend on the webhook generation by property", () => {
    test("GIVEN a configuration's metadata WHEN gated THEN it keeps its fields, gains the generation annotation and depends on the generation ConfigMap", async () => {
        const generation = new k8s.core.v1.ConfigMap("generation", { metadata: { name: "op-webhooks-0123456789", namespace: "ops" } });
        const metadata = gatedMetadata(
            { name: "ops.webhook", labels: { a: "b" }, annotations: { c: "d" } },
            generation.metadata.name,
            "0123456789",
        );
        const value = await new Promise((resolve) => metadata.apply(resolve));
        expect(value).toEqual({
            name: "ops.webhook",
            labels: { a: "b" },
            annotations: { c: "d", "cluster-platform.io/webhook-generation": "0123456789" },
        });
        expect(await dependenciesOf(metadata)).toContain(generation);
    });

    test("GIVEN the transformation WHEN applied to a webhook configuration and to a Service THEN only the configurations are changed: annotated, depending on the generation", async () => {
        const generation = new k8s.core.v1.ConfigMap("generation-2", { metadata: { name: "op-webhooks-0123456789", namespace: "ops" } });
        const transformation = webhookGenerationTransformation(generation.metadata.name, "0123456789");
        const args = (type: string) => ({
            type,
            name: "x",
            props: { metadata: { name: "x" }, webhooks: [] },
            opts: {},
            resource: undefined as unknown as pulumi.Resource,
        });
        expect(transformation(args("kubernetes:core/v1:Service"))).toBeUndefined();
        for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
            const result = transformation(args(`kubernetes:admissionregistration.k8s.io/v1:${kind}`));
            const metadata = result?.props.metadata as pulumi.Output<unknown>;
            expect(await new Promise((resolve) => metadata.apply(resolve))).toEqual({
                name: "x",
                annotations: { "cluster-platform.io/webhook-generation": "0123456789" },
            });
            expect(await dependenciesOf(metadata)).toContain(generation);
            expect(result?.props.webhooks).toEqual([]);
        }
    });
});
