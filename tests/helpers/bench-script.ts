import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { ROOT } from "./root";
import { tsxCommand } from "./tsx";

/** Runs `scripts/bench/<name>.ts` with `args` as `npm run bench:<name> -- <args>` would (under tsx, tests/helpers/tsx.ts, from the repository root). */
export function runBenchScript(name: string, args: readonly string[]): SpawnSyncReturns<string> & { lastLine: string } {
    const run = spawnSync(...tsxCommand(`scripts/bench/${name}.ts`, args), { cwd: ROOT, encoding: "utf8" });
    return { ...run, lastLine: run.stdout.trim().split("\n").pop() ?? "" };
}
