/**
 * Reproducibility and the other destinations: two builds from fresh temporary projects (files
 * copied anew, so different paths, inodes and mtimes) give byte-identical manifests; the OCI
 * image layout output is read by skopeo; chunked uploads reach the registry intact.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { buildAndPublish, planImage } from "../../components/webhook-image/build";
import type { WebhookImageOutputs } from "../../components/webhook-image/operations";
import { WebhookImageProvider } from "../../components/webhook-image/provider";
import { buildNodeBaseLayout, pushBase } from "../helpers/node-base-image";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { imageContent, makeProject } from "../helpers/webhook-project";
import { requireTools } from "../helpers/system-tools";

requireTools("docker-registry", "skopeo");

const run = promisify(execFile);
const provider = new WebhookImageProvider();

let registry: LocalRegistry;
let work: string;
let baseImage: string;
const projects: string[] = [];

beforeAll(async () => {
    registry = await startRegistry();
    work = mkdtempSync(path.join(os.tmpdir(), "image-layout-"));
    baseImage = (await pushBase(buildNodeBaseLayout(work), registry.host, "base/node", "oci-index")).pinned;
});

afterAll(async () => {
    await registry?.stop();
    for (const directory of [work, ...projects]) {
        rmSync(directory, { recursive: true, force: true });
    }
});

async function layoutBuild(project: string): Promise<WebhookImageOutputs> {
    const content = imageContent(project, baseImage, { labels: { "org.opencontainers.image.revision": "f".repeat(40) } });
    const plan = await planImage(content);
    const created = await provider.create({
        ...content,
        repository: "cluster-platform/subscription-webhook",
        output: "oci-layout",
        layoutDirectory: path.join(project, "out", "oci", "cluster-platform", "subscription-webhook"),
        contentHash: plan.contentHash,
        layers: plan.layers,
        deleteOnDestroy: false,
    });
    return created.outs as WebhookImageOutputs;
}

function layoutBlob(image: WebhookImageOutputs, digest: string): Buffer {
    return readFileSync(path.join(image.layoutDirectory as string, "blobs", "sha256", digest.slice("sha256:".length)));
}

describe("reproducible builds into an OCI image layout", () => {
    let first: WebhookImageOutputs;
    let second: WebhookImageOutputs;

    beforeAll(async () => {
        for (let i = 0; i < 2; i++) {
            projects.push(makeProject({ copyClosureOf: ["pino", "prom-client"] }));
        }
        first = await layoutBuild(projects[0]);
        second = await layoutBuild(projects[1]);
    });

    test("GIVEN the same sources copied into two fresh directories WHEN each is built THEN the manifests, configs and layers are byte-identical", () => {
        expect(second.digest).toBe(first.digest);
        expect(second.contentHash).toBe(first.contentHash);
        const manifest = layoutBlob(first, first.digest);
        expect(layoutBlob(second, second.digest).equals(manifest)).toBe(true);
        const parsed = JSON.parse(manifest.toString()) as { config: { digest: string }; layers: Array<{ digest: string }> };
        for (const digest of [parsed.config.digest, ...parsed.layers.map((l) => l.digest)]) {
            expect(layoutBlob(second, digest).equals(layoutBlob(first, digest))).toBe(true);
        }
        expect(first.imageRef).toBe(`cluster-platform/subscription-webhook@${first.digest}`);
    });

    test("GIVEN the layout WHEN skopeo reads it THEN it finds the image under `latest` with the webhook's entrypoint and user", async () => {
        const { stdout } = await run("skopeo", ["inspect", "--config", `oci:${first.layoutDirectory}:latest`]);
        const config = JSON.parse(stdout) as { config: { Entrypoint: string[]; User: string; Labels: Record<string, string> } };
        expect(config.config.Entrypoint).toEqual(["/nodejs/bin/node", "/app/webhook/main.js"]);
        expect(config.config.User).toBe("65532:65532");
        expect(config.config.Labels["org.opencontainers.image.revision"]).toBe("f".repeat(40));
        const index = JSON.parse(readFileSync(path.join(first.layoutDirectory as string, "index.json"), "utf8")) as {
            manifests: Array<{ digest: string; annotations: Record<string, string> }>;
        };
        expect(index.manifests.map((m) => [m.digest, m.annotations["org.opencontainers.image.ref.name"]])).toEqual([
            [first.digest, "latest"],
        ]);
    });

    test("GIVEN a layout image WHEN read, and again after its index entry is removed THEN read finds it, then reports it gone", async () => {
        expect(await provider.read("id", first)).toEqual({ id: "id", props: first });
        await provider.delete("id", { ...first, deleteOnDestroy: true });
        expect(await provider.read("id", first)).toEqual({ id: "", props: {} });
    });
});

describe("chunked uploads", () => {
    test("GIVEN a chunk size smaller than the dependency layer WHEN pushed THEN the registry receives PATCH chunks and skopeo copies the image back with every digest verified", async () => {
        const project = makeProject();
        projects.push(project);
        const content = imageContent(project, baseImage);
        const plan = await planImage(content);
        const image = await buildAndPublish(
            { ...content, repository: `${registry.host}/webhook/chunked`, output: "registry" },
            { chunkSize: 64 * 1024, expectedLayers: plan.layers },
        );

        const manifest = JSON.parse(
            execFileSync("skopeo", ["inspect", "--tls-verify=false", "--raw", `docker://${image.imageRef}`], { encoding: "utf8" }),
        ) as {
            config: { digest: string; size: number };
            layers: Array<{ digest: string; size: number }>;
        };
        const uploaded = [manifest.config, ...manifest.layers.slice(1)];
        expect(image.report.uploaded).toEqual(uploaded.map((b) => b.digest).sort());
        const patches = registry.requests().filter((r) => r.method === "PATCH" && r.uri.startsWith("/v2/webhook/chunked/blobs/uploads/"));
        const chunks = uploaded.filter((b) => b.size > 64 * 1024).reduce((sum, b) => sum + Math.ceil(b.size / (64 * 1024)), 0);
        expect(chunks).toBeGreaterThan(1);
        expect(patches.map((r) => r.status)).toEqual(Array(chunks).fill(202));
        execFileSync(
            "skopeo",
            ["copy", "--src-tls-verify=false", `docker://${image.imageRef}`, `oci:${path.join(work, "chunked-copy")}:check`],
            { stdio: "pipe" },
        );
    });
});
