/**
 * `npm run bench:load` at its smallest (one round, no type-checking mode), so the benchmark cannot
 * rot unseen. It lives in the real tier because its floor is the compiled program (dist/), which
 * `npm run test:real` builds first and a bare `npm test` does not.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { REPO_ROOT } from "./helpers/stack";

describe("bench:load at a tiny size", () => {
    test("GIVEN the built program WHEN the benchmark runs one round THEN it loads the program as the language host does and prints its line", () => {
        const run = spawnSync(
            process.execPath,
            [path.join(REPO_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "scripts/bench/load.ts", "--rounds", "1", "--skip-typecheck"],
            { cwd: REPO_ROOT, encoding: "utf8" },
        );
        expect(run.status).toBe(0);
        const last = run.stdout.trim().split("\n").pop() as string;
        expect(last).toMatch(
            /^bench:load host_ms=\d+ host_max_rss_mb=\d+ floor_ms=\d+ floor_max_rss_mb=\d+ ratio=\d+\.\d\d target=(met|missed) /,
        );
    });
});
