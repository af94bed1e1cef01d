/**
 * `npm run bench:real` at its smallest (one preview each), so the benchmark cannot rot unseen: it
 * runs the same code in the same environment and prints the same line.
 */
import { benchReal, formatRealBench } from "../../scripts/bench/real";

describe("bench:real at a tiny size", () => {
    test("GIVEN the run's cluster WHEN the benchmark runs with one preview each THEN it measures both stacks and prints its line", () => {
        const result = benchReal(1);
        expect(result.resources).toBeGreaterThan(50);
        expect(Object.values(result).every((n) => Number.isFinite(n) && n > 0)).toBe(true);
        expect(formatRealBench(result)).toMatch(
            /^bench:real preview_s=\d+\.\d\d floor_preview_s=\d+\.\d\d ratio=\d+\.\d\d up_s=\d+\.\d\d resources=\d+$/,
        );
    });
});
