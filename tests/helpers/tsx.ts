/**
 * How the tests run a TypeScript script the way the npm scripts' `tsx <script>` runs it: Node.js
 * with tsx's loader (`node --import tsx`). The tsx CLI starts exactly that as a child of a Node.js
 * process of its own, which only relays signals and serves watch mode; these runs use neither,
 * and the extra process costs a quarter of a second of CPU per run (the suite makes dozens).
 * Tests of the npm script's process tree itself (tests/fleet/process-tree.test.ts) keep the CLI.
 */
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./root";

/** tsx's loader, as `--import tsx` resolves it from the repository root, whatever the child's working directory. */
const LOADER = pathToFileURL(path.join(ROOT, "node_modules", "tsx", "dist", "loader.mjs")).href;

/** The command and arguments that run `script` (absolute, or relative to the child's working directory) with `args` under tsx. */
export function tsxCommand(script: string, args: readonly string[] = []): [string, string[]] {
    return [process.execPath, ["--import", LOADER, script, ...args]];
}
