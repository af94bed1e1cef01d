import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type Authority, createAuthority, issueServingPair, projectPair } from "../helpers/tls-signer";
import { FakeKubeApi, bundleObject, secret } from "./support/fake-kube-api";
import { podCreateReview } from "./support/fixtures";
import { request } from "./support/https-client";
import { freePort } from "./support/servers";
import { waitFor } from "./support/wait";
import { startWebhookProcess } from "./support/webhook-process";

const SECRET_VALUE = Buffer.from("entitlement-private-key-material").toString("base64");

const start = startWebhookProcess;

describe("the entry point (webhook/main.ts) as a process configured by environment", () => {
    let dir: string;
    let authority: Authority;
    let api: FakeKubeApi;

    beforeAll(async () => {
        authority = await createAuthority();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-main-"));
        projectPair(path.join(dir, "certs"), await issueServingPair(authority, "0d01"), 1);
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE }));
        api.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
        fs.writeFileSync(path.join(dir, "kubeconfig"), api.kubeconfigText());
    });

    /** The environment of a server on `port` with the test certificate, reading the cluster through `kubeconfig`. */
    const serving = (port: number, kubeconfig: string) => ({
        WEBHOOK_BIND_ADDRESS: "127.0.0.1",
        WEBHOOK_PORT: String(port),
        WEBHOOK_TLS_CERT_FILE: path.join(dir, "certs", "tls.crt"),
        WEBHOOK_TLS_KEY_FILE: path.join(dir, "certs", "tls.key"),
        KUBECONFIG: kubeconfig,
    });

    afterAll(async () => {
        await api.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    test("GIVEN env config WHEN started THEN it becomes ready, admits over HTTPS, logs JSON without Secret data, and exits 0 on SIGTERM", async () => {
        const port = await freePort();
        const server = start({ ...serving(port, path.join(dir, "kubeconfig")), LOG_LEVEL: "debug", WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0.2" });
        await waitFor(() => server.output.stdout.includes("caches synced; ready"), "readiness", 30_000);
        expect((await request({ port, ca: authority.cert, path: "/readyz" })).status).toBe(200);
        const review = podCreateReview("main-1", "team-a", {
            metadata: { annotations: { "subscription.openshift.io/inject-bundle": "local,absent" } },
            spec: { containers: [{ name: "app" }] },
        });
        const reply = JSON.parse((await request({ port, ca: authority.cert, body: JSON.stringify(review) })).body);
        expect(reply.response).toMatchObject({ uid: "main-1", allowed: false, status: { code: 404, reason: "NotFound" } });
        server.child.kill("SIGTERM");
        expect(await server.exited).toBe(0);
        const lines = server.output.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line));
        expect(lines.map((line) => line.msg)).toEqual([
            "listening (HTTPS); not ready until caches sync",
            "caches synced; ready",
            "denied",
            "stopping",
            "shutting down: not ready, draining",
            "server closed",
        ]);
        expect(lines[2]).toMatchObject({
            level: 30,
            component: "subscription-webhook",
            uid: "main-1",
            namespace: "team-a",
            reason: "BundleNotFound",
        });
        expect(server.output.stdout).not.toContain(SECRET_VALUE);
        expect(server.output.stderr).toBe("");
    });

    test("GIVEN RBAC refuses one namespace's Secrets and the review API fails WHEN started THEN /readyz is 200, pods of other namespaces are admitted, that namespace's pods are denied naming the permission, and an undecidable pod gets HTTP 503", async () => {
        const refused = new FakeKubeApi();
        await refused.start();
        refused.authorizeRequest = (request) => request.namespace !== "team-b";
        refused.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE }));
        refused.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
        refused.put(secret("team-b", "own", { "own.pem": SECRET_VALUE }));
        refused.put(bundleObject("team-b", "own", { entitlements: [{ name: "own" }] }));
        refused.put(secret("openshift-config-managed", "etc-pki-entitlement", { "sca.pem": SECRET_VALUE }));
        refused.put(
            bundleObject(undefined, "cluster", { entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config-managed" }] }),
        );
        refused.failReviewsWith = 500;
        const kubeconfig = path.join(dir, "kubeconfig-refused");
        fs.writeFileSync(kubeconfig, refused.kubeconfigText());
        const port = await freePort();
        const server = start({ ...serving(port, kubeconfig), WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0" });
        try {
            await waitFor(() => server.output.stdout.includes("caches synced; ready"), "readiness", 30_000);
            expect(await request({ port, ca: authority.cert, path: "/readyz" })).toMatchObject({ status: 200, body: "ok\n" });
            const admit = async (uid: string, namespace: string, annotations: Record<string, string>) =>
                request({
                    port,
                    ca: authority.cert,
                    body: JSON.stringify(
                        podCreateReview(uid, namespace, { metadata: { annotations }, spec: { containers: [{ name: "app" }] } }),
                    ),
                });
            const other = await admit("a", "team-a", { "subscription.openshift.io/inject-bundle": "local" });
            expect(other.status).toBe(200);
            expect(JSON.parse(other.body).response).toMatchObject({ allowed: true, status: { message: "injected Bundle local" } });
            const refusedPod = await admit("b", "team-b", { "subscription.openshift.io/inject-bundle": "own" });
            expect(JSON.parse(refusedPod.body).response).toMatchObject({ allowed: false, status: { code: 403 } });
            expect(JSON.parse(refusedPod.body).response.status.message).toContain(
                'its service account needs get on secrets named "own" in namespace team-b: a Role with resourceNames',
            );
            const undecided = await admit("c", "team-a", { "subscription.openshift.io/inject-cluster-bundle": "cluster" });
            expect(undecided.status).toBe(503);
            expect(JSON.parse(undecided.body)).toMatchObject({ kind: "Status", code: 503, reason: "ServiceUnavailable" });
            expect(undecided.body).not.toContain('"allowed"');
            const logged = server.output.stdout
                .trim()
                .split("\n")
                .map((line) => JSON.parse(line))
                .filter((line) => line.msg.startsWith("key cache cannot sync"));
            expect(logged.map((line) => [line.level, line.namespace, line.permission])).toEqual([
                [40, "team-b", "list and watch secrets in namespace team-b"],
            ]);
        } finally {
            server.child.kill("SIGTERM");
            expect(await server.exited).toBe(0);
            await refused.stop();
        }
    });

    test("GIVEN invalid environment variables WHEN started THEN it exits 1 naming each variable, value and rule", async () => {
        const server = start({ WEBHOOK_PORT: "http", LOG_LEVEL: "chatty" });
        expect(await server.exited).toBe(1);
        expect(server.output.stderr).toBe(
            'subscription-webhook: LOG_LEVEL="chatty": must be one of fatal, error, warn, info, debug, trace, silent\nsubscription-webhook: WEBHOOK_PORT="http": must be a number from 1 to 65535\n',
        );
    });
});
