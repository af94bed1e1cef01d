/**
 * The admission server as the image runs it, one process configured by environment
 * (webhook/main.ts under tsx, so no build is needed), with its output captured and its exit code
 * awaitable: for the tests that start, load, rotate and stop real server processes.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import * as os from "node:os";
import { ROOT } from "../../helpers/root";

export interface WebhookProcess {
    child: ChildProcessWithoutNullStreams;
    output: { stdout: string; stderr: string };
    exited: Promise<number | null>;
}

/** Starts webhook/main.ts with `env` and nothing of this process's environment but PATH and the test run's TMPDIR. */
export function startWebhookProcess(env: Record<string, string>): WebhookProcess {
    const child = spawn(process.execPath, ["--import", "tsx", "webhook/main.ts"], {
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
