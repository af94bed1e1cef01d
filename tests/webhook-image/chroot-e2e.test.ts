/**
 * End to end: the real admission server, compiled as `npm run build` compiles it, built into an
 * image by the provider, pushed to a real registry, pulled back with skopeo, unpacked with umoci
 * (which also translates the image config into an OCI runtime config), and started the way a
 * container runtime would start it: chroot into the root filesystem, as the image's numeric user,
 * with the image's arguments and environment. It then answers a real AdmissionReview over HTTPS.
 * (chroot leaves the working directory at `/`; the entrypoint uses absolute paths.)
 */
import { ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { planImage } from "../../components/webhook-image/build";
import type { WebhookImageOutputs } from "../../components/webhook-image/operations";
import { WebhookImageProvider } from "../../components/webhook-image/provider";
import { WEBHOOK_CERT_DIR } from "../../webhook/api";
import { createAuthority, issueServingPair, projectPair } from "../helpers/tls-signer";
import { bundleObject, FakeKubeApi, secret } from "../webhook/support/fake-kube-api";
import { podCreateReview } from "../webhook/support/fixtures";
import { request } from "../webhook/support/https-client";
import { freePort } from "../webhook/support/servers";
import { waitFor } from "../webhook/support/wait";
import { buildNodeBaseLayout, pushBase } from "../helpers/node-base-image";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { compileWebhook, imageContent, makeProject } from "../helpers/webhook-project";
import { requireTools } from "../helpers/system-tools";

requireTools("docker-registry", "skopeo", "umoci");

const run = promisify(execFile);

interface RuntimeConfig {
    process: { user: { uid: number; gid: number }; args: string[]; env: string[]; cwd: string };
}

describe("the webhook image, unpacked and run with chroot", () => {
    let work: string;
    let project: string;
    let registry: LocalRegistry;
    let api: FakeKubeApi;
    let image: WebhookImageOutputs;
    let rootfs: string;
    let runtime: RuntimeConfig;
    let server: ChildProcess | undefined;
    let serverOutput = "";

    beforeAll(async () => {
        work = mkdtempSync(path.join(os.tmpdir(), "image-e2e-"));
        project = makeProject({ compiledOutput: compileWebhook(path.join(work, "compiled")) });
        registry = await startRegistry();
        const base = (await pushBase(buildNodeBaseLayout(work), registry.host, "base/node", "oci-index")).pinned;
        const content = imageContent(project, base);
        const plan = await planImage(content);
        image = (
            await new WebhookImageProvider().create({
                ...content,
                repository: `${registry.host}/subscription/webhook`,
                output: "registry",
                contentHash: plan.contentHash,
                layers: plan.layers,
                deleteOnDestroy: false,
            })
        ).outs as WebhookImageOutputs;

        const layout = path.join(work, "pulled");
        await run("skopeo", ["copy", "--src-tls-verify=false", `docker://${image.imageRef}`, `oci:${layout}:e2e`]);
        const bundle = path.join(work, "bundle");
        await run("umoci", ["unpack", "--image", `${layout}:e2e`, bundle]);
        rootfs = path.join(bundle, "rootfs");
        runtime = JSON.parse(readFileSync(path.join(bundle, "config.json"), "utf8")) as RuntimeConfig;
    });

    afterAll(async () => {
        if (server !== undefined && server.exitCode === null) {
            const exited = new Promise((resolve) => server?.once("exit", resolve));
            server.kill("SIGTERM");
            await exited;
        }
        await api?.stop();
        await registry?.stop();
        rmSync(work, { recursive: true, force: true });
        rmSync(project, { recursive: true, force: true });
    });

    test("GIVEN the pulled image WHEN umoci translates its config THEN the process runs node on the webhook as 65532:65532 in /app with NODE_ENV=production", () => {
        expect(runtime.process.user).toMatchObject({ uid: 65532, gid: 65532 });
        expect(runtime.process.args).toEqual(["/nodejs/bin/node", "/app/webhook/main.js"]);
        expect(runtime.process.cwd).toBe("/app");
        expect(runtime.process.env).toEqual(
            expect.arrayContaining(["NODE_ENV=production", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]),
        );
    });

    test("GIVEN the unpacked root filesystem WHEN its files are examined THEN the webhook and its packages are root-owned, not writable by the webhook user, and dated at the epoch", () => {
        for (const file of [
            "app/webhook/main.js",
            "app/webhook/server.js",
            "app/components/shared/k8s-names.js",
            "app/node_modules/@kubernetes/client-node/package.json",
            "app/node_modules/pino/package.json",
        ]) {
            const stat = statSync(path.join(rootfs, file));
            expect({ file, uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o777, mtime: stat.mtimeMs }).toEqual({
                file,
                uid: 0,
                gid: 0,
                mode: 0o644,
                mtime: 0,
            });
        }
    });

    test("GIVEN a Bundle and its Secret in the API WHEN the image's process starts in a chroot THEN it becomes ready and injects the entitlement into a pod over HTTPS", async () => {
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("team-a", "local-entitlement", { "local.pem": "c2VjcmV0" }));
        api.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));

        const authority = await createAuthority();
        const pair = await issueServingPair(authority, "0e2e");
        // Laid out as kubelet projects a Secret volume (files readable by the pod's user).
        projectPair(path.join(rootfs, WEBHOOK_CERT_DIR), pair, 1);
        writeFileSync(path.join(rootfs, "tmp", "kubeconfig"), api.kubeconfigText());

        const port = await freePort();
        const { uid, gid } = runtime.process.user;
        const env = Object.fromEntries(
            runtime.process.env.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
        );
        server = spawn("chroot", [`--userspec=${uid}:${gid}`, rootfs, ...runtime.process.args], {
            env: {
                ...env,
                KUBECONFIG: "/tmp/kubeconfig",
                WEBHOOK_BIND_ADDRESS: "127.0.0.1",
                WEBHOOK_PORT: String(port),
                WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0",
            },
            stdio: ["ignore", "pipe", "pipe"],
        });
        server.stdout?.on("data", (chunk: Buffer) => (serverOutput += chunk.toString()));
        server.stderr?.on("data", (chunk: Buffer) => (serverOutput += chunk.toString()));

        await waitFor(() => serverOutput.includes("caches synced; ready") || server?.exitCode !== null, "the webhook to be ready", 30_000);
        expect((await request({ port, ca: authority.cert, path: "/readyz" })).status).toBe(200);
        const review = podCreateReview(
            "e2e-uid-1",
            "team-a",
            {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name: "build", namespace: "team-a", annotations: { "subscription.openshift.io/inject-bundle": "local" } },
                spec: { serviceAccountName: "builder", containers: [{ name: "build", image: "ubi9" }] },
            },
            { userInfo: { username: "system:serviceaccount:team-a:builder" } },
        );
        const reply = await request({ port, ca: authority.cert, body: JSON.stringify(review) });
        const answer = JSON.parse(reply.body) as {
            apiVersion: string;
            response: { uid: string; allowed: boolean; patchType: string; patch: string };
        };

        expect(reply.status).toBe(200);
        expect(answer.apiVersion).toBe("admission.k8s.io/v1");
        expect(answer.response).toMatchObject({ uid: "e2e-uid-1", allowed: true, patchType: "JSONPatch" });
        expect(JSON.parse(Buffer.from(answer.response.patch, "base64").toString())).toEqual([
            { op: "add", path: "/metadata/annotations/subscription.openshift.io~1bundle-generations", value: '{"bundles":{"local":1}}' },
            {
                op: "add",
                path: "/spec/volumes",
                value: [
                    {
                        name: "subscription-entitlements",
                        projected: { defaultMode: 420, sources: [{ secret: { name: "local-entitlement" } }] },
                    },
                ],
            },
            {
                op: "add",
                path: "/spec/containers/0/volumeMounts",
                value: [{ name: "subscription-entitlements", mountPath: "/run/secrets/etc-pki-entitlement", readOnly: true }],
            },
        ]);
        // chroot execs node in place: the server's process is the one spawned, running as the image's user.
        const ids = readFileSync(`/proc/${server.pid}/status`, "utf8")
            .split("\n")
            .filter((line) => /^(Uid|Gid):/.test(line));
        expect(ids.map((line) => line.split(/\s+/).slice(1, 3).join(" "))).toEqual(["65532 65532", "65532 65532"]);
        const messages = serverOutput
            .split("\n")
            .filter((line) => line.startsWith("{"))
            .map((line) => (JSON.parse(line) as { msg: string }).msg);
        expect(messages.slice(0, 2)).toEqual(["listening (HTTPS); not ready until caches sync", "caches synced; ready"]);
    });
});
