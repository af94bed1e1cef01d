/**
 * `npm run bench:scale` at a tiny size, so the benchmark cannot rot unseen: the same script, the
 * compiled server against the stand-in API, the same lines (figures at this size mean nothing).
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

describe("bench:scale", () => {
    test("GIVEN sizes 0 and 3 teams and 8 admissions WHEN the benchmark runs THEN it prints a line per size and the summary, with nothing refused and the same open watches", () => {
        const run = spawnSync(process.execPath, ["--import", "tsx", "scripts/bench/scale.ts"], {
            cwd: ROOT,
            env: { ...process.env, BENCH_SCALE_SIZES: "0,3", BENCH_SCALE_ADMISSIONS: "8", BENCH_SCALE_SETTLE_MS: "0" },
            encoding: "utf8",
            timeout: 300_000,
        });
        expect(run.status).toBe(0);
        const sizes = run.stdout.split("\n").filter((text) => text.startsWith("bench:scale size "));
        expect(sizes.map((line) => /teams=(\d+)/.exec(line)?.[1])).toEqual(["0", "3"]);
        for (const line of sizes) expect(line).toMatch(/ watches=\d+ p50_ms=\d+\.\d\d p99_ms=\d+\.\d\d refused=0$/);
        const summary = run.stdout.split("\n").find((text) => text.startsWith("bench:scale source=stand-in "));
        expect(summary).toMatch(/ teams=0,3 rss_mib=[\d.]+,[\d.]+ heap_mib=[\d.]+,[\d.]+ peak_mib=[\d.]+,[\d.]+ watches=(\d+),\1 /);
        expect(summary).toMatch(/ refused=0 rss_ratio=\d+\.\d\d goal=(met|not met)$/);
    }, 320_000);
});
