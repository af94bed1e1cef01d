import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import * as path from "node:path";
import { ROOT } from "./root";

/** Runs `scripts/bench/<name>.ts` with `args` as `npm run bench:<name> -- <args>` would (tsx, from the repository root). */
export function runBenchScript(name: string, args: readonly string[]): SpawnSyncReturns<string> & { lastLine: string } {
    const run = spawnSync(
        process.execPath,
        [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), `scripts/bench/${name}.ts`, ...args],
        {
            cwd: ROOT,
            encoding: "utf8",
        },
    );
    return { ...run, lastLine: run.stdout.trim().split("\n").pop() ?? "" };
}
