/**
 * `npm run bench:operators` at a tiny size (one round), so the benchmark cannot rot unseen: the
 * same script and the same last line (figures at this size mean nothing). The rounds start with
 * the parse cache empty, so the plan can never come out cheaper than parsing the same YAML.
 */
import { spawnSync } from "node:child_process";
import { ROOT } from "../helpers/root";
import { tsxCommand } from "../helpers/tsx";

describe("bench:operators", () => {
    test("GIVEN one round WHEN the benchmark runs THEN it exits 0 and its last line gives a ratio no lower than parsing alone would allow", () => {
        const run = spawnSync(...tsxCommand("scripts/bench/operators.ts", ["--rounds", "1"]), { cwd: ROOT, encoding: "utf8" });
        expect(run.status).toBe(0);
        const last = run.stdout.trim().split("\n").pop() as string;
        expect(last).toMatch(/^bench:operators ratio=\d+\.\d\d csvs=\d+ floor_ms=\d+\.\d plan_ms=\d+\.\d$/);
        // A plan that re-uses cached parses would be far below the floor (it was 0.08x).
        expect(Number(/ratio=([\d.]+)/.exec(last)?.[1])).toBeGreaterThan(0.5);
    }, 120_000);
});
