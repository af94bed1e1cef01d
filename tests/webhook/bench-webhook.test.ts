/**
 * `npm run bench:webhook` at a tiny size, so the benchmark cannot rot unseen: the same script,
 * the same child processes, the same line (figures at this size mean nothing), and the realistic
 * stream it sends checked against what a cluster sends.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { realisticStream } from "../../scripts/bench/webhook";

const ROOT = path.resolve(__dirname, "../..");

describe("bench:webhook", () => {
    test("GIVEN the realistic stream WHEN generated THEN every pod has its own token volume name, used by all its containers, and the mix holds plain, Bundle and ClusterBundle pods in 4 namespaces", () => {
        const stream = realisticStream(2_000).map(([head, tail]) => JSON.parse(`${head}uid${tail}`).request);
        const tokens = stream.map((request) => {
            const names = request.object.spec.volumes
                .map((volume: { name: string }) => volume.name)
                .filter((name: string) => /^kube-api-access-[a-z0-9]{5}$/.test(name));
            expect(names).toHaveLength(1);
            for (const container of [...request.object.spec.initContainers, ...request.object.spec.containers])
                expect(container.volumeMounts.map((mount: { name: string }) => mount.name)).toContain(names[0]);
            return names[0];
        });
        expect(new Set(tokens).size).toBeGreaterThan(1_990);
        const kinds = stream.map((request) => {
            const annotations = request.object.metadata.annotations;
            return annotations["subscription.openshift.io/inject-cluster-bundle"]
                ? "both"
                : annotations["subscription.openshift.io/inject-bundle"]
                  ? "bundle"
                  : "plain";
        });
        const share = (kind: string) => kinds.filter((k) => k === kind).length / kinds.length;
        expect(share("plain")).toBeGreaterThan(0.55);
        expect(share("plain")).toBeLessThan(0.65);
        expect(share("bundle")).toBeGreaterThan(0.2);
        expect(share("both")).toBeGreaterThan(0.1);
        expect(new Set(stream.map((request) => request.namespace))).toEqual(new Set(["builds", "team-a", "team-b", "team-c"]));
        expect(stream.every((request) => request.namespace === request.object.metadata.namespace)).toBe(true);
    });

    test("GIVEN tiny sizes WHEN the benchmark runs THEN it finishes and prints its line with the realistic and the frame figures", () => {
        const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/bench/webhook.ts"], {
            cwd: ROOT,
            env: {
                ...process.env,
                BENCH_REQUESTS: "400",
                BENCH_WARMUP: "100",
                BENCH_REALISTIC: "400",
                BENCH_COST_ROUNDS: "500",
            },
            encoding: "utf8",
            timeout: 300_000,
        });
        expect(run.status).toBe(0);
        const line = run.stdout.split("\n").find((text) => text.startsWith("bench:webhook "));
        // Throughput, latency and CPU, every figure present (rotation and restart are tests/webhook/resilience.test.ts).
        expect(line).toMatch(
            /^bench:webhook ratio=\d+\.\d\d p50_ms=\d+\.\d{3} p99_ms=\d+\.\d{3} floor_p99_ms=\d+\.\d{3} reads_per_admission=\d+(\.\d+)? rss_growth_pct=-?\d+\.\d true_floor_ratio=\d+\.\d\d cpu_us=\d+ true_floor_cpu_us=\d+ true_floor_p99_ms=\d+\.\d{3} realistic_cpu_us=\d+ realistic_floor_cpu_us=\d+ memo_hit_pct=\d+\.\d realistic_true_floor_cpu_us=\d+ realistic_main_thread_cpu_us=\d+\/\d+\/\d+ frame_cpu_us=\d+ frame_true_floor_ratio=\d+\.\d\d$/,
        );
        // Every admission of every phase was answered, allowed, by the webhook and by its frame.
        expect(run.stdout).toMatch(/^webhook: {4}\d+ req\/s .* failures 0$/m);
        expect(run.stdout).toMatch(/^frame: {6}\d+ req\/s .* failures 0$/m);
        expect(run.stdout).toMatch(/; 0 failed$/m);
    }, 320_000);
});
