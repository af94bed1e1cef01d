/**
 * The admission server as the image runs it, one process configured by environment: the compiled
 * dist/webhook/main.js under plain Node.js (`npm run build` first, a no-op when dist/ is current),
 * with its output captured and its exit code awaitable: for the tests that start, load, rotate and
 * stop real server processes. Not webhook/main.ts under tsx: tsx's module hooks double the start's
 * CPU (1.5 s against 0.6 s on the suite's 2-core machines), and the suite starts about a dozen.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as os from "node:os";
import { build } from "../../../scripts/bench/webhook";
import { ROOT } from "../../helpers/root";

let built = false;

export interface WebhookProcess {
    child: ChildProcessWithoutNullStreams;
    output: { stdout: string; stderr: string };
    exited: Promise<number | null>;
}

/** Starts dist/webhook/main.js with `env` and nothing of this process's environment but PATH and the test run's TMPDIR. */
export function startWebhookProcess(env: Record<string, string>): WebhookProcess {
    if (!built) {
        build();
        built = true;
    }
    const child = spawn(process.execPath, ["dist/webhook/main.js"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", TMPDIR: os.tmpdir(), ...env },
        stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.end();
    const output = { stdout: "", stderr: "" };
    child.stdout.on("data", (chunk) => (output.stdout += chunk));
    child.stderr.on("data", (chunk) => (output.stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    return { child, output, exited };
}
