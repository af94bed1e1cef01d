/**
 * `npm run bench:operators` at a tiny size (one round), so the benchmark cannot rot unseen: the
 * same script and the same last line (figures at this size mean nothing, and a ratio of times on
 * a shared machine is no assertion: a cold `.ci/run` measured 0.42 with the tool build beside
 * it). What the line must show is that a round starts cold, as a preview's process does: it
 * parses every CSV again (a round served from the cache was once timed at 0.08x).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ROOT } from "../helpers/root";
import { tsxCommand } from "../helpers/tsx";

describe("bench:operators", () => {
    test("GIVEN one round WHEN the benchmark runs THEN it exits 0 and its last line shows a round that parsed every CSV again", () => {
        const run = spawnSync(...tsxCommand("scripts/bench/operators.ts", ["--rounds", "1"]), { cwd: ROOT, encoding: "utf8" });
        expect(run.status).toBe(0);
        const last = run.stdout.trim().split("\n").pop() as string;
        expect(last).toMatch(/^bench:operators ratio=\d+\.\d\d csvs=\d+ parses=\d+ floor_ms=\d+\.\d plan_ms=\d+\.\d$/);
        // The benchmark's inputs, counted from the disk: the fixtures' two CSVs and every file of ../shared/testdata/csvs.
        const shared = path.resolve(ROOT, "..", "shared", "testdata", "csvs");
        const csvs = 2 + (fs.existsSync(shared) ? fs.readdirSync(shared).length : 0);
        expect(Number(/ csvs=(\d+)/.exec(last)?.[1])).toBe(csvs);
        // Each CSV parsed again in the round (and its bundle's other manifests): none served from the cache.
        expect(Number(/ parses=(\d+)/.exec(last)?.[1])).toBeGreaterThanOrEqual(csvs);
    }, 120_000);
});
