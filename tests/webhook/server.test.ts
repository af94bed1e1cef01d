import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import type { TLSSocket } from "node:tls";
import pino from "pino";
import { AccessReviewCache } from "../../webhook/access-reviews";
import { AdmissionHandler } from "../../webhook/admission";
import { ClusterState, subjectAccessReviewer } from "../../webhook/cluster-state";
import { WebhookMetrics } from "../../webhook/metrics";
import { WebhookServer } from "../../webhook/server";
import { type Authority, type ServingPair, createAuthority, issueServingPair, projectPair } from "../helpers/tls-signer";
import { FakeKubeApi, bundleObject, secret } from "./support/fake-kube-api";
import { request } from "./support/https-client";
import { startTestServer } from "./support/servers";
import { podCreateReview } from "./support/fixtures";
import { waitFor } from "./support/wait";

function podReview(uid: string, apiVersion = "admission.k8s.io/v1") {
    const pod = {
        metadata: { generateName: "app-", annotations: { "subscription.openshift.io/inject-bundle": "local" } },
        spec: { containers: [{ name: "app" }] },
    };
    return JSON.stringify(podCreateReview(uid, "team-a", pod, {}, apiVersion));
}

/** Sends headers and the first half of a body, and returns a function that sends the rest and yields the reply. */
function halfSent(
    port: number,
    ca: string,
    body: string,
): Promise<{ finish: () => Promise<{ status: number; body: string; connection?: string }> }> {
    return new Promise((resolveStarted, rejectStarted) => {
        const req = https.request({
            host: "127.0.0.1",
            servername: "localhost",
            port,
            ca,
            method: "POST",
            path: "/mutate-pods",
            agent: false,
            headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
        });
        const reply = new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
            req.on("response", (res) => {
                const chunks: Buffer[] = [];
                res.on("data", (chunk: Buffer) => chunks.push(chunk));
                res.on("end", () =>
                    resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), connection: res.headers.connection }),
                );
            });
            req.on("error", reject);
        });
        req.on("error", rejectStarted);
        const middle = Math.floor(body.length / 2);
        req.write(body.slice(0, middle), () => resolveStarted({ finish: () => (req.end(body.slice(middle)), reply) }));
    });
}

describe("the HTTPS server (real TLS with certificates generated in the test)", () => {
    let dir: string;
    let authority: Authority;
    let first: ServingPair;
    let api: FakeKubeApi;
    let state: ClusterState;
    let metrics: WebhookMetrics;
    let server: WebhookServer;
    let port: number;

    beforeAll(async () => {
        authority = await createAuthority();
        first = await issueServingPair(authority, "0a01");
    });

    beforeEach(async () => {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-certs-"));
        projectPair(dir, first, 1);
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("team-a", "local-entitlement", { "local.pem": "c2VjcmV0" }));
        api.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
        metrics = new WebhookMetrics();
        const logger = pino({ level: "silent" });
        state = new ClusterState({ kubeConfig: api.kubeConfig(), metrics, logger });
        const access = new AccessReviewCache(subjectAccessReviewer(api.kubeConfig(), metrics), {
            allowedTtlMs: 60_000,
            deniedTtlMs: 10_000,
        });
        const handler = new AdmissionHandler({ cluster: state, access, metrics, logger, lookupTimeoutMs: 2000 });
        ({ server, port } = await startTestServer({ dir, handler, metrics, logger, isSynced: () => state.synced(), shutdownDelayMs: 300 }));
    });

    afterEach(async () => {
        await server.shutdown();
        state.stop();
        await api.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    test("GIVEN caches not yet synced WHEN probed THEN /healthz is 200 and /readyz 503, and /readyz turns 200 once synced", async () => {
        expect(await request({ port, ca: authority.cert, path: "/healthz" })).toMatchObject({ status: 200, body: "ok\n" });
        expect(await request({ port, ca: authority.cert, path: "/readyz" })).toMatchObject({ status: 503, body: "caches not synced\n" });
        await state.start();
        expect(await request({ port, ca: authority.cert, path: "/readyz" })).toMatchObject({ status: 200, body: "ok\n" });
    });

    test("GIVEN a v1 and a v1beta1 AdmissionReview WHEN posted THEN each is answered in its own version with the uid and a JSONPatch", async () => {
        await state.start();
        for (const version of ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) {
            const reply = await request({ port, ca: authority.cert, body: podReview(`uid-${version}`, version) });
            const review = JSON.parse(reply.body);
            expect(reply.status).toBe(200);
            expect(review.apiVersion).toBe(version);
            expect(review.response).toMatchObject({
                uid: `uid-${version}`,
                allowed: true,
                patchType: "JSONPatch",
                status: { code: 200, message: "injected Bundle local" },
            });
            expect(JSON.parse(Buffer.from(review.response.patch, "base64").toString())).toEqual([
                {
                    op: "add",
                    path: "/metadata/annotations/subscription.openshift.io~1bundle-generations",
                    value: '{"bundles":{"local":1}}',
                },
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
        }
    });

    test("GIVEN a client limited to TLS 1.1 WHEN it connects THEN the handshake fails; TLS 1.2 and 1.3 clients are served", async () => {
        await expect(request({ port, ca: authority.cert, path: "/healthz", minVersion: "TLSv1", maxVersion: "TLSv1.1" })).rejects.toThrow(
            /protocol|version|alert/i,
        );
        expect((await request({ port, ca: authority.cert, path: "/healthz", maxVersion: "TLSv1.2" })).status).toBe(200);
        expect((await request({ port, ca: authority.cert, path: "/healthz", minVersion: "TLSv1.3" })).status).toBe(200);
    });

    test("GIVEN admissions WHEN /metrics is scraped THEN requests by outcome, the latency histogram, denials by reason and API requests are exposed", async () => {
        await state.start();
        await request({ port, ca: authority.cert, body: podReview("m1") });
        await request({ port, ca: authority.cert, body: "{" });
        const text = (await request({ port, ca: authority.cert, path: "/metrics" })).body;
        expect(text).toContain('subscription_webhook_admission_requests_total{outcome="patched"} 1');
        expect(text).toContain('subscription_webhook_admission_requests_total{outcome="rejected"} 1');
        expect(text).toContain("subscription_webhook_admission_duration_seconds_count 2");
        expect(text).toContain('subscription_webhook_denials_total{reason="KeyOverlap"} 0');
        expect(text).toContain('subscription_webhook_kube_api_requests_total{verb="list",resource="bundles"} 1');
        expect(text).toContain("subscription_webhook_cache_synced 1");
        expect(text).toContain("subscription_webhook_process_resident_memory_bytes");
    });

    test("GIVEN a request in flight WHEN the certificate files rotate THEN it completes, and new connections get the new certificate without a restart", async () => {
        await state.start();
        const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
        expect((await request({ port, ca: authority.cert, path: "/healthz", agent: keepAlive })).serialNumber).toBe("0A01");
        const inFlight = await halfSent(port, authority.cert, podReview("during-rotation"));
        projectPair(dir, await issueServingPair(authority, "0a02"), 2);
        await waitFor(() => server.certificateReloads === 1, "the directory watch to reload the pair");
        const finished = await inFlight.finish();
        expect(finished.status).toBe(200);
        expect(JSON.parse(finished.body).response.uid).toBe("during-rotation");
        expect((await request({ port, ca: authority.cert, path: "/healthz" })).serialNumber).toBe("0A02");
        const reused = await request({ port, ca: authority.cert, path: "/healthz", agent: keepAlive });
        expect(reused.status).toBe(200);
        keepAlive.destroy();
    });

    test("GIVEN a half-written rotation (new certificate, old key) WHEN checked THEN the old pair stays in use and the invalid attempt is counted", async () => {
        const second = await issueServingPair(authority, "0a03");
        fs.writeFileSync(path.join(dir, "..1", "tls.crt"), second.cert);
        expect(server.reloadCertificates()).toBe(false);
        expect((await request({ port, ca: authority.cert, path: "/healthz" })).serialNumber).toBe("0A01");
        expect((await metrics.certificateReloads.get()).values).toEqual([{ labels: { result: "invalid" }, value: 1 }]);
    });

    test("GIVEN a request in flight WHEN shutdown starts THEN readiness fails at once, the request completes with Connection: close, and the listener then closes", async () => {
        await state.start();
        const inFlight = await halfSent(port, authority.cert, podReview("during-shutdown"));
        const stopping = server.shutdown();
        expect(await request({ port, ca: authority.cert, path: "/readyz" })).toMatchObject({ status: 503, body: "shutting down\n" });
        const finished = await inFlight.finish();
        expect(finished).toMatchObject({ status: 200, connection: "close" });
        expect(JSON.parse(finished.body).response.uid).toBe("during-shutdown");
        await stopping;
        await expect(request({ port, ca: authority.cert, path: "/healthz" })).rejects.toThrow(/ECONNREFUSED/);
    });

    test("GIVEN other methods and paths WHEN requested THEN 405 with Allow and 404 are answered", async () => {
        expect(await request({ port, ca: authority.cert, path: "/mutate-pods" })).toMatchObject({
            status: 405,
            headers: { allow: "POST" },
        });
        expect(await request({ port, ca: authority.cert, path: "/healthz", method: "POST", body: "{}" })).toMatchObject({
            status: 405,
            headers: { allow: "GET, HEAD" },
        });
        expect(await request({ port, ca: authority.cert, path: "/admin" })).toMatchObject({ status: 404, body: "no route /admin\n" });
    });

    test("GIVEN a keep-alive connection WHEN inspected THEN the server keeps it open longer than the API server's 90 s idle timeout", async () => {
        const reply = await new Promise<string | undefined>((resolve, reject) => {
            const agent = new https.Agent({ keepAlive: true });
            https
                .get({ host: "127.0.0.1", servername: "localhost", port, path: "/healthz", ca: authority.cert, agent }, (res) => {
                    res.resume();
                    res.on("end", () => {
                        resolve(res.headers["keep-alive"] as string | undefined);
                        agent.destroy();
                    });
                    expect((res.socket as TLSSocket).getProtocol()).toMatch(/TLSv1\.[23]/);
                })
                .on("error", reject);
        });
        expect(reply).toBe("timeout=120");
    });
});
