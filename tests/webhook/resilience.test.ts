/**
 * The webhook stays available while it changes, under load from 32 keep-alive connections
 * (tests/webhook/support/admission-load.ts), as the server process the image runs
 * (dist/webhook/main.js, configured by environment):
 * - its serving certificate rotates (the files projected anew, as kubelet updates a Secret
 *   volume): no admission fails, and new connections get the new certificate without a restart;
 * - three replicas behind one address restart one by one, reached through one keep-alive pool as
 *   kube-apiserver reaches a webhook Service: no admission fails, and each replica exits 0.
 * These were phases of `npm run bench:webhook`; they are pass/fail properties, so they are tests.
 */
import type { ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { exitOf, keepAliveAgent, load, ready, rollingRestart, type RequestTemplate } from "./support/admission-load";
import { type Authority, createAuthority, issueServingPair, projectPair, type ServingPair } from "../helpers/tls-signer";
import { FakeKubeApi, bundleObject, secret } from "./support/fake-kube-api";
import { podCreateReview } from "./support/fixtures";
import { request } from "./support/https-client";
import { freePort } from "./support/servers";
import { startWebhookProcess } from "./support/webhook-process";

/** A pod of team-a asking for the team's Bundle: admitted with a patch, its uid left to fill in. */
const TEMPLATE = JSON.stringify(
    podCreateReview("@@UID@@", "team-a", {
        metadata: { name: "app", namespace: "team-a", annotations: { "subscription.openshift.io/inject-bundle": "local" } },
        spec: { containers: [{ name: "app", image: "registry.example/app:1" }] },
    }),
).split("@@UID@@") as unknown as RequestTemplate;

describe("the webhook under load while it changes", () => {
    let dir: string;
    let authority: Authority;
    let rotated: ServingPair;
    let api: FakeKubeApi;
    const children: ChildProcess[] = [];

    beforeAll(async () => {
        authority = await createAuthority("resilience-ca");
        const [first, second] = await Promise.all([issueServingPair(authority, "0c01"), issueServingPair(authority, "0c02")]);
        rotated = second;
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "webhook-resilience-"));
        projectPair(path.join(dir, "certs"), first, 1);
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("team-a", "local-entitlement", { "local.pem": Buffer.from("pem").toString("base64") }));
        api.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
        fs.writeFileSync(path.join(dir, "kubeconfig"), api.kubeconfigText());
    });

    afterAll(async () => {
        for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
        await Promise.all(children.map(exitOf));
        await api.stop();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    /** A server process on `port`, as the image runs it: a 1 s shutdown delay, the certificate files checked every second. */
    function server(port: number): ChildProcess {
        const { child } = startWebhookProcess({
            WEBHOOK_BIND_ADDRESS: "127.0.0.1",
            WEBHOOK_PORT: String(port),
            WEBHOOK_TLS_CERT_FILE: path.join(dir, "certs", "tls.crt"),
            WEBHOOK_TLS_KEY_FILE: path.join(dir, "certs", "tls.key"),
            KUBECONFIG: path.join(dir, "kubeconfig"),
            LOG_LEVEL: "warn",
            WEBHOOK_SHUTDOWN_DELAY_SECONDS: "1",
            WEBHOOK_SHUTDOWN_TIMEOUT_SECONDS: "10",
            WEBHOOK_CERT_POLL_SECONDS: "1",
        });
        children.push(child);
        return child;
    }

    test("GIVEN a server under load, half the admissions on new connections WHEN its certificate files rotate a quarter of the way in THEN no admission fails and new connections get the new certificate", async () => {
        const port = await freePort();
        server(port);
        await ready(port, authority.cert, "the webhook to be ready");
        const target = { name: "webhook", port, agent: keepAliveAgent() };
        const serial = async () => (await request({ port, ca: authority.cert, path: "/healthz" })).serialNumber;
        expect(await serial()).toBe("0C01");
        // Waves of 400 admissions, the files swapped a quarter into the first, until new
        // connections get the new certificate, then one wave more: handshakes before, across
        // and after the swap.
        let failures = 0;
        let admissions = 0;
        let waves = 0;
        let swapped = false;
        for (let settled = false; !settled; waves++) {
            settled = (await serial()) === "0C02";
            const wave = await load(400, authority.cert, () => target, {
                prefix: `rotation-${waves}`,
                template: () => TEMPLATE,
                fresh: (i) => i % 2 === 0,
                onDone: (done) => {
                    if (done === 100 && !swapped) {
                        swapped = true;
                        projectPair(path.join(dir, "certs"), rotated, 2);
                    }
                },
            });
            failures += wave.failures;
            admissions += wave.latenciesMs.length;
            if (waves > 100) throw new Error("new connections never got the rotated certificate");
        }
        target.agent.destroy();
        expect({ failures, newSerial: await serial() }).toEqual({ failures: 0, newSerial: "0C02" });
        expect(admissions).toBeGreaterThanOrEqual(800);
    }, 120_000);

    test("GIVEN three replicas behind one address under load through one keep-alive pool WHEN each is replaced in turn THEN no admission fails, every replica exits 0, and admissions flowed throughout", async () => {
        const port = await freePort();
        const first = server(port);
        await ready(port, authority.cert, "the first replica to be ready");
        const restart = await rollingRestart({
            first: { child: first, port },
            spawnReplica: server,
            children,
            ca: authority.cert,
            template: TEMPLATE,
        });
        expect(restart.failed).toBe(0);
        expect(restart.exitCodes).toEqual([0, 0, 0]);
        // Six replicas in all (three, then three replacements): more than one connection each.
        expect(restart.connections).toBeGreaterThan(6);
        expect(restart.requests).toBeGreaterThan(100);
    }, 180_000);
});
