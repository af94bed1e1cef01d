/**
 * npm run bench:webhook — the admission server against two floor servers, all child processes on
 * loopback HTTPS, driven from this process at 32 concurrent keep-alive connections with a
 * realistic request (a pod with 3 containers and 1 init container injecting a Bundle and a
 * ClusterBundle). The server reads its cluster from a stand-in Kubernetes API served here.
 *
 * Measures: throughput ratios server/floor (a constant ~100-byte answer) and server/true floor
 * (the webhook's exact response bytes, precomputed), interleaved rounds; CPU per request of all
 * three and of the frame, the webhook's own process doing only the true floor's work
 * (frame-preload.ts: what the webhook costs before it decides anything) (/proc/<pid>/stat);
 * p50/p99 latency (process.hrtime.bigint); API reads per admission; RSS before/after 100,000
 * admissions; then the realistic stream's CPU per admission against both floors. Throughput,
 * latency and CPU only: certificate rotation and a rolling restart under load are the webhook's
 * tests (tests/webhook/resilience.test.ts), on the same load driver
 * (tests/webhook/support/admission-load.ts).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { exitOf, keepAliveAgent, load, type LoadResult, ready, type Target } from "../../tests/webhook/support/admission-load";
import { createAuthority, issueServingPair, projectPair } from "../../tests/helpers/tls-signer";
import { request } from "../../tests/webhook/support/https-client";
import { waitFor } from "../../tests/webhook/support/wait";
import { FakeKubeApi, bundleObject, configMap, secret } from "../../tests/webhook/support/fake-kube-api";
import { freePort } from "../../tests/webhook/support/servers";
import { allow, bundle, clusterBundle, keySets, podCreateReview, staticAccess, staticCluster } from "../../tests/webhook/support/fixtures";
import pino from "pino";
import { streamClass } from "./stream-class";
import { AdmissionHandler } from "../../webhook/admission";
import { WebhookMetrics } from "../../webhook/metrics";

const ROOT = path.resolve(__dirname, "../..");
/**
 * Admissions measured against each floor (BENCH_REQUESTS and BENCH_WARMUP override the phases'
 * sizes for quick looks; the figures use the defaults).
 */
const MEASURED = Number(process.env.BENCH_REQUESTS ?? 100_000);
const ROUNDS = 4;
/**
 * BENCH_SCENARIO=bundles: the seed's first example, two namespace Bundles (one projected volume
 * per kind). Default "mixed": a Bundle and a ClusterBundle, the heavier shape (per-file mounts).
 */
const SCENARIO = process.env.BENCH_SCENARIO === "bundles" ? "bundles" : "mixed";
const SATELLITE_NAMESPACE = SCENARIO === "bundles" ? "builds" : "openshift-config";
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5_000);
/** Requests per in-process cost measurement (BENCH_COST_ROUNDS overrides, for the suite's tiny run). */
const COST_ROUNDS = Number(process.env.BENCH_COST_ROUNDS ?? 20_000);

/**
 * Runs a compiled script with plain node, as the image does (BENCH_CPU_PROFILE=<dir> writes a V8
 * CPU profile of each child there on its graceful exit).
 */
function spawnChild(script: string, env: Record<string, string>, preload?: string): ChildProcess {
    const profile = process.env.BENCH_CPU_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
    const child = spawn(process.execPath, [...profile, ...(preload ? ["--require", preload] : []), script], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "inherit"],
    });
    child.stdout?.on("data", () => undefined);
    return child;
}

/** GET `requestPath`; its status and body. */
function get(port: number, ca: string, requestPath: string): Promise<{ status: number; body: string }> {
    return request({ port, ca, path: requestPath });
}

/** Resolves once `check` holds (a failed check is a "not yet"), or fails after `timeoutMs`. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
    await waitFor(() => check().catch(() => false), what, timeoutMs);
}

/** The AdmissionReview body of a realistic pod, split around the uid so each request gets its own. */
export function requestTemplate(): [string, string] {
    const container = (name: string, image: string) => ({
        name,
        image,
        ports: [{ containerPort: 8080, protocol: "TCP" }],
        env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
            { name: "LOG_LEVEL", value: "info" },
        ],
        resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { memory: "256Mi" } },
        readinessProbe: {
            httpGet: { path: "/ready", port: 8080, scheme: "HTTP" },
            periodSeconds: 10,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
        },
        volumeMounts: [
            { name: "kube-api-access-7q2xk", readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
            { name: "cache", mountPath: "/var/cache/app" },
        ],
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "IfNotPresent",
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, runAsNonRoot: true },
    });
    const pod = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
            generateName: "rhel-builder-7c9f8d6b5-",
            namespace: "builds",
            labels: { app: "rhel-builder", "pod-template-hash": "7c9f8d6b5" },
            annotations: {
                ...(SCENARIO === "bundles"
                    ? { "subscription.openshift.io/inject-bundle": "rhel,satellite" }
                    : {
                          "subscription.openshift.io/inject-bundle": "rhel",
                          "subscription.openshift.io/inject-cluster-bundle": "satellite",
                      }),
                "openshift.io/scc": "restricted-v2",
            },
            ownerReferences: [
                {
                    apiVersion: "apps/v1",
                    kind: "ReplicaSet",
                    name: "rhel-builder-7c9f8d6b5",
                    uid: "6a1f0c2e-3b1d-4b8e-9d0f-2c1b5e7a9f10",
                    controller: true,
                    blockOwnerDeletion: true,
                },
            ],
        },
        spec: {
            volumes: [
                { name: "cache", emptyDir: {} },
                {
                    name: "kube-api-access-7q2xk",
                    projected: {
                        defaultMode: 420,
                        sources: [
                            { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
                            { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                        ],
                    },
                },
            ],
            initContainers: [container("fetch-sources", "registry.access.redhat.com/ubi9/ubi-minimal:9.4")],
            containers: [
                container("builder", "registry.access.redhat.com/ubi9/ubi:9.4"),
                container("cache-warmer", "registry.access.redhat.com/ubi9/ubi:9.4"),
                container("log-shipper", "quay.io/example/shipper:2.1"),
            ],
            restartPolicy: "Always",
            terminationGracePeriodSeconds: 30,
            dnsPolicy: "ClusterFirst",
            serviceAccountName: "builder",
            serviceAccount: "builder",
            securityContext: { seLinuxOptions: { level: "s0:c26,c10" }, fsGroup: 1000680000, seccompProfile: { type: "RuntimeDefault" } },
            schedulerName: "default-scheduler",
            tolerations: [
                { key: "node.kubernetes.io/not-ready", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
                { key: "node.kubernetes.io/unreachable", operator: "Exists", effect: "NoExecute", tolerationSeconds: 300 },
            ],
            priority: 0,
            enableServiceLinks: true,
            preemptionPolicy: "PreemptLowerPriority",
        },
    };
    const review = podCreateReview("@@UID@@", "builds", pod, {
        requestKind: { group: "", version: "v1", kind: "Pod" },
        requestResource: { group: "", version: "v1", resource: "pods" },
        userInfo: {
            username: "system:serviceaccount:kube-system:replicaset-controller",
            groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
        },
        oldObject: null,
        dryRun: false,
        options: { kind: "CreateOptions", apiVersion: "meta.k8s.io/v1" },
    });
    const [head, tail] = JSON.stringify(review).split("@@UID@@");
    return [head, tail];
}

const [HEAD, TAIL] = requestTemplate();

/** Admissions of the realistic stream (BENCH_REALISTIC overrides). */
const REALISTIC = Number(process.env.BENCH_REALISTIC ?? 40_000);

/** A small deterministic generator (mulberry32), so every run sends the same stream. */
function random(seed: number): () => number {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

/** The share of each kind of pod in the realistic stream (most pods ask for nothing). */
export const STREAM_MIX = { plain: 0.6, bundle: 0.25, bundleAndClusterBundle: 0.15 } as const;

/**
 * The realistic stream: `count` AdmissionReviews as a cluster sends them, each split around its uid.
 * Every pod carries its own service account token volume, `kube-api-access-<5 random characters>`
 * (kube-apiserver's ServiceAccount admission names it so: kubernetes plugin/pkg/admission/
 * serviceaccount/admission.go, `ServiceAccountVolumeName` + a generated suffix), its own
 * ReplicaSet hash, and one of several namespaces; 60 % ask for nothing, 25 % for their namespace's
 * Bundle, 15 % for the Bundle and the ClusterBundle. The template's uid marker stays unique.
 */
export function realisticStream(count: number, seed = 27): [string, string][] {
    const next = random(seed);
    const alphabet = "bcdfghjklmnpqrstvwxz2456789";
    const word = (length: number) => Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join("");
    const namespaces = ["builds", "team-a", "team-b", "team-c"];
    const base = `${HEAD}@@UID@@${TAIL}`;
    const stream: [string, string][] = [];
    for (let i = 0; i < count; i++) {
        const namespace = namespaces[Math.floor(next() * namespaces.length)];
        const roll = next();
        const annotations =
            roll < STREAM_MIX.plain
                ? { "openshift.io/scc": "restricted-v2" }
                : roll < STREAM_MIX.plain + STREAM_MIX.bundle
                  ? { "subscription.openshift.io/inject-bundle": "rhel", "openshift.io/scc": "restricted-v2" }
                  : {
                        "subscription.openshift.io/inject-bundle": "rhel",
                        "subscription.openshift.io/inject-cluster-bundle": "satellite",
                        "openshift.io/scc": "restricted-v2",
                    };
        const review = JSON.parse(base);
        const pod = review.request.object;
        const hash = word(9);
        const token = `kube-api-access-${word(5)}`;
        review.request.namespace = namespace;
        pod.metadata.namespace = namespace;
        pod.metadata.generateName = `rhel-builder-${hash}-`;
        pod.metadata.labels["pod-template-hash"] = hash;
        pod.metadata.ownerReferences[0].name = `rhel-builder-${hash}`;
        pod.metadata.annotations = annotations;
        for (const volume of pod.spec.volumes) if (volume.name.startsWith("kube-api-access-")) volume.name = token;
        for (const container of [...pod.spec.initContainers, ...pod.spec.containers])
            for (const mount of container.volumeMounts) if (mount.name.startsWith("kube-api-access-")) mount.name = token;
        const [head, tail] = JSON.stringify(review).split("@@UID@@");
        stream.push([head, tail]);
    }
    return stream;
}

export interface RealisticFigures {
    /** Webhook CPU per admission on the realistic stream (µs). */
    cpuUs: number;
    /** The constant floor's CPU per request on the same stream (µs). */
    floorCpuUs: number;
    /** The realistic true floor's (each request answered with its class's webhook bytes) (µs). */
    trueFloorCpuUs: number;
    /** The same three on the main (JavaScript) thread only; the rest of each is GC helpers and libuv's pool (µs). */
    mainThreadCpuUs: { webhook: number; floor: number; trueFloor: number };
    /** Share of admissions the response memo answered (%). */
    memoHitPct: number;
    failures: number;
}

function percentile(sorted: Float64Array, p: number): number {
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function merge(results: LoadResult[]): { sorted: Float64Array; elapsedMs: number; count: number; failures: number } {
    const count = results.reduce((sum, result) => sum + result.latenciesMs.length, 0);
    const all = new Float64Array(count);
    let offset = 0;
    for (const result of results) {
        all.set(result.latenciesMs, offset);
        offset += result.latenciesMs.length;
    }
    return {
        sorted: all.sort(),
        elapsedMs: results.reduce((sum, result) => sum + result.elapsedMs, 0),
        count,
        failures: results.reduce((sum, result) => sum + result.failures, 0),
    };
}

async function scrape(port: number, ca: string): Promise<{ rss: number; apiRequests: number; cpuSeconds: number }> {
    const text = (await get(port, ca, "/metrics")).body;
    const rss = Number(/^subscription_webhook_process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
    const cpuSeconds = Number(/^subscription_webhook_process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
    const apiRequests = [...text.matchAll(/^subscription_webhook_kube_api_requests_total\{[^}]*\} (\S+)$/gm)].reduce(
        (sum, match) => sum + Number(match[1]),
        0,
    );
    return { rss, apiRequests, cpuSeconds };
}

/**
 * Where the server's extra time goes, in this process with no I/O: parsing the body (which the
 * floor does too) against parsing plus the whole decision and response serialisation.
 */
async function inProcessCost(): Promise<{ parseUs: number; decisionUs: number; responseBytes: number }> {
    const satellite = { entitlements: ["satellite-entitlement"], yumRepositories: ["satellite-repos"] };
    const keys = keySets({
        "Secret/builds/rhel-entitlement": ["entitlement.pem", "entitlement-key.pem"],
        "ConfigMap/builds/rhel-repos": ["redhat.repo"],
        [`Secret/${SATELLITE_NAMESPACE}/satellite-entitlement`]: ["satellite.pem", "satellite-key.pem"],
        [`ConfigMap/${SATELLITE_NAMESPACE}/satellite-repos`]: ["satellite.repo"],
    });
    const rhel = bundle("builds", "rhel", { entitlements: ["rhel-entitlement"], yumRepositories: ["rhel-repos"] });
    const cluster =
        SCENARIO === "bundles"
            ? staticCluster([rhel, bundle("builds", "satellite", satellite)], [], keys)
            : staticCluster(
                  [rhel],
                  [
                      clusterBundle("satellite", {
                          entitlements: [{ name: "satellite-entitlement", namespace: SATELLITE_NAMESPACE }],
                          yumRepositories: [{ name: "satellite-repos", namespace: SATELLITE_NAMESPACE }],
                      }),
                  ],
                  keys,
              );
    const handler = new AdmissionHandler({
        cluster: { ...cluster, version: () => 1 },
        access: staticAccess(allow("satellite")),
        metrics: new WebhookMetrics(),
        logger: pino({ level: "silent" }),
        lookupTimeoutMs: 1000,
    });
    const rounds = COST_ROUNDS;
    let responseBytes = 0;
    const time = async (work: (text: string) => Promise<void> | void): Promise<number> => {
        for (let i = 0; i < Math.min(2_000, rounds); i++) await work(`${HEAD}warm-${i}${TAIL}`);
        const started = process.hrtime.bigint();
        for (let i = 0; i < rounds; i++) await work(`${HEAD}cost-${i}${TAIL}`);
        return Number(process.hrtime.bigint() - started) / rounds / 1000;
    };
    const parseUs = await time((text) => void JSON.parse(text));
    const totalUs = await time(async (text) => {
        const result = await handler.handle(JSON.parse(text));
        if (result.status !== 200 || !result.body.includes('"allowed":true'))
            throw new Error(`unexpected answer: ${result.body.slice(0, 200)}`);
        responseBytes = Buffer.byteLength(result.body);
    });
    return { parseUs, decisionUs: totalUs - parseUs, responseBytes };
}

/**
 * User + system CPU seconds of a child process so far, all its threads (Linux /proc; clock ticks
 * of 10 ms); with `mainThread`, only its main (JavaScript) thread's, whose task id is the pid, so
 * the rest is V8's GC helpers and libuv's pool.
 */
function cpuSeconds(child: ChildProcess, mainThread = false): number {
    const stat = fs.readFileSync(mainThread ? `/proc/${child.pid}/task/${child.pid}/stat` : `/proc/${child.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of proc(5) (utime, stime) are 12 and 13 after the command name.
    return (Number(fields[11]) + Number(fields[12])) / 100;
}

function machine(): string {
    const cpu = /model name\s*:\s*(.*)/.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? os.cpus()[0]?.model;
    return `nproc=${os.availableParallelism()} cpu="${cpu}" ram=${(os.totalmem() / 2 ** 30).toFixed(1)}GiB node=${process.version}`;
}

/** One POST of the benchmark's request (or `template`) with `uid`; the answer's text. */
async function answerOf(port: number, ca: string, uid: string, template: readonly [string, string] = [HEAD, TAIL]): Promise<string> {
    return (await request({ port, ca, body: `${template[0]}${uid}${template[1]}` })).body;
}

/**
 * The realistic stream against the webhook and the constant floor, interleaved in rounds, each
 * fed the same requests; CPU per request from /proc. Memo hits: the server had a response memo
 * (its `subscription_webhook_response_memo_lookups_total` counter); this stream measured 0 % hits,
 * so the memo was dropped (issue 27) and the figure stays 0 unless a memo comes back.
 */
async function realisticPhase(options: {
    serverTarget: Target;
    floorTarget: Target;
    processes: Map<Target, ChildProcess>;
    ca: string;
    serverPort: number;
    /** Starts a true floor answering from a RESPONSE_MAP file; resolves with its target and process. */
    startTrueFloor: (responseMap: Record<string, [string, string]>) => Promise<[Target, ChildProcess]>;
}): Promise<RealisticFigures> {
    const { serverTarget, floorTarget, processes, ca, serverPort } = options;
    const stream = realisticStream(REALISTIC);
    const template = (i: number) => stream[i % stream.length];
    // The webhook's answer for the first pod of each class, around the uid.
    const responseMap: Record<string, [string, string]> = {};
    for (const [head, tail] of stream) {
        const key = streamClass(JSON.parse(`${head}x${tail}`).request);
        if (responseMap[key]) continue;
        const parts = (await answerOf(serverPort, ca, "@@UID@@", [head, tail])).split("@@UID@@");
        if (parts.length !== 2) throw new Error(`unexpected webhook answer for ${key}`);
        responseMap[key] = parts as [string, string];
    }
    const [trueFloorTarget, trueFloor] = await options.startTrueFloor(responseMap);
    const targets = [floorTarget, trueFloorTarget, serverTarget];
    const child = (target: Target) => (target === trueFloorTarget ? trueFloor : (processes.get(target) as ChildProcess));
    for (const target of targets)
        await load(Math.min(WARMUP, REALISTIC), ca, () => target, { prefix: `warm-real-${target.name}`, template });
    const memoBefore = await memoLookups(serverPort, ca);
    const cpu = new Map<Target, number>(targets.map((target) => [target, 0]));
    const mainCpu = new Map<Target, number>(targets.map((target) => [target, 0]));
    let failures = 0;
    const per = Math.max(1, Math.floor(REALISTIC / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
        for (const target of targets) {
            const before = cpuSeconds(child(target));
            const mainBefore = cpuSeconds(child(target), true);
            const result = await load(per, ca, () => target, {
                prefix: `real-${target.name}-${round}`,
                template: (i) => template(round * per + i),
            });
            cpu.set(target, (cpu.get(target) ?? 0) + cpuSeconds(child(target)) - before);
            mainCpu.set(target, (mainCpu.get(target) ?? 0) + cpuSeconds(child(target), true) - mainBefore);
            if (target === serverTarget) failures += result.failures;
        }
    }
    trueFloorTarget.agent.destroy();
    const memoAfter = await memoLookups(serverPort, ca);
    const hits = memoAfter.hit - memoBefore.hit;
    const lookups = hits + memoAfter.miss - memoBefore.miss;
    const total = per * ROUNDS;
    const perRequest = (target: Target, seconds = cpu) => ((seconds.get(target) ?? 0) / total) * 1e6;
    return {
        cpuUs: perRequest(serverTarget),
        floorCpuUs: perRequest(floorTarget),
        trueFloorCpuUs: perRequest(trueFloorTarget),
        mainThreadCpuUs: {
            webhook: perRequest(serverTarget, mainCpu),
            floor: perRequest(floorTarget, mainCpu),
            trueFloor: perRequest(trueFloorTarget, mainCpu),
        },
        memoHitPct: lookups > 0 ? (hits / lookups) * 100 : 0,
        failures,
    };
}

async function memoLookups(port: number, ca: string): Promise<{ hit: number; miss: number }> {
    const text = (await get(port, ca, "/metrics")).body;
    const count = (result: string) =>
        Number(new RegExp(`^subscription_webhook_response_memo_lookups_total\\{result="${result}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
    return { hit: count("hit"), miss: count("miss") };
}

/**
 * `npm run build`: the server runs from dist/webhook exactly as the image ships it. Through tsc's
 * build mode, the same compilation and output as `tsc -p`, which first compares the inputs with
 * dist/.tsbuildinfo and stops there when nothing changed (0.5 s of CPU instead of the 12 s an
 * incremental `tsc -p` takes to load the whole program again; the suite calls it a few times).
 */
export function build(): void {
    const result = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "--build", "tsconfig.build.json"], {
        cwd: ROOT,
        stdio: "inherit",
    });
    if (result.status !== 0) throw new Error("npm run build failed");
}

async function main(): Promise<void> {
    build();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "bench-webhook-"));
    const certDir = path.join(work, "serving-certs");
    const authority = await createAuthority("bench-ca");
    const first = await issueServingPair(authority, "0c01");
    projectPair(certDir, first, 1);

    const api = new FakeKubeApi();
    await api.start();
    api.put(secret("builds", "rhel-entitlement", { "entitlement.pem": "cGVt", "entitlement-key.pem": "a2V5" }));
    api.put(configMap("builds", "rhel-repos", { "redhat.repo": "[rhel-9-baseos]\nbaseurl=https://cdn.redhat.com/\n" }));
    api.put(secret(SATELLITE_NAMESPACE, "satellite-entitlement", { "satellite.pem": "cGVt", "satellite-key.pem": "a2V5" }));
    api.put(configMap(SATELLITE_NAMESPACE, "satellite-repos", { "satellite.repo": "[satellite]\nbaseurl=https://satellite.example/\n" }));
    api.put(bundleObject("builds", "rhel", { entitlements: [{ name: "rhel-entitlement" }], yumRepositories: [{ name: "rhel-repos" }] }));
    api.put(
        SCENARIO === "bundles"
            ? bundleObject("builds", "satellite", {
                  entitlements: [{ name: "satellite-entitlement" }],
                  yumRepositories: [{ name: "satellite-repos" }],
              })
            : bundleObject(undefined, "satellite", {
                  entitlements: [{ name: "satellite-entitlement", namespace: SATELLITE_NAMESPACE }],
                  yumRepositories: [{ name: "satellite-repos", namespace: SATELLITE_NAMESPACE }],
              }),
    );
    // The realistic stream's other namespaces: each with its own rhel Bundle and Secret.
    for (const namespace of ["team-a", "team-b", "team-c"]) {
        api.put(secret(namespace, "rhel-entitlement", { "entitlement.pem": "cGVt", "entitlement-key.pem": "a2V5" }));
        api.put(configMap(namespace, "rhel-repos", { "redhat.repo": "[rhel-9-baseos]\nbaseurl=https://cdn.redhat.com/\n" }));
        api.put(
            bundleObject(namespace, "rhel", { entitlements: [{ name: "rhel-entitlement" }], yumRepositories: [{ name: "rhel-repos" }] }),
        );
    }
    const kubeconfig = path.join(work, "kubeconfig");
    fs.writeFileSync(kubeconfig, api.kubeconfigText());

    const serverEnv = (port: number) => ({
        WEBHOOK_BIND_ADDRESS: "127.0.0.1",
        WEBHOOK_PORT: String(port),
        WEBHOOK_TLS_CERT_FILE: path.join(certDir, "tls.crt"),
        WEBHOOK_TLS_KEY_FILE: path.join(certDir, "tls.key"),
        KUBECONFIG: kubeconfig,
        LOG_LEVEL: "warn",
    });
    const [serverPort, floorPort, trueFloorPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const server = spawnChild("dist/webhook/main.js", serverEnv(serverPort));
    const floorEnv = (port: number) => ({
        PORT: String(port),
        CERT_FILE: path.join(certDir, "tls.crt"),
        KEY_FILE: path.join(certDir, "tls.key"),
    });
    const floor = spawnChild("dist/scripts/bench/floor-server.js", floorEnv(floorPort));
    const children = [server, floor];
    const ca = authority.cert;
    try {
        await ready(serverPort, ca, "the webhook to be ready");
        await until(async () => (await get(floorPort, ca, "/")).status === 400, "the floor server");
        const agent = keepAliveAgent;
        const serverTarget: Target = { name: "webhook", port: serverPort, agent: agent() };
        const floorTarget: Target = { name: "floor", port: floorPort, agent: agent() };

        // The true floor answers with the webhook's own bytes for this request (uid spliced in).
        const sample = await answerOf(serverPort, ca, "@@UID@@");
        const parts = sample.split("@@UID@@");
        if (parts.length !== 2 || !sample.includes('"allowed":true')) throw new Error(`unexpected webhook answer: ${sample.slice(0, 200)}`);
        const responseFile = path.join(work, "response.json");
        fs.writeFileSync(responseFile, JSON.stringify(parts));
        const trueFloor = spawnChild("dist/scripts/bench/floor-server.js", { ...floorEnv(trueFloorPort), RESPONSE_FILE: responseFile });
        children.push(trueFloor);
        await until(async () => (await get(trueFloorPort, ca, "/")).status === 400, "the true floor server");
        const trueFloorTarget: Target = { name: "true floor", port: trueFloorPort, agent: agent() };
        if ((await answerOf(trueFloorPort, ca, "@@UID@@")) !== sample)
            throw new Error("the true floor does not answer the webhook's bytes");
        // The frame: the webhook's own process doing only the true floor's work (frame-preload.ts).
        const framePort = await freePort();
        const frame = spawnChild(
            "dist/webhook/main.js",
            // No shutdown delay: it stops once measured, and nothing is left to drain then.
            { ...serverEnv(framePort), FRAME_RESPONSE_FILE: responseFile, WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0" },
            "./dist/scripts/bench/frame-preload.js",
        );
        children.push(frame);
        await ready(framePort, ca, "the frame to be ready");
        const frameTarget: Target = { name: "frame", port: framePort, agent: agent() };
        if ((await answerOf(framePort, ca, "@@UID@@")) !== sample) throw new Error("the frame does not answer the webhook's bytes");

        console.log(`machine: ${machine()}`);
        console.log(
            `request: ${Buffer.byteLength(`${HEAD}x${TAIL}`)} bytes (pod with 3 containers + 1 init container, injecting ${SCENARIO === "bundles" ? "Bundles rhel and satellite" : "Bundle rhel and ClusterBundle satellite"}); response ${Buffer.byteLength(sample)} bytes`,
        );
        const targets = [floorTarget, trueFloorTarget, frameTarget, serverTarget];
        const processes = new Map<Target, ChildProcess>([
            [floorTarget, floor],
            [trueFloorTarget, trueFloor],
            [frameTarget, frame],
            [serverTarget, server],
        ]);
        for (const target of targets) await load(WARMUP, ca, () => target, { prefix: `warm-${target.name}`, template: () => [HEAD, TAIL] });

        const before = await scrape(serverPort, ca);
        const cpuBefore = new Map(targets.map((target) => [target, cpuSeconds(processes.get(target) as ChildProcess)]));
        const apiBefore = api.requests.length;
        const runs = new Map<Target, LoadResult[]>(targets.map((target) => [target, []]));
        for (let round = 0; round < ROUNDS; round++) {
            for (const target of targets)
                runs.get(target)?.push(
                    await load(MEASURED / ROUNDS, ca, () => target, { prefix: `${target.name}-${round}`, template: () => [HEAD, TAIL] }),
                );
        }
        const cpuUs = new Map(
            targets.map((target) => [
                target,
                ((cpuSeconds(processes.get(target) as ChildProcess) - (cpuBefore.get(target) ?? 0)) / MEASURED) * 1e6,
            ]),
        );
        const after = await scrape(serverPort, ca);
        // The frame served its purpose; its idle informers and certificate poll leave the phases that follow.
        frame.kill("SIGTERM");
        await exitOf(frame);
        const stats = new Map(targets.map((target) => [target, merge(runs.get(target) ?? [])]));
        const rate = (target: Target) => {
            const { count, elapsedMs } = stats.get(target) as ReturnType<typeof merge>;
            return count / (elapsedMs / 1000);
        };
        const p = (target: Target, q: number) => percentile((stats.get(target) as ReturnType<typeof merge>).sorted, q);
        const serverStats = stats.get(serverTarget) as ReturnType<typeof merge>;
        const reads = after.apiRequests - before.apiRequests;
        const observed = api.requests.length - apiBefore;
        for (const target of targets) {
            const label = `${target.name}:`.padEnd(12);
            console.log(
                `${label}${rate(target).toFixed(0)} req/s  p50 ${p(target, 50).toFixed(3)} ms  p99 ${p(target, 99).toFixed(3)} ms  failures ${stats.get(target)?.failures}`,
            );
        }
        console.log(
            `server CPU per request (/proc, load-independent): floor ${cpuUs.get(floorTarget)?.toFixed(0)} us, true floor ${cpuUs.get(trueFloorTarget)?.toFixed(0)} us, frame (the webhook's process doing the true floor's work) ${cpuUs.get(frameTarget)?.toFixed(0)} us, webhook ${cpuUs.get(serverTarget)?.toFixed(0)} us`,
        );
        const cost = await inProcessCost();
        console.log(
            `in process, no I/O: parsing the request ${cost.parseUs.toFixed(0)} us (the floors do this too), decision + response ${cost.decisionUs.toFixed(0)} us; response ${cost.responseBytes} bytes (constant floor: ~100)`,
        );
        console.log(
            `API: ${reads} requests counted by the webhook, ${observed} seen by the stand-in API, over ${serverStats.count} admissions`,
        );
        console.log(
            `RSS: ${(before.rss / 2 ** 20).toFixed(1)} MiB before, ${(after.rss / 2 ** 20).toFixed(1)} MiB after ${serverStats.count} admissions`,
        );

        const realistic = await realisticPhase({
            serverTarget,
            floorTarget,
            processes,
            ca,
            serverPort,
            startTrueFloor: async (responseMap) => {
                const mapFile = path.join(work, "realistic-responses.json");
                fs.writeFileSync(mapFile, JSON.stringify(responseMap));
                const port = await freePort();
                const child = spawnChild("dist/scripts/bench/floor-server.js", { ...floorEnv(port), RESPONSE_MAP: mapFile });
                children.push(child);
                await until(async () => (await get(port, ca, "/")).status === 400, "the realistic true floor");
                return [{ name: "realistic true floor", port, agent: agent() }, child];
            },
        });
        console.log(
            `realistic stream (${REALISTIC} admissions, each pod its own token volume; ${STREAM_MIX.plain * 100}% plain, ${STREAM_MIX.bundle * 100}% Bundle, ${STREAM_MIX.bundleAndClusterBundle * 100}% Bundle + ClusterBundle, 4 namespaces): webhook ${realistic.cpuUs.toFixed(0)} us CPU per admission, constant floor ${realistic.floorCpuUs.toFixed(0)} us (ratio ${(realistic.cpuUs / realistic.floorCpuUs).toFixed(2)}, goal <= 1.5), true floor (each answer its class's webhook bytes) ${realistic.trueFloorCpuUs.toFixed(0)} us (ratio ${(realistic.cpuUs / realistic.trueFloorCpuUs).toFixed(2)}); memo hits ${realistic.memoHitPct.toFixed(1)}%; ${realistic.failures} failed`,
        );

        const ratio = rate(serverTarget) / rate(floorTarget);
        const trueRatio = rate(serverTarget) / rate(trueFloorTarget);
        const readsPerAdmission = reads / serverStats.count;
        const rssGrowth = ((after.rss - before.rss) / before.rss) * 100;
        console.log(
            `bench:webhook ratio=${ratio.toFixed(2)} p50_ms=${p(serverTarget, 50).toFixed(3)} p99_ms=${p(serverTarget, 99).toFixed(3)} floor_p99_ms=${p(floorTarget, 99).toFixed(3)} reads_per_admission=${readsPerAdmission} rss_growth_pct=${rssGrowth.toFixed(1)} true_floor_ratio=${trueRatio.toFixed(2)} cpu_us=${cpuUs.get(serverTarget)?.toFixed(0)} true_floor_cpu_us=${cpuUs.get(trueFloorTarget)?.toFixed(0)} true_floor_p99_ms=${p(trueFloorTarget, 99).toFixed(3)} realistic_cpu_us=${realistic.cpuUs.toFixed(0)} realistic_floor_cpu_us=${realistic.floorCpuUs.toFixed(0)} memo_hit_pct=${realistic.memoHitPct.toFixed(1)} realistic_true_floor_cpu_us=${realistic.trueFloorCpuUs.toFixed(0)} realistic_main_thread_cpu_us=${realistic.mainThreadCpuUs.webhook.toFixed(0)}/${realistic.mainThreadCpuUs.floor.toFixed(0)}/${realistic.mainThreadCpuUs.trueFloor.toFixed(0)} frame_cpu_us=${cpuUs.get(frameTarget)?.toFixed(0)} frame_true_floor_ratio=${((cpuUs.get(frameTarget) ?? 0) / (cpuUs.get(trueFloorTarget) ?? 1)).toFixed(2)}`,
        );
        for (const target of targets) target.agent.destroy();
    } finally {
        for (const child of children) if (child.exitCode === null) child.kill("SIGTERM");
        await Promise.all(children.map(exitOf));
        await api.stop();
        fs.rmSync(work, { recursive: true, force: true });
    }
}

if (require.main === module) {
    main().catch((error: Error) => {
        console.error(`bench:webhook failed: ${error.stack ?? error.message}`);
        process.exit(1);
    });
}
