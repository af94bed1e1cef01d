/**
 * `npm run bench:real` at its smallest sizes (ten ClusterBundles; two operator installs, the first
 * size at which the copies the operators family makes exist), one preview each, so neither family
 * can rot unseen: each runs the same code in the same environment and prints the same line. The
 * operators family had never been run until its sizes were measured (2026-11-28), and its copies
 * were refused by the program (they declared one Role twice): this test is what would have said so.
 * The verdict on the goal is the benchmark's own (a missed goal makes `npm run bench:real` exit 1);
 * here only that the verdict follows from the printed figures: a time is never asserted
 * (docs/performance.md). The larger sizes take minutes each; their figures are in docs/performance.md.
 */
import {
    benchReal,
    formatRealBench,
    parseSizes,
    REAL_BENCH_GOAL_RATIO,
    type RealBenchResult,
    scenarioConfig,
} from "../../scripts/bench/real";

/** The scenario's printed line, checked against its format and its own figures; printed for the log. */
function expectLine(result: RealBenchResult, scenario: string): void {
    expect(result.resources).toBeGreaterThan(50);
    expect(
        [result.upSeconds, result.floorUpSeconds, result.previewSeconds, result.floorPreviewSeconds].every(
            (n) => Number.isFinite(n) && n > 0,
        ),
    ).toBe(true);
    const line = formatRealBench(result);
    const match = new RegExp(
        `^bench:real scenario=${scenario} resources=\\d+ up_s=\\d+\\.\\d\\d floor_up_s=\\d+\\.\\d\\d up_ratio=\\d+\\.\\d\\d preview_s=\\d+\\.\\d\\d floor_preview_s=\\d+\\.\\d\\d ratio=\\d+\\.\\d\\d preview_ms_per_resource=\\d+\\.\\d floor_preview_ms_per_resource=\\d+\\.\\d goal=(met|missed)$`,
    ).exec(line);
    expect(match).not.toBeNull();
    expect(match?.[1]).toBe(result.previewSeconds / result.floorPreviewSeconds <= REAL_BENCH_GOAL_RATIO ? "met" : "missed");
    process.stdout.write(`${line}\n`);
}

describe("bench:real at its smallest sizes", () => {
    test("GIVEN the run's cluster WHEN the ten-ClusterBundle scenario runs with one preview each THEN it measures the stack and a floor of as many resources and prints its line, whose verdict is the ratio against the goal", async () => {
        const scenarios = parseSizes("clusterBundles:10");
        const config = scenarioConfig(scenarios[0]) as { subscriptions: { clusterBundles: Array<{ name: string }> } };
        expect(config.subscriptions.clusterBundles.map((b) => b.name)).toEqual([
            "cluster",
            ...Array.from({ length: 9 }, (_, i) => `cluster-${i + 2}`),
        ]);
        const [result] = await benchReal(scenarios, 1);
        expectLine(result, "clusterBundles:10");
    });

    test("GIVEN the run's cluster WHEN the two-operator scenario runs with one preview each THEN the copy installs in its own namespace with its permissions there, the stack comes up and previews, and its line's verdict is the ratio against the goal", async () => {
        const scenarios = parseSizes("operators:2");
        const config = scenarioConfig(scenarios[0]) as { operators: Array<{ name: string; namespace: string; rbacNamespaces: string[] }> };
        expect(config.operators.map(({ name, namespace, rbacNamespaces }) => ({ name, namespace, rbacNamespaces }))).toEqual([
            { name: "node-maintenance", namespace: "node-maintenance", rbacNamespaces: ["team-a"] },
            { name: "node-maintenance-2", namespace: "node-maintenance-2", rbacNamespaces: ["node-maintenance-2"] },
        ]);
        // benchReal throws, with the CLI's output, when the stack's `up` or a preview fails.
        const [result] = await benchReal(scenarios, 1);
        expectLine(result, "operators:2");
    });
});
