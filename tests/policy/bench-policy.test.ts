/**
 * `npm run bench:policy` at a tiny size (`--tiny`: 200 resources, one round), so the benchmark
 * cannot rot unseen: the same script and the same last line (figures at this size mean nothing).
 */
import { runBenchScript } from "../helpers/bench-script";

describe("bench:policy", () => {
    test("GIVEN the tiny size WHEN the benchmark runs THEN it exits 0 and its last line gives resources per second, the ratio and the rules alone per second", () => {
        const run = runBenchScript("policy", ["--tiny"]);
        expect(run.status).toBe(0);
        expect(run.lastLine).toMatch(/^bench:policy resources_per_s=\d+ ratio=\d+\.\d{3} rules_per_s=\d+$/);
    }, 120_000);
});
