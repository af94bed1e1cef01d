/**
 * `npm run bench:render` at a tiny size (`--tiny`), so the benchmark cannot rot unseen: the same
 * script, the same program and floor, the same last line (figures at this size mean nothing).
 */
import { runBenchScript } from "../helpers/bench-script";

describe("bench:render", () => {
    test("GIVEN the tiny size WHEN the benchmark runs THEN it exits 0 and its last line gives the ratio, the resources and what one ClusterBundle adds", () => {
        const run = runBenchScript("render", ["--tiny"]);
        expect(run.status).toBe(0);
        const last = run.lastLine;
        expect(last).toMatch(/^bench:render ratio=\d+\.\d\d resources=\d+ resources_per_cluster_bundle=\d+$/);
        const resources = Number(/resources=(\d+)/.exec(last)?.[1]);
        const perBundle = Number(/resources_per_cluster_bundle=(\d+)/.exec(last)?.[1]);
        expect(perBundle).toBeGreaterThan(0);
        expect(resources).toBeGreaterThan(2 * perBundle);
    }, 120_000);
});
