/**
 * `npm run bench:real`: the real engine's cost of the program at several sizes, each against a
 * floor of the same size, on the same CLI, provider and cluster in the same run.
 *
 * A scenario is the full stack (the real tier's 3a stack: every non-AWS capability) with N
 * ClusterBundles or N operator installs. Its floor is a plain Node program of as many ConfigMaps as
 * that stack has resources: the cost of the engine, the language host and the kubernetes provider
 * registering and diffing that many objects, with none of the program's own work (config
 * validation, pre-flight reads, certificate and bundle derivation, transformations). For each
 * scenario it prints
 *   bench:real scenario=clusterBundles:10 resources=… up_s=… floor_up_s=… up_ratio=…
 *     preview_s=… floor_preview_s=… ratio=… preview_ms_per_resource=… floor_preview_ms_per_resource=…
 * (previews are medians of BENCH_PREVIEWS, default 5) and, per family with two sizes or more, the
 * marginal cost of one more resource (the slope between its smallest and largest size) beside the
 * floor's:
 *   bench:real family=clusterBundles marginal_preview_ms_per_resource=… floor_marginal_…=… …
 * Goals (issue 34.5): ratio ≤ 1.5 at every size (each scenario's line ends `goal=met|missed`); the
 * program's marginal cost no higher than the floor's (`goal=met|missed` on the family line). A
 * missed goal is the benchmark's own verdict and `npm run bench:real` exits 1 on it. BENCH_SIZES
 * picks the scenarios, default "clusterBundles:10,100,500;operators:10,50"; the real tier runs the
 * smallest (tests/real/bench.real.ts), checking the line and that its verdict follows from its
 * figures, never a time: figures on a shared machine are no measurement (docs/performance.md).
 *
 * The full stack enables subscriptions, so its webhook's server runs as its pods would
 * (tests/real/helpers/subscription-webhook.ts) while it exists.
 *
 * Starts its own environment (tests/real/setup/environment.ts: the tools, the hermetic cluster,
 * the registry); with REAL_WORK already set (inside the real tier) it uses the run's.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { destroyStack } from "../../tests/real/helpers/destroy";
import { applyObjects } from "../../tests/real/helpers/kubectl";
import { fullStackConfig, fullStackKept, preexistingObjects, requireBuild } from "../../tests/real/helpers/fixtures";
import { describe as explain, javascriptProject, realEnv, REPO_ROOT, TestStack } from "../../tests/real/helpers/stack";
import { keepSubscriptionWebhook } from "../../tests/real/helpers/subscription-webhook";

/** The goal: a scenario's no-change preview at most this many times its floor's. */
export const REAL_BENCH_GOAL_RATIO = 1.5;

export type BenchFamily = "clusterBundles" | "operators";

export interface BenchScenario {
    readonly family: BenchFamily;
    /** ClusterBundles or operator installs in the stack. */
    readonly size: number;
}

export interface RealBenchResult {
    readonly scenario: BenchScenario;
    readonly resources: number;
    readonly upSeconds: number;
    readonly floorUpSeconds: number;
    readonly previewSeconds: number;
    readonly floorPreviewSeconds: number;
}

export const DEFAULT_SIZES = "clusterBundles:10,100,500;operators:10,50";

/**
 * Parses BENCH_SIZES ("family:n,n;family:n"), every problem named at once.
 */
export function parseSizes(text: string): BenchScenario[] {
    const scenarios: BenchScenario[] = [];
    const problems: string[] = [];
    for (const part of text
        .split(";")
        .map((p) => p.trim())
        .filter((p) => p !== "")) {
        const [family, sizes = ""] = part.split(":");
        if (family !== "clusterBundles" && family !== "operators") {
            problems.push(`family ${JSON.stringify(family)} is not clusterBundles or operators`);
            continue;
        }
        for (const size of sizes.split(",")) {
            const n = Number(size);
            if (!/^\d+$/.test(size.trim()) || n < 1) {
                problems.push(`size ${JSON.stringify(size)} of ${family} is not a positive integer`);
            } else {
                scenarios.push({ family, size: n });
            }
        }
    }
    if (problems.length > 0 || scenarios.length === 0) {
        throw new Error(
            `BENCH_SIZES=${JSON.stringify(text)}: ${problems.length > 0 ? problems.join("; ") : "no scenario"} (expected e.g. ${JSON.stringify(DEFAULT_SIZES)})`,
        );
    }
    return scenarios;
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

/**
 * The full stack grown to the scenario's size: copies of the fixture's ClusterBundle (same
 * sources, names cluster-2…) or of its operator install (same bundle, each in a namespace of its
 * own, as OLM installs one bundle in several namespaces).
 */
export function scenarioConfig(scenario: BenchScenario): Record<string, unknown> {
    const base = fullStackConfig();
    if (scenario.family === "clusterBundles") {
        const subscriptions = base.subscriptions as { clusterBundles: Array<Record<string, unknown>> };
        const [first] = subscriptions.clusterBundles;
        const clusterBundles = Array.from({ length: scenario.size }, (_, i) =>
            i === 0 ? first : { ...first, name: `${first.name}-${i + 1}` },
        );
        return { ...base, subscriptions: { ...subscriptions, clusterBundles } };
    }
    const [first] = base.operators as Array<Record<string, unknown>>;
    // Each copy's permissions confined to its own namespace: OLM names an install's Roles after the
    // CSV and its rules, so copies sharing the fixture's rbacNamespaces would declare the same Role
    // twice, which the program refuses ("one cluster object cannot belong to two installs").
    const operators = Array.from({ length: scenario.size }, (_, i) => {
        if (i === 0) {
            return first;
        }
        const namespace = `${first.namespace}-${i + 1}`;
        return { ...first, name: `${first.name}-${i + 1}`, namespace, rbacNamespaces: [namespace] };
    });
    return { ...base, operators };
}

/** A project of `count` ConfigMaps in `namespace`, as plain JavaScript (no TypeScript, no config). */
function writeFloorProject(dir: string, namespace: string, count: number): void {
    fs.rmSync(dir, { recursive: true, force: true });
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

/** Runs one scenario and its floor in the current real environment (REAL_* variables set). */
export async function benchScenario(scenario: BenchScenario, previews: number): Promise<RealBenchResult> {
    const label = `${scenario.family}:${scenario.size}`;
    const keeper = await keepSubscriptionWebhook();
    let upSeconds: number;
    let resources: number;
    let previewSeconds: number;
    try {
        const full = new TestStack(`bench-${scenario.family}-${scenario.size}`, scenarioConfig(scenario));
        upSeconds = timed(`pulumi up of the full stack (${label})`, () => full.up());
        resources = (JSON.parse(full.exportState()).deployment.resources as unknown[]).length;
        previewSeconds = median(
            Array.from({ length: previews }, () => timed(`no-change preview (${label})`, () => full.preview(["--expect-no-changes"]))),
        );
        destroyStack(full, fullStackKept({ operator: true, installs: scenario.family === "operators" ? scenario.size : 1 }));
    } finally {
        await keeper.stop();
    }

    const floorDir = path.join(realEnv("REAL_WORK"), `bench-floor-${resources}`);
    writeFloorProject(floorDir, "real-bench-floor", resources);
    const floor = new TestStack(`bench-floor-${resources}`, {}, { projectDirectory: floorDir });
    const floorUpSeconds = timed(`pulumi up of the floor (${resources})`, () => floor.up());
    const floorPreviewSeconds = median(
        Array.from({ length: previews }, () =>
            timed(`floor no-change preview (${resources})`, () => floor.preview(["--expect-no-changes"])),
        ),
    );
    destroyStack(floor);
    return { scenario, resources, upSeconds, floorUpSeconds, previewSeconds, floorPreviewSeconds };
}

/** Runs the scenarios in the current real environment, handing each result on as it is measured. */
export async function benchReal(
    scenarios: readonly BenchScenario[],
    previews: number,
    onResult: (result: RealBenchResult) => void = () => undefined,
): Promise<RealBenchResult[]> {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
    const results: RealBenchResult[] = [];
    for (const scenario of scenarios) {
        const result = await benchScenario(scenario, previews);
        onResult(result);
        results.push(result);
    }
    return results;
}

/** A scenario's verdict: its preview ratio against the goal. */
export function realBenchGoal(result: RealBenchResult): "met" | "missed" {
    return result.previewSeconds / result.floorPreviewSeconds <= REAL_BENCH_GOAL_RATIO ? "met" : "missed";
}

const f2 = (n: number): string => n.toFixed(2);
const ms = (seconds: number, resources: number): string => ((seconds * 1000) / resources).toFixed(1);

export function formatRealBench(result: RealBenchResult): string {
    const r = result;
    return [
        `bench:real scenario=${r.scenario.family}:${r.scenario.size} resources=${r.resources}`,
        `up_s=${f2(r.upSeconds)} floor_up_s=${f2(r.floorUpSeconds)} up_ratio=${f2(r.upSeconds / r.floorUpSeconds)}`,
        `preview_s=${f2(r.previewSeconds)} floor_preview_s=${f2(r.floorPreviewSeconds)} ratio=${f2(r.previewSeconds / r.floorPreviewSeconds)}`,
        `preview_ms_per_resource=${ms(r.previewSeconds, r.resources)} floor_preview_ms_per_resource=${ms(r.floorPreviewSeconds, r.resources)}`,
        `goal=${realBenchGoal(r)}`,
    ].join(" ");
}

/**
 * Per family with two sizes or more: the cost of one more resource, as the slope between its
 * smallest and largest scenario, for the program and for the floor (whose sizes are the same
 * resource counts). Fixed costs cancel out of a slope, so this is the per-resource cost the goal
 * compares.
 */
export function formatMarginals(results: readonly RealBenchResult[]): string[] {
    const lines: string[] = [];
    for (const family of ["clusterBundles", "operators"] as const) {
        const sized = results.filter((r) => r.scenario.family === family).sort((a, b) => a.resources - b.resources);
        if (sized.length < 2) continue;
        const small = sized[0];
        const large = sized[sized.length - 1];
        const added = large.resources - small.resources;
        if (added <= 0) continue;
        const slope = (pick: (r: RealBenchResult) => number): number => ((pick(large) - pick(small)) * 1000) / added;
        const preview = slope((r) => r.previewSeconds);
        const floorPreview = slope((r) => r.floorPreviewSeconds);
        lines.push(
            [
                `bench:real family=${family} resources=${small.resources}..${large.resources}`,
                `marginal_preview_ms_per_resource=${preview.toFixed(1)} floor_marginal_preview_ms_per_resource=${floorPreview.toFixed(1)}`,
                `marginal_up_ms_per_resource=${slope((r) => r.upSeconds).toFixed(1)} floor_marginal_up_ms_per_resource=${slope((r) => r.floorUpSeconds).toFixed(1)}`,
                `goal=${preview <= floorPreview ? "met" : "missed"}`,
            ].join(" "),
        );
    }
    return lines;
}

async function main(): Promise<void> {
    const previews = Number(process.env.BENCH_PREVIEWS ?? "5");
    if (!Number.isInteger(previews) || previews < 1) {
        throw new Error(`BENCH_PREVIEWS must be a positive integer, got ${JSON.stringify(process.env.BENCH_PREVIEWS)}`);
    }
    const scenarios = parseSizes(process.env.BENCH_SIZES ?? DEFAULT_SIZES);
    const { startRealEnvironment } = await import("../../tests/real/setup/environment");
    const environment = await startRealEnvironment();
    let lines: string[] = [];
    try {
        const results = await benchReal(scenarios, previews, (result) => console.log(formatRealBench(result)));
        lines = formatMarginals(results);
        for (const line of lines) console.log(line);
        lines.push(...results.map(formatRealBench));
    } finally {
        await environment.stop();
    }
    if (lines.some((line) => line.endsWith(" goal=missed"))) {
        console.error("bench:real: goal missed (see the lines ending goal=missed)");
        process.exitCode = 1;
    }
}

if (require.main === module) {
    main().catch((error: Error) => {
        console.error(error.message);
        process.exit(1);
    });
}
