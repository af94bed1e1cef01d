/**
 * `npm run bench:real` at its smallest size (ten ClusterBundles, one preview each), so the
 * benchmark cannot rot unseen: it runs the same code in the same environment and prints the same
 * line. Its verdict on the goal is the benchmark's own (a missed goal makes `npm run bench:real`
 * exit 1); here only that the verdict follows from the printed figures: a time is never asserted
 * (docs/performance.md). The larger sizes take minutes each; their figures are in docs/performance.md.
 */
import { benchReal, formatRealBench, parseSizes, REAL_BENCH_GOAL_RATIO, scenarioConfig } from "../../scripts/bench/real";

describe("bench:real at its smallest size", () => {
    test("GIVEN the run's cluster WHEN the ten-ClusterBundle scenario runs with one preview each THEN it measures the stack and a floor of as many resources and prints its line, whose verdict is the ratio against the goal", async () => {
        const scenarios = parseSizes("clusterBundles:10");
        const config = scenarioConfig(scenarios[0]) as { subscriptions: { clusterBundles: Array<{ name: string }> } };
        expect(config.subscriptions.clusterBundles.map((b) => b.name)).toEqual([
            "cluster",
            ...Array.from({ length: 9 }, (_, i) => `cluster-${i + 2}`),
        ]);
        const [result] = await benchReal(scenarios, 1);
        expect(result.resources).toBeGreaterThan(50);
        expect(
            [result.upSeconds, result.floorUpSeconds, result.previewSeconds, result.floorPreviewSeconds].every(
                (n) => Number.isFinite(n) && n > 0,
            ),
        ).toBe(true);
        const line = formatRealBench(result);
        const match =
            /^bench:real scenario=clusterBundles:10 resources=\d+ up_s=\d+\.\d\d floor_up_s=\d+\.\d\d up_ratio=\d+\.\d\d preview_s=\d+\.\d\d floor_preview_s=\d+\.\d\d ratio=\d+\.\d\d preview_ms_per_resource=\d+\.\d floor_preview_ms_per_resource=\d+\.\d goal=(met|missed)$/.exec(
                line,
            );
        expect(match).not.toBeNull();
        expect(match?.[1]).toBe(result.previewSeconds / result.floorPreviewSeconds <= REAL_BENCH_GOAL_RATIO ? "met" : "missed");
        process.stdout.write(`${line}\n`);
    });
});
