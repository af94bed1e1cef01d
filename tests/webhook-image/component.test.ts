/**
 * The WebhookImage component under the mock runtime: what it hands the provider (plain,
 * machine-independent inputs with the plan's content hash) and how it treats a webhook that was
 * never compiled or is older than its sources.
 */
import { mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { planImage } from "../../components/webhook-image/build";
import type { WebhookImageInputs } from "../../components/webhook-image/operations";
import { WebhookImageProvider } from "../../components/webhook-image/provider";
import { renderProgram } from "../../scripts/render/render";
import { flattenConfig } from "../../scripts/render/config-file";
import { MINIMAL, ROOT } from "../helpers/render";
import { imageContent, withProject } from "../helpers/webhook-project";

const PROGRAM = path.join(ROOT, "tests", "fixtures", "webhook-image-program.ts");
const BASE = `registry.example/base/node:22@sha256:${"1".repeat(64)}`;
const DYNAMIC = "pulumi-nodejs:dynamic:Resource";
const DIGEST = `sha256:${"2".repeat(64)}`;

/** As a preview (outputs unknown), or as an update whose provider answers with a digest. */
function render(project: string, preview = true, baseImage = BASE, buildWhenMissing = false) {
    return renderProgram({
        program: PROGRAM,
        preview,
        computed: { [DYNAMIC]: (call) => ({ digest: DIGEST, imageRef: `${String(call.inputs.repository)}@${DIGEST}` }) },
        config: flattenConfig({
            ...MINIMAL,
            "fixture:repository": "registry.example/team/webhook",
            "fixture:output": "registry",
            "fixture:baseImage": baseImage,
            "fixture:project": project,
            "fixture:sourceTree": `sha256:${"a".repeat(64)}`,
            ...(buildWhenMissing ? { "fixture:buildWhenMissing": true } : {}),
        }),
    });
}

describe("the WebhookImage component", () => {
    const project = withProject("each");

    test("GIVEN a compiled webhook WHEN rendered THEN the provider gets the spec with the plan's content hash, relative paths and no credentials", async () => {
        const result = await render(project());
        expect(result.errors).toEqual([]);
        expect(result.warnings).toEqual([]);
        const component = result.resources.find((r) => r.type === "cluster-platform:webhook-image:WebhookImage");
        expect(component?.name).toBe("image");
        const image = result.resources.find((r) => r.type === DYNAMIC);
        const plan = await planImage(
            imageContent(project(), BASE, { labels: { "dev.cluster-platform.source-tree": `sha256:${"a".repeat(64)}` } }),
        );
        const { __provider: provider, ...inputs } = image?.inputs ?? {};
        expect(inputs).toEqual({
            application: "webhook",
            baseImage: BASE,
            contentHash: plan.contentHash,
            deleteOnDestroy: false,
            entrypoint: "webhook/main.js",
            env: { NODE_ENV: "production" },
            labels: { "dev.cluster-platform.source-tree": `sha256:${"a".repeat(64)}` },
            layers: plan.layers,
            output: "registry",
            outputDirectory: "dist",
            platforms: ["linux/amd64"],
            projectDirectory: path.relative(process.cwd(), project()),
            repository: "registry.example/team/webhook",
            user: 65532,
        });
        expect(provider).toContain('"components/webhook-image/operations"');
    });

    test("GIVEN the provider's answer WHEN the program runs as an update THEN the component's imageRef is the provider's", async () => {
        const result = await render(project(), false);
        expect(result.errors).toEqual([]);
        expect(result.stackOutputs).toEqual({ imageRef: `registry.example/team/webhook@${DIGEST}` });
    });

    test("GIVEN a webhook that was never compiled WHEN previewed THEN a warning says to build it and the digest is unknown", async () => {
        rmSync(path.join(project(), "dist"), { recursive: true });
        const preview = await render(project());
        expect(preview.errors).toEqual([]);
        expect(preview.warnings).toEqual([
            "dist/webhook/main.js does not exist: build the webhook first (npm run build); the image digest is unknown in this preview",
        ]);
        expect(preview.resources.find((r) => r.type === DYNAMIC)?.inputs.contentHash).toBe("[unknown]");
    });

    test("GIVEN a webhook that was never compiled WHEN updated THEN the program warns and the provider's create fails saying to build it", async () => {
        rmSync(path.join(project(), "dist"), { recursive: true });
        const update = await render(project(), false);
        expect(update.warnings).toEqual([
            "dist/webhook/main.js does not exist: build the webhook first (npm run build); this update will fail at the image",
        ]);
        const { __provider: _provider, ...inputs } = update.resources.find((r) => r.type === DYNAMIC)?.inputs ?? {};
        expect([inputs.contentHash, inputs.layers]).toEqual(["unbuilt", { dependencies: "unbuilt", application: "unbuilt" }]);
        await expect(new WebhookImageProvider().create(inputs as unknown as WebhookImageInputs)).rejects.toThrow(
            new Error(
                "cannot package the webhook image:\n  - dist/webhook/main.js does not exist: build the webhook first (npm run build)",
            ),
        );
    });

    test("GIVEN a checkout nobody built and buildWhenMissing (PKO's runs) WHEN previewed THEN the webhook is compiled from its TypeScript, the plan has a content hash and nothing warns", async () => {
        rmSync(path.join(project(), "dist"), { recursive: true });
        mkdirSync(path.join(project(), "webhook"));
        writeFileSync(path.join(project(), "webhook", "main.ts"), "const port: number = 8443;\nconsole.log(`listening on ${port}`);\n");
        writeFileSync(
            path.join(project(), "tsconfig.build.json"),
            JSON.stringify({
                compilerOptions: { target: "ES2022", module: "commonjs", outDir: "dist", rootDir: ".", types: [] },
                include: ["webhook/**/*.ts"],
            }),
        );
        const preview = await render(project(), true, BASE, true);
        expect(preview.errors).toEqual([]);
        expect(preview.warnings).toEqual([]);
        expect(readFileSync(path.join(project(), "dist", "webhook", "main.js"), "utf8")).toBe(
            "const port = 8443;\nconsole.log(`listening on ${port}`);\n",
        );
        expect(preview.resources.find((r) => r.type === DYNAMIC)?.inputs.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    });

    test("GIVEN sources newer than the compiled webhook WHEN rendered THEN a warning names them", async () => {
        mkdirSync(path.join(project(), "webhook"));
        writeFileSync(path.join(project(), "webhook", "main.ts"), "export {};\n");
        writeFileSync(path.join(project(), "webhook", "review.ts"), "export {};\n");
        const compiledLongAgo = new Date("2020-01-01T00:00:00Z");
        for (const file of ["main.js", "review.js"]) {
            utimesSync(path.join(project(), "dist", "webhook", file), compiledLongAgo, compiledLongAgo);
        }
        const result = await render(project());
        expect(result.warnings).toEqual([
            "dist/webhook is older than webhook/main.ts, webhook/review.ts: the image packages the last build; run npm run build first",
        ]);
    });

    test("GIVEN a base image that is not pinned by digest WHEN rendered THEN the error is a ResourceError shown under the WebhookImage component", async () => {
        const result = await render(project(), true, "registry.example/base/node:22");
        expect(result.errors).toEqual([
            'cluster-platform:webhook-image:WebhookImage (image): baseImage "registry.example/base/node:22": must be pinned by digest: `name[:tag]@sha256:<64 hex digits>`',
        ]);
    });
});
