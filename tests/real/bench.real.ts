/**
 * `npm run bench:real` at its smallest (one preview each), so the benchmark cannot rot unseen: it
 * runs the same code in the same environment and prints the same line. Its verdict on the goal is
 * the benchmark's own (a missed goal makes `npm run bench:real` exit 1); here only that the verdict
 * follows from the printed figures: a time is never asserted (docs/performance.md).
 */
import { benchReal, formatRealBench, REAL_BENCH_GOAL_RATIO } from "../../scripts/bench/real";

describe("bench:real at a tiny size", () => {
    test("GIVEN the run's cluster WHEN the benchmark runs with one preview each THEN it measures both stacks and prints its line, whose verdict is the ratio against the goal", async () => {
        const result = await benchReal(1);
        expect(result.resources).toBeGreaterThan(50);
        expect(Object.values(result).every((n) => Number.isFinite(n) && n > 0)).toBe(true);
        const line = formatRealBench(result);
        const match =
            /^bench:real preview_s=\d+\.\d\d floor_preview_s=\d+\.\d\d ratio=(\d+\.\d\d) up_s=\d+\.\d\d resources=\d+ goal=(met|missed)$/.exec(
                line,
            );
        expect(match).not.toBeNull();
        const ratio = result.previewSeconds / result.floorPreviewSeconds;
        expect(match?.[2]).toBe(ratio <= REAL_BENCH_GOAL_RATIO ? "met" : "missed");
        process.stdout.write(`${line}\n`);
    });
});
