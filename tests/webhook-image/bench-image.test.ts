/**
 * `npm run bench:image` at a tiny size (`--tiny`: one round, no warm-up, two reproducibility builds), so the
 * benchmark cannot rot unseen: the same script against the same loopback registry, the same last
 * line (figures at this size mean nothing). It had rotted once: the compiled webhook's layout
 * changed when the neutral modules moved under components/shared/.
 */
import { runBenchScript } from "../helpers/bench-script";

describe("bench:image", () => {
    test("GIVEN the tiny size WHEN the benchmark runs THEN it exits 0, uploads nothing on a no-change rebuild and both fresh builds give one digest", () => {
        const run = runBenchScript("image", ["--tiny"]);
        expect(run.stderr.split("\n").filter((line) => /Error/.test(line))).toEqual([]);
        expect(run.status).toBe(0);
        const last = run.lastLine;
        expect(last).toMatch(/^bench:image ratio=\d+\.\d\d nochange_ms=\d+ nochange_uploads=0 reproducible=2\/2$/);
    }, 180_000);
});
