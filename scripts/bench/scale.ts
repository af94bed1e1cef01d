/**
 * npm run bench:scale — the admission server's memory, connections and latency against the number
 * of teams' Bundles (issue 37 point 2). For each size (default 0, 1,000 and 10,000) a fresh stand-in
 * Kubernetes API (tests/webhook/support/fake-kube-api.ts, marked `source=stand-in` on the line) holds
 * that many team namespaces, each with its own Bundle on the conventional Secret
 * (`etc-pki-entitlement`, a realistic entitlement certificate and key) and, for one team in ten,
 * a second Bundle on a Secret of another name (read by name: a cached GET), plus one ClusterBundle
 * whose copy is in the source namespace. The compiled server (dist/webhook/main.js, configured as
 * the stack configures it: `WEBHOOK_READ_NAMESPACES=<source>/secrets`, `WEBHOOK_SOURCE_NAMESPACE`,
 * `WEBHOOK_PROCESS_ENV`)
 * starts against it; once ready and its key caches synced it admits `BENCH_SCALE_ADMISSIONS` pods
 * (default 3,000, 16 at a time) spread over the teams, each asking for its team's Bundles and the
 * ClusterBundle.
 *
 * Measured per size: the server's resident memory (VmRSS) once ready and after the admissions, each
 * after a full garbage collection in its process and the time V8 takes to hand the freed pages back
 * (scripts/bench/gc-probe.js, preloaded with `--expose-gc`; what the server retains, not garbage V8 has
 * yet to collect or return), its V8 heap in use then,
 * its peak RSS (VmHWM, informational: it includes uncollected garbage, which in a container V8 collects
 * against the cgroup's limit), the watches open at the API (the stand-in counts them), admission
 * p50/p99 and the admissions not allowed. The floor is size 0 in the same run; the goal: RSS after the
 * admissions at the largest size at most 1.25 × that at 0, the same number of open watches at every
 * size, nothing refused.
 *
 * `BENCH_SCALE_SIZES` (comma-separated) and `BENCH_SCALE_ADMISSIONS` shrink it, `BENCH_SCALE_SETTLE_MS`
 * (default 3000) is the probe's wait; the suite runs a tiny size with no wait so the script cannot rot
 * (tests/webhook/bench-scale.test.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import { createAuthority, issueServingPair, projectPair } from "../../tests/helpers/tls-signer";
import { FakeKubeApi, bundleObject, secret, type StoredObject } from "../../tests/webhook/support/fake-kube-api";
import { podCreateReview } from "../../tests/webhook/support/fixtures";
import { freePort } from "../../tests/webhook/support/servers";
import { staleOutputs } from "../../components/webhook-image/sources";
import { WEBHOOK_PROCESS_ENV, sourceCopyName } from "../../webhook/api";
import { build } from "./webhook";

const ROOT = path.resolve(__dirname, "../..");
const PROBE = path.join(__dirname, "gc-probe.js");
const SIZES = (process.env.BENCH_SCALE_SIZES ?? "0,1000,10000").split(",").map(Number);
const ADMISSIONS = Number(process.env.BENCH_SCALE_ADMISSIONS ?? 3000);
const CONCURRENCY = 16;
const SOURCES = "subscription-sources";
const PLATFORM = "openshift-config-managed";
/** The goal (issue 37): peak RSS at the largest size within this factor of the peak at 0. */
const RSS_GOAL = 1.25;

/** Base64 of a PEM block of `bytes` characters: the size of a real entitlement certificate or key. */
function pemBlock(label: string, bytes: number): string {
    const body = "A".repeat(bytes).replace(/(.{64})/g, "$1\n");
    return Buffer.from(`-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`).toString("base64");
}
const ENTITLEMENT = { "entitlement.pem": pemBlock("CERTIFICATE", 2600), "entitlement-key.pem": pemBlock("RSA PRIVATE KEY", 3200) };

/** A Bundle as kubectl or the console leaves it: last-applied annotation, managedFields, labels. */
function teamBundle(namespace: string, name: string, secretName: string): StoredObject {
    const object = bundleObject(namespace, name, { entitlements: [{ name: secretName }] });
    object.metadata.labels = { app: "builds", team: namespace };
    object.metadata.annotations = {
        "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify({ ...object, metadata: { name, namespace } }),
    };
    object.metadata.managedFields = [
        {
            manager: "kubectl-client-side-apply",
            operation: "Update",
            apiVersion: "subscription.openshift.io/v1alpha1",
            time: "2026-01-01T00:00:00Z",
            fieldsType: "FieldsV1",
            fieldsV1: { "f:spec": { "f:entitlements": {} } },
        },
    ];
    return object;
}

function populate(api: FakeKubeApi, teams: number): void {
    api.put(
        secret(SOURCES, sourceCopyName({ namespace: PLATFORM, name: "etc-pki-entitlement" }), {
            "sca.pem": ENTITLEMENT["entitlement.pem"],
            "sca-key.pem": ENTITLEMENT["entitlement-key.pem"],
        }),
    );
    api.put(bundleObject(undefined, "cluster", { entitlements: [{ name: "etc-pki-entitlement", namespace: PLATFORM }] }));
    for (let i = 0; i < teams; i++) {
        const namespace = `team-${i}`;
        api.put(secret(namespace, "etc-pki-entitlement", ENTITLEMENT));
        api.put(teamBundle(namespace, "team", "etc-pki-entitlement"));
        if (i % 10 === 0) {
            api.put(secret(namespace, "extra-entitlement", { "extra.pem": ENTITLEMENT["entitlement.pem"] }));
            api.put(teamBundle(namespace, "extra", "extra-entitlement"));
        }
    }
}

/** A pod of team `i` (or of `plain` at size 0) asking for its team's Bundles and the ClusterBundle. */
function review(uid: number, teams: number): string {
    const team = teams === 0 ? -1 : uid % teams;
    const namespace = team < 0 ? "plain" : `team-${team}`;
    const bundles = team < 0 ? [] : team % 10 === 0 ? ["team", "extra"] : ["team"];
    const annotations: Record<string, string> = { "subscription.openshift.io/inject-cluster-bundle": "cluster" };
    if (bundles.length > 0) annotations["subscription.openshift.io/inject-bundle"] = bundles.join(",");
    return JSON.stringify(
        podCreateReview(`uid-${uid}`, namespace, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { generateName: "build-", namespace, annotations },
            spec: {
                serviceAccountName: "builder",
                containers: [
                    {
                        name: "build",
                        image: "registry.access.redhat.com/ubi9/ubi:9.4",
                        volumeMounts: [
                            { name: "kube-api-access-x", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true },
                        ],
                    },
                ],
                volumes: [{ name: "kube-api-access-x", projected: { sources: [{ serviceAccountToken: { path: "token" } }] } }],
            },
        }),
    );
}

function memory(pid: number): { rss: number; peak: number } {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? 0) * 1024;
    return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

function post(
    port: number,
    ca: string,
    agent: https.Agent,
    body: string,
): Promise<{ status: number; allowed: boolean; ms: number; message: string }> {
    const started = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
        const request = https.request(
            {
                host: "127.0.0.1",
                servername: "localhost",
                port,
                method: "POST",
                path: "/mutate-pods",
                ca,
                agent,
                headers: { "content-type": "application/json" },
            },
            (response) => {
                let text = "";
                response.on("data", (chunk) => (text += chunk));
                response.on("end", () => {
                    const ms = Number(process.hrtime.bigint() - started) / 1e6;
                    const review =
                        response.statusCode === 200
                            ? (JSON.parse(text) as { response?: { allowed?: boolean; status?: { message?: string } } }).response
                            : undefined;
                    const allowed = review?.allowed === true;
                    const message = allowed ? "" : (review?.status?.message ?? `HTTP ${response.statusCode}: ${text.slice(0, 200)}`);
                    resolve({ status: response.statusCode ?? 0, allowed, ms, message });
                });
            },
        );
        request.on("error", reject);
        request.end(body);
    });
}

function get(port: number, ca: string, path: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve) =>
        https
            .get({ host: "127.0.0.1", servername: "localhost", port, path, ca, agent: false }, (response) => {
                let text = "";
                response.on("data", (chunk) => (text += chunk));
                response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
            })
            .on("error", () => resolve({ status: 0, text: "" })),
    );
}

/**
 * Ready (`/readyz`: the Bundle caches are listed) and every key cache synced (each
 * `subscription_webhook_key_cache_synced` series is 1). Readiness does not wait for the key caches
 * (one unlistable namespace must not make every replica unready); until they sync, a pod needing them
 * gets a 503 (retry). The benchmark measures the server in service, so it admits once they have.
 */
async function ready(port: number, ca: string, child: ChildProcess, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        if ((await get(port, ca, "/readyz")).status === 200) {
            const series = (await get(port, ca, "/metrics")).text
                .split("\n")
                .filter((line) => line.startsWith("subscription_webhook_key_cache_synced{"));
            if (series.length > 0 && series.every((line) => line.endsWith(" 1"))) return;
        }
        if (child.exitCode !== null) throw new Error(`the webhook exited with ${child.exitCode}`);
        if (Date.now() > deadline) throw new Error("the webhook did not become ready in time");
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
}

interface SizeFigures {
    teams: number;
    rssReadyMiB: number;
    rssMiB: number;
    peakMiB: number;
    heapMiB: number;
    watches: number;
    p50: number;
    p99: number;
    refused: number;
    startS: number;
}

const mib = (bytes: number) => bytes / (1024 * 1024);
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

async function measure(teams: number, work: string, ca: string): Promise<SizeFigures> {
    const api = new FakeKubeApi();
    await api.start();
    populate(api, teams);
    const kubeconfig = path.join(work, `kubeconfig-${teams}`);
    fs.writeFileSync(kubeconfig, api.kubeconfigText());
    const port = await freePort();
    const started = Date.now();
    const child = spawn(process.execPath, ["--expose-gc", "--require", PROBE, "dist/webhook/main.js"], {
        cwd: ROOT,
        env: {
            PATH: process.env.PATH ?? "",
            KUBECONFIG: kubeconfig,
            WEBHOOK_BIND_ADDRESS: "127.0.0.1",
            WEBHOOK_PORT: String(port),
            WEBHOOK_TLS_CERT_FILE: path.join(work, "certs", "tls.crt"),
            WEBHOOK_TLS_KEY_FILE: path.join(work, "certs", "tls.key"),
            WEBHOOK_READ_NAMESPACES: `${SOURCES}/secrets`,
            WEBHOOK_SOURCE_NAMESPACE: SOURCES,
            WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0",
            ...WEBHOOK_PROCESS_ENV,
            GC_PROBE_SETTLE_MS: process.env.BENCH_SCALE_SETTLE_MS ?? "3000",
            LOG_LEVEL: "warn",
        },
        stdio: ["ignore", "ignore", "pipe"],
    });
    const probes: ((line: string) => void)[] = [];
    let pending = "";
    child.stderr?.on("data", (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
            if (line.startsWith("gc-probe ")) probes.shift()?.(line.slice("gc-probe ".length));
            else process.stderr.write(`${line}\n`);
        }
    });
    /** Memory after a full collection in the server's process (scripts/bench/gc-probe.js). */
    const retained = () =>
        new Promise<{ rss: number; heapUsed: number }>((resolve) => {
            probes.push((line) => resolve(JSON.parse(line) as { rss: number; heapUsed: number }));
            child.kill("SIGUSR2");
        });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
        await ready(port, ca, child, 600_000);
        const startS = (Date.now() - started) / 1000;
        const rssReady = (await retained()).rss;
        const agent = new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
        const latencies: number[] = [];
        let refused = 0;
        const reasons = new Map<string, number>();
        let next = 0;
        await Promise.all(
            Array.from({ length: CONCURRENCY }, async () => {
                while (next < ADMISSIONS) {
                    const uid = next++;
                    const reply = await post(port, ca, agent, review(uid, teams));
                    latencies.push(reply.ms);
                    if (!reply.allowed) {
                        refused++;
                        reasons.set(reply.message, (reasons.get(reply.message) ?? 0) + 1);
                    }
                }
            }),
        );
        agent.destroy();
        // Why admissions were not allowed (the three commonest answers), so a failed goal says what went wrong.
        for (const [message, count] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 3))
            console.error(`bench:scale teams=${teams} refused ${count}x: ${message}`);
        const peak = memory(child.pid as number).peak;
        const after = await retained();
        latencies.sort((a, b) => a - b);
        return {
            teams,
            rssReadyMiB: mib(rssReady),
            rssMiB: mib(after.rss),
            peakMiB: mib(peak),
            heapMiB: mib(after.heapUsed),
            watches: api.openWatches().length,
            p50: percentile(latencies, 50),
            p99: percentile(latencies, 99),
            refused,
            startS,
        };
    } finally {
        child.kill("SIGTERM");
        await exited;
        await api.stop();
    }
}

/**
 * `npm run build` unless dist/ already holds every source the server runs (webhook/ and the shared
 * modules it imports) newer than its .ts: the suite's tiny run then costs no second build of the
 * whole program after the one CI makes first.
 */
async function buildUnlessFresh(): Promise<void> {
    const stale = (await Promise.all(["webhook", "components/shared"].map((folder) => staleOutputs(ROOT, folder, "dist")))).flat();
    if (stale.length > 0 || !fs.existsSync(path.join(ROOT, "dist/webhook/main.js"))) build();
}

async function main(): Promise<void> {
    await buildUnlessFresh();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-scale-"));
    try {
        const authority = await createAuthority("bench-scale-ca");
        projectPair(path.join(work, "certs"), await issueServingPair(authority, "0e01"), 1);
        const figures: SizeFigures[] = [];
        for (const teams of SIZES) {
            const size = await measure(teams, work, authority.cert);
            figures.push(size);
            console.log(
                `bench:scale size teams=${size.teams} ready_s=${size.startS.toFixed(1)} rss_ready_mib=${size.rssReadyMiB.toFixed(1)} rss_mib=${size.rssMiB.toFixed(1)} heap_mib=${size.heapMiB.toFixed(1)} peak_mib=${size.peakMiB.toFixed(1)} watches=${size.watches} p50_ms=${size.p50.toFixed(2)} p99_ms=${size.p99.toFixed(2)} refused=${size.refused}`,
            );
        }
        const first = figures[0];
        const last = figures[figures.length - 1];
        const ratio = last.rssMiB / first.rssMiB;
        const constant = figures.every((size) => size.watches === first.watches);
        const refused = figures.reduce((sum, size) => sum + size.refused, 0);
        const met = ratio <= RSS_GOAL && constant && refused === 0;
        console.log(
            `machine: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "unknown"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}`,
        );
        console.log(
            `bench:scale source=stand-in teams=${figures.map((s) => s.teams).join(",")} rss_mib=${figures.map((s) => s.rssMiB.toFixed(1)).join(",")} heap_mib=${figures.map((s) => s.heapMiB.toFixed(1)).join(",")} peak_mib=${figures.map((s) => s.peakMiB.toFixed(1)).join(",")} watches=${figures.map((s) => s.watches).join(",")} p50_ms=${figures.map((s) => s.p50.toFixed(2)).join(",")} p99_ms=${figures.map((s) => s.p99.toFixed(2)).join(",")} refused=${refused} rss_ratio=${ratio.toFixed(2)} goal=${met ? "met" : "not met"}`,
        );
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

if (require.main === module) {
    main().catch((error: Error) => {
        console.error(`bench:scale failed: ${error.stack ?? error.message}`);
        process.exit(1);
    });
}
