/**
 * How index.ts wires the webhook image: built only when the subscription webhook needs it,
 * published where webhookImage says (an OCI layout under out/oci/, a registry, or the stack's ECR
 * repository), labelled from committed content, and exported as the `webhookImageRef` stack output.
 */
import { WEBHOOK_INPUT_PATHS } from "../../components/webhook-image";
import { sourceTreeOf } from "../../components/webhook-image/provenance";
import { manifestNamed, MINIMAL, renderConfig, resourceNamed, ROOT } from "../helpers/render";
import { tlsComputed } from "../helpers/tls-signer";

const DYNAMIC = "pulumi-nodejs:dynamic:Resource";
const DEFAULT_BASE = "gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e";

/** package.json names no repository, so the only label is the webhook's inputs by content. */
function expectedLabels(): Record<string, string> {
    return { "dev.cluster-platform.source-tree": sourceTreeOf(ROOT, WEBHOOK_INPUT_PATHS) as string };
}

const SUBSCRIPTIONS_ON = { ...MINIMAL, subscriptions: { enabled: true } };
/** A render-to-directory stack: offline, so the image's default output is an OCI layout. */
const SUBSCRIPTIONS_ON_RENDERED = {
    cluster: { name: "test", platform: "kubernetes", renderYamlToDirectory: "out/test" },
    subscriptions: { enabled: true },
};

describe("the webhook image in the program", () => {
    test("GIVEN a render-to-directory stack with subscriptions on and the default webhookImage WHEN rendered THEN one image is built from the project as an OCI layout under out/oci/<repository> on the pinned base", async () => {
        const result = await renderConfig(SUBSCRIPTIONS_ON_RENDERED);
        expect(result.errors).toEqual([]);
        const image = resourceNamed(result, DYNAMIC, "subscription-webhook-image");
        expect(resourceNamed(result, "cluster-platform:webhook-image:WebhookImage", "subscription-webhook-image").parent).toBeNull();
        expect(image.parent).toBe("subscription-webhook-image");
        expect({ ...image.inputs, __provider: undefined, contentHash: undefined, layers: undefined }).toEqual({
            repository: "cluster-platform/subscription-webhook",
            output: "oci-layout",
            layoutDirectory: "out/oci/cluster-platform/subscription-webhook",
            baseImage: DEFAULT_BASE,
            platforms: ["linux/amd64"],
            projectDirectory: ".",
            outputDirectory: "dist",
            application: "webhook",
            entrypoint: "webhook/main.js",
            user: 65532,
            env: { NODE_ENV: "production" },
            labels: expectedLabels(),
            deleteOnDestroy: false,
            __provider: undefined,
            contentHash: undefined,
            layers: undefined,
        });
    });

    test("GIVEN the provider's answer WHEN the program runs as an update THEN the webhook Deployment runs that imageRef and the stack exports it", async () => {
        const digest = `sha256:${"3".repeat(64)}`;
        const result = await renderConfig(
            { ...SUBSCRIPTIONS_ON, webhookImage: { repository: "ghcr.io/example/subscription-webhook", output: "registry" } },
            {
                preview: false,
                computed: {
                    ...tlsComputed({ now: new Date("2026-01-01T00:00:00Z") }),
                    [DYNAMIC]: (call) => ({ digest, imageRef: `${String(call.inputs.repository)}@${digest}` }),
                },
            },
        );
        const imageRef = `ghcr.io/example/subscription-webhook@${digest}`;
        expect(result.stackOutputs.webhookImageRef).toBe(imageRef);
        const deployment = manifestNamed(result, "Deployment", "subscription-injection-webhook") as {
            spec: { template: { spec: { containers: Array<{ image: string }> } } };
        };
        expect(deployment.spec.template.spec.containers.map((c) => c.image)).toEqual([imageRef]);
    });

    test.each([
        ["subscriptions off", MINIMAL],
        [
            "an image given in subscriptions.webhook.image",
            { ...MINIMAL, subscriptions: { enabled: true, webhook: { image: "quay.io/example/webhook@sha256:" + "4".repeat(64) } } },
        ],
    ])("GIVEN %s WHEN rendered THEN no image is built and no webhookImageRef exported", async (_what, config) => {
        const result = await renderConfig(config);
        expect(result.resources.filter((r) => r.type === DYNAMIC || r.type.startsWith("cluster-platform:webhook-image:"))).toEqual([]);
        expect(result.stackOutputs).not.toHaveProperty("webhookImageRef");
    });

    test("GIVEN a live stack, no webhookImage.output, a repository without a host and AWS on WHEN previewed THEN the image goes to the stack's ECR repository, whose URL is not known yet", async () => {
        const result = await renderConfig({ ...SUBSCRIPTIONS_ON, aws: { enabled: true, region: "us-east-1" } });
        expect(result.errors).toEqual([]);
        const image = resourceNamed(result, DYNAMIC, "subscription-webhook-image");
        expect([image.inputs.repository, image.inputs.output, image.inputs.layoutDirectory]).toEqual(["[unknown]", "registry", undefined]);
    });

    test("GIVEN output registry with a repository without a host and AWS off WHEN validated THEN the one problem says where to push instead", async () => {
        const result = await renderConfig({ ...SUBSCRIPTIONS_ON, webhookImage: { output: "registry" } });
        expect(result.problems).toEqual([
            {
                path: "webhookImage.repository",
                message:
                    '"cluster-platform/subscription-webhook" names no registry host, so output "registry" has nowhere to push: write it as `host/path` (e.g. "ghcr.io/example/subscription-webhook"), or enable aws to push to the stack\'s ECR repository',
            },
        ]);
    });

    test.each([
        [
            "AWS off",
            { enabled: false },
            'set webhookImage.output to "registry" (with a registry host in webhookImage.repository, or aws.enabled for the stack\'s ECR repository)',
        ],
        [
            "AWS on",
            { enabled: true, region: "us-east-1" },
            'set webhookImage.output to "registry" (with a registry host in webhookImage.repository, or none to push to the stack\'s ECR repository)',
        ],
    ])(
        "GIVEN a live stack with output oci-layout and %s WHEN validated THEN the one problem names webhookImage.output and what to set",
        async (_what, aws, what) => {
            const result = await renderConfig({ ...SUBSCRIPTIONS_ON, aws, webhookImage: { output: "oci-layout" } });
            expect(result.problems).toEqual([
                {
                    path: "webhookImage.output",
                    message: `"oci-layout" writes the image to a directory on this machine, which a live cluster cannot pull: ${what}, or subscriptions.webhook.image to an image the cluster can pull`,
                },
            ]);
            expect(result.resources).toEqual([]);
        },
    );

    test("GIVEN several webhookImage mistakes WHEN validated THEN each is reported with its path, value and rule", async () => {
        const result = await renderConfig({
            ...SUBSCRIPTIONS_ON,
            webhookImage: {
                repository: "ghcr.io/Example/webhook:1.0",
                baseImage: "node:22-slim",
                platforms: ["linux/amd64", "linux", "linux/amd64"],
            },
        });
        expect(result.problems).toEqual([
            { path: "webhookImage.baseImage", message: '"node:22-slim" must be pinned by digest: `name[:tag]@sha256:<64 hex digits>`' },
            {
                path: "webhookImage.platforms[1]",
                message: '"linux" must be `os/architecture[/variant]`, e.g. "linux/amd64", "linux/arm64" or "linux/arm/v7"',
            },
            { path: "webhookImage.platforms[2]", message: 'duplicate platform "linux/amd64" (already at index 0)' },
            { path: "webhookImage.repository", message: '"ghcr.io/Example/webhook:1.0" has a tag or digest; give the repository alone' },
        ]);
    });
});
