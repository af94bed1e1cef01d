/**
 * `npm run bench:policy` at a tiny size (`--tiny`: 200 resources, one round), so the benchmark
 * cannot rot unseen: the same script and the same last line (figures at this size mean nothing).
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { ROOT } from "../helpers/root";

describe("bench:policy", () => {
    test("GIVEN the tiny size WHEN the benchmark runs THEN it exits 0 and its last line gives resources per second and the ratio", () => {
        const run = spawnSync(
            process.execPath,
            [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/bench/policy.ts", "--tiny"],
            {
                cwd: ROOT,
                encoding: "utf8",
            },
        );
        expect(run.status).toBe(0);
        expect(run.stdout.trim().split("\n").pop()).toMatch(/^bench:policy resources_per_s=\d+ ratio=\d+\.\d{3}$/);
    }, 120_000);
});
