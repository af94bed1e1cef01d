/**
 * The WebhookImage provider's create/diff/update/read/delete, called directly against a real
 * registry (Debian's docker-registry), checked with a real third-party client (skopeo) and the
 * registry's own access log.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ImageContent, planImage } from "../../components/webhook-image/build";
import type { WebhookImageInputs, WebhookImageOutputs } from "../../components/webhook-image/operations";
import { WebhookImageProvider } from "../../components/webhook-image/provider";
import { buildNodeBaseLayout, NodeBaseLayout, pushBase } from "../helpers/node-base-image";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { makeProject, withProject } from "../helpers/webhook-project";
import { requireTools } from "../helpers/system-tools";

requireTools("docker-registry", "skopeo");

function skopeo(...args: string[]): unknown {
    return JSON.parse(execFileSync("skopeo", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
}

const LABELS = {
    "org.opencontainers.image.source": "https://example.com/cluster-platform",
    "org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
};

let registry: LocalRegistry;
let work: string;
let base: NodeBaseLayout;
let baseIndexRef: string;
let baseLayer: string;
const provider = new WebhookImageProvider();

async function inputsFor(
    project: string,
    repository: string,
    overrides: Partial<ImageContent & WebhookImageInputs> = {},
): Promise<WebhookImageInputs> {
    const content: ImageContent = {
        projectDirectory: project,
        outputDirectory: "dist",
        application: "webhook",
        entrypoint: "webhook/main.js",
        baseImage: baseIndexRef,
        platforms: ["linux/amd64"],
        user: 65532,
        env: { NODE_ENV: "production" },
        labels: LABELS,
        ...overrides,
    };
    const plan = await planImage(content);
    return {
        ...content,
        repository: `${registry.host}/${repository}`,
        output: "registry",
        contentHash: plan.contentHash,
        layers: plan.layers,
        deleteOnDestroy: false,
        ...overrides,
    };
}

beforeAll(async () => {
    registry = await startRegistry();
    work = mkdtempSync(path.join(os.tmpdir(), "image-provider-"));
    base = buildNodeBaseLayout(work);
    const pushed = await pushBase(base, registry.host, "base/node", "oci-index");
    baseIndexRef = pushed.pinned;
    const amd64 = (
        skopeo("inspect", "--tls-verify=false", "--raw", `docker://${registry.host}/base/node@${pushed.digest}`) as {
            manifests: Array<{ digest: string; platform: { architecture: string } }>;
        }
    ).manifests.find((m) => m.platform.architecture === "amd64");
    const manifest = skopeo("inspect", "--tls-verify=false", "--raw", `docker://${registry.host}/base/node@${amd64?.digest}`) as {
        layers: Array<{ digest: string }>;
    };
    baseLayer = manifest.layers[0].digest;
});

afterAll(async () => {
    await registry?.stop();
    rmSync(work, { recursive: true, force: true });
});

describe("WebhookImage provider against a registry", () => {
    let project: string;
    let first: WebhookImageOutputs;

    beforeAll(async () => {
        project = makeProject();
        const created = await provider.create(await inputsFor(project, "webhook/app"));
        first = created.outs as WebhookImageOutputs;
    });

    afterAll(() => rmSync(project, { recursive: true, force: true }));

    test("GIVEN the compiled webhook WHEN created THEN the output names the pushed manifest and skopeo reads entrypoint, user, working dir, env and labels from its config", () => {
        expect(first.imageRef).toBe(`${registry.host}/webhook/app@${first.digest}`);
        const config = skopeo("inspect", "--tls-verify=false", "--config", `docker://${first.imageRef}`) as {
            created: string;
            architecture: string;
            os: string;
            config: Record<string, unknown>;
            rootfs: { diff_ids: string[] };
            history: Array<{ created_by: string }>;
        };
        expect(config.created).toBe("1970-01-01T00:00:00Z");
        expect([config.os, config.architecture]).toEqual(["linux", "amd64"]);
        expect(config.config).toEqual({
            User: "65532:65532",
            Entrypoint: ["/nodejs/bin/node", "/app/webhook/main.js"],
            WorkingDir: "/app",
            Env: [
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
                "NODE_ENV=production",
            ],
            Labels: { "org.example.base": "test-node", ...LABELS },
        });
        expect(config.rootfs.diff_ids).toHaveLength(3);
        expect(config.rootfs.diff_ids.slice(1)).toEqual([first.layers.dependencies, first.layers.application]);
        expect(config.history.map((h) => h.created_by)).toEqual([
            "tests: node binary, its libraries, passwd, tmp",
            "cluster-platform webhook-image: /app/node_modules, production dependencies of pino, prom-client",
            "cluster-platform webhook-image: /app/webhook, compiled from webhook/",
        ]);
    });

    test("GIVEN the first push WHEN the registry log is read THEN the base layer was mounted from the base repository and only the new layers and config were uploaded", () => {
        const manifest = skopeo("inspect", "--tls-verify=false", "--raw", `docker://${first.imageRef}`) as {
            mediaType: string;
            config: { digest: string };
            layers: Array<{ mediaType: string; digest: string }>;
            annotations: Record<string, string>;
        };
        expect(manifest.mediaType).toBe("application/vnd.oci.image.manifest.v1+json");
        expect(manifest.layers.map((l) => l.mediaType)).toEqual(Array(3).fill("application/vnd.oci.image.layer.v1.tar+gzip"));
        expect(manifest.layers[0].digest).toBe(baseLayer);
        expect(registry.mountedBlobs("webhook/app")).toEqual([baseLayer]);
        expect(registry.uploadedBlobs("webhook/app").sort()).toEqual(
            [manifest.layers[1].digest, manifest.layers[2].digest, manifest.config.digest].sort(),
        );
        expect(manifest.annotations).toEqual({
            "org.opencontainers.image.base.name": baseIndexRef.slice(0, baseIndexRef.indexOf("@")),
            "org.opencontainers.image.base.digest": expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        });
    });

    test("GIVEN nothing changed WHEN diffed and created again THEN diff reports no change, the digest is the same and no blob is uploaded", async () => {
        const uploadsBefore = registry.uploadedBlobs("webhook/app").length;
        const again = await inputsFor(project, "webhook/app");
        expect(await provider.diff("id", first, again)).toEqual({ changes: false, replaces: [], deleteBeforeReplace: false });
        const rebuilt = (await provider.create(again)).outs as WebhookImageOutputs;
        expect(rebuilt.digest).toBe(first.digest);
        expect(registry.uploadedBlobs("webhook/app").length - uploadsBefore).toBe(0);
    });

    test("GIVEN one source file changed WHEN diffed and updated THEN the diff shows an in-place change and only the application layer (with the new config) is uploaded", async () => {
        appendFileSync(path.join(project, "dist", "webhook", "review.js"), "// changed\n");
        const uploadsBefore = registry.uploadedBlobs("webhook/app").length;
        const news = await inputsFor(project, "webhook/app");
        expect(news.layers.dependencies).toBe(first.layers.dependencies);
        expect(news.layers.application).not.toBe(first.layers.application);
        expect(await provider.diff("id", first, news)).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });

        const updated = (await provider.update("id", first, news)).outs as WebhookImageOutputs;
        expect(updated.digest).not.toBe(first.digest);
        const manifest = skopeo("inspect", "--tls-verify=false", "--raw", `docker://${updated.imageRef}`) as {
            config: { digest: string };
            layers: Array<{ digest: string }>;
        };
        expect(registry.uploadedBlobs("webhook/app").slice(uploadsBefore).sort()).toEqual(
            [manifest.layers[2].digest, manifest.config.digest].sort(),
        );
    });

    test("GIVEN a pushed image WHEN read THEN its state is returned unchanged; WHEN its manifest is deleted with skopeo THEN read reports it gone", async () => {
        const inputs = await inputsFor(project, "webhook/drift");
        const created = (await provider.create(inputs)).outs as WebhookImageOutputs;
        expect(await provider.read(inputs.repository, created)).toEqual({ id: inputs.repository, props: created });

        execFileSync("skopeo", ["delete", "--tls-verify=false", `docker://${created.imageRef}`]);
        expect(await provider.read(inputs.repository, created)).toEqual({ id: "", props: {} });
    });

    test("GIVEN the default delete policy WHEN deleted THEN the image stays pullable; GIVEN deleteOnDestroy WHEN deleted THEN its manifest is gone", async () => {
        const kept = (await provider.create(await inputsFor(project, "webhook/kept"))).outs as WebhookImageOutputs;
        await provider.delete("id", kept);
        expect(
            (skopeo("inspect", "--tls-verify=false", "--raw", `docker://${kept.imageRef}`) as { schemaVersion: number }).schemaVersion,
        ).toBe(2);

        const removed = (await provider.create({ ...(await inputsFor(project, "webhook/removed")), deleteOnDestroy: true }))
            .outs as WebhookImageOutputs;
        await provider.delete("id", removed);
        expect(() =>
            execFileSync("skopeo", ["inspect", "--tls-verify=false", "--raw", `docker://${removed.imageRef}`], { stdio: "pipe" }),
        ).toThrow(/manifest unknown/);
    });

    test("GIVEN only deleteOnDestroy changed WHEN diffed and updated THEN it is an update that publishes nothing and keeps the digest", async () => {
        const news = { ...(await inputsFor(project, "webhook/app")), deleteOnDestroy: true };
        const current = { ...first, contentHash: news.contentHash, layers: news.layers };
        expect(await provider.diff("id", current, news)).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
        const before = registry.requests().length;
        const updated = (await provider.update("id", current, news)).outs as WebhookImageOutputs;
        expect(updated).toEqual({ ...news, digest: first.digest, mediaType: first.mediaType, imageRef: first.imageRef });
        expect(registry.requests().length).toBe(before);
    });

    test("GIVEN another repository WHEN diffed THEN the resource is replaced", async () => {
        const news = await inputsFor(project, "webhook/elsewhere");
        expect(await provider.diff("id", first, news)).toEqual({ changes: true, replaces: ["repository"], deleteBeforeReplace: false });
    });
});

describe("image formats and platforms", () => {
    const project = withProject("all");

    test("GIVEN two platforms WHEN created THEN an OCI index names one manifest per platform, each on its base platform image", async () => {
        const outs = (await provider.create(await inputsFor(project(), "webhook/multi", { platforms: ["linux/amd64", "linux/arm64"] })))
            .outs as WebhookImageOutputs;
        const index = skopeo("inspect", "--tls-verify=false", "--raw", `docker://${outs.imageRef}`) as {
            mediaType: string;
            manifests: Array<{ digest: string; platform: unknown }>;
        };
        expect(index.mediaType).toBe("application/vnd.oci.image.index.v1+json");
        expect(index.manifests.map((m) => m.platform)).toEqual([
            { architecture: "amd64", os: "linux" },
            { architecture: "arm64", os: "linux" },
        ]);
        const arm = skopeo("inspect", "--tls-verify=false", "--override-arch", "arm64", "--config", `docker://${outs.imageRef}`) as {
            architecture: string;
            config: { Entrypoint: string[] };
        };
        expect(arm.architecture).toBe("arm64");
        expect(arm.config.Entrypoint).toEqual(["/nodejs/bin/node", "/app/webhook/main.js"]);
    });

    test("GIVEN a Docker schema 2 base image WHEN created THEN the image is a Docker schema 2 manifest with Docker layer and config media types", async () => {
        const dockerBase = (await pushBase(base, registry.host, "base/node-docker", "v2s2")).pinned;
        const outs = (await provider.create(await inputsFor(project(), "webhook/docker", { baseImage: dockerBase })))
            .outs as WebhookImageOutputs;
        const manifest = skopeo("inspect", "--tls-verify=false", "--raw", `docker://${outs.imageRef}`) as {
            mediaType: string;
            config: { mediaType: string };
            layers: Array<{ mediaType: string }>;
        };
        expect(manifest.mediaType).toBe("application/vnd.docker.distribution.manifest.v2+json");
        expect(manifest.config.mediaType).toBe("application/vnd.docker.container.image.v1+json");
        expect(manifest.layers.map((l) => l.mediaType)).toEqual(Array(3).fill("application/vnd.docker.image.rootfs.diff.tar.gzip"));
    });

    test("GIVEN a base without the requested platform WHEN created THEN the error names the platforms it has", async () => {
        await expect(provider.create(await inputsFor(project(), "webhook/s390x", { platforms: ["linux/s390x"] }))).rejects.toThrow(
            `base image ${baseIndexRef} has no linux/s390x image (it has linux/amd64, linux/arm64)`,
        );
    });
});
