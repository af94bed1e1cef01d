/**
 * `npm run bench:real`: a no-change `pulumi preview` of the full stack (the real tier's 3a stack:
 * every non-AWS capability) against a floor, on the same engine and cluster in the same run.
 *
 * The floor is a plain Node program of as many ConfigMaps as the full stack has resources: the
 * cost of the engine, the language host and the kubernetes provider diffing that many objects,
 * with none of the program's own work (config validation, pre-flight reads, certificate and
 * bundle derivation, transformations). Prints
 *   bench:real preview_s=… floor_preview_s=… ratio=… up_s=… resources=…
 *   bench:real preview_s=… floor_preview_s=… ratio=… up_s=… resources=… goal=met|missed
 * (medians of BENCH_PREVIEWS previews each, default 5). Goal: ratio ≤ 1.5; a missed goal is the
 * benchmark's own verdict, printed in its line, and `npm run bench:real` exits 1 on it. The suite's
 * tiny run (tests/real/bench.real.ts) checks the line and that the verdict follows from its figures,
 * never a time: figures on a shared machine are no measurement (docs/performance.md).
 *
 * The full stack enables subscriptions, so its webhook's server runs as its pods would
 * (tests/real/helpers/subscription-webhook.ts) while it exists.
 *
 * Starts its own environment (tests/real/setup/environment.ts: the tools, the hermetic cluster,
 * the registry); with REAL_WORK already set (inside the real tier) it uses the run's.
 */
import * as path from "node:path";
import { destroyStack } from "../../tests/real/helpers/destroy";
import { applyObjects } from "../../tests/real/helpers/kubectl";
import { fullStackConfig, fullStackKept, preexistingObjects, requireBuild } from "../../tests/real/helpers/fixtures";
import { describe as explain, javascriptProject, realEnv, REPO_ROOT, TestStack } from "../../tests/real/helpers/stack";
import { keepSubscriptionWebhook } from "../../tests/real/helpers/subscription-webhook";

/** The goal: the full stack's no-change preview at most this many times the floor's. */
export const REAL_BENCH_GOAL_RATIO = 1.5;

export interface RealBenchResult {
    previewSeconds: number;
    floorPreviewSeconds: number;
    upSeconds: number;
    resources: number;
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

function timed(what: string, run: () => { status: number; stdout: string; stderr: string }): number {
    const started = process.hrtime.bigint();
    const result = run();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.status !== 0) {
        throw new Error(`bench:real: ${what} failed: ${explain(result)}`);
    }
    return seconds;
}

/** A project of `count` ConfigMaps in `namespace`, as plain JavaScript (no TypeScript, no config). */
function writeFloorProject(dir: string, namespace: string, count: number): void {
    javascriptProject(
        dir,
        "real-bench-floor",
        `const k8s = require("@pulumi/kubernetes");
const provider = new k8s.Provider("kubernetes", { context: process.env.REAL_CONTEXT || "real", kubeconfig: "", enableServerSideApply: true });
const ns = new k8s.core.v1.Namespace("floor", { metadata: { name: ${JSON.stringify(namespace)} } }, { provider });
for (let i = 1; i < ${count}; i++) {
    new k8s.core.v1.ConfigMap(\`floor-\${i}\`, { metadata: { name: \`floor-\${i}\`, namespace: ${JSON.stringify(namespace)} }, data: { index: String(i) } }, { provider, dependsOn: [ns] });
}
`,
    );
}

/** Runs the benchmark in the current real environment (REAL_* variables set). */
export async function benchReal(previews: number): Promise<RealBenchResult> {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
    const keeper = await keepSubscriptionWebhook();
    let upSeconds: number;
    let resources: number;
    let previewSeconds: number;
    try {
        const full = new TestStack("bench-full", fullStackConfig());
        upSeconds = timed("pulumi up of the full stack", () => full.up());
        resources = (JSON.parse(full.exportState()).deployment.resources as unknown[]).length;
        previewSeconds = median(
            Array.from({ length: previews }, () => timed("no-change preview", () => full.preview(["--expect-no-changes"]))),
        );
        destroyStack(full, fullStackKept());
    } finally {
        await keeper.stop();
    }

    const floorDir = path.join(realEnv("REAL_WORK"), "bench-floor");
    writeFloorProject(floorDir, "real-bench-floor", resources);
    const floor = new TestStack("bench-floor", {}, { projectDirectory: floorDir });
    timed("pulumi up of the floor", () => floor.up());
    const floorPreviewSeconds = median(
        Array.from({ length: previews }, () => timed("floor no-change preview", () => floor.preview(["--expect-no-changes"]))),
    );
    destroyStack(floor);
    return { previewSeconds, floorPreviewSeconds, upSeconds, resources };
}

/** The benchmark's verdict: the ratio against the goal. */
export function realBenchGoal(result: RealBenchResult): "met" | "missed" {
    return result.previewSeconds / result.floorPreviewSeconds <= REAL_BENCH_GOAL_RATIO ? "met" : "missed";
}

export function formatRealBench(result: RealBenchResult): string {
    const f = (n: number) => n.toFixed(2);
    return `bench:real preview_s=${f(result.previewSeconds)} floor_preview_s=${f(result.floorPreviewSeconds)} ratio=${(result.previewSeconds / result.floorPreviewSeconds).toFixed(2)} up_s=${f(result.upSeconds)} resources=${result.resources} goal=${realBenchGoal(result)}`;
}

async function main(): Promise<void> {
    const previews = Number(process.env.BENCH_PREVIEWS ?? "5");
    if (!Number.isInteger(previews) || previews < 1) {
        throw new Error(`BENCH_PREVIEWS must be a positive integer, got ${JSON.stringify(process.env.BENCH_PREVIEWS)}`);
    }
    const { startRealEnvironment } = await import("../../tests/real/setup/environment");
    const environment = await startRealEnvironment();
    let result: RealBenchResult;
    try {
        result = await benchReal(previews);
        console.log(formatRealBench(result));
    } finally {
        await environment.stop();
    }
    if (realBenchGoal(result) === "missed") {
        console.error(`bench:real: goal missed: the no-change preview took more than ${REAL_BENCH_GOAL_RATIO} times the floor's`);
        process.exitCode = 1;
    }
}

if (require.main === module) {
    main().catch((error: Error) => {
        console.error(error.message);
        process.exit(1);
    });
}
