/**
 * The Pulumi CLI as the fleet report runs it: the admin's installed CLI (scripts/pulumi-cli.js,
 * the rule `npm start` follows: npm's `pulumi` launcher in node_modules/.bin skipped), each
 * command in a process group of its own, so that cancelling a preview ends everything it
 * started.
 *
 * The Automation API's own runner (@pulumi/pulumi automation/cmd.js `exec`) sends SIGINT to its
 * direct child only (execa's `kill`): when that child is a launcher, or a CLI that does not
 * answer SIGINT, the preview, its language host, the Node.js program and the providers keep
 * running, orphaned, and the report waits on them. This runner gives the CLI the same SIGINT
 * first (a graceful cancel), then SIGKILLs the whole group after a grace period, and SIGKILLs
 * what is left of the group whenever the CLI itself exits.
 *
 * It stands in for the Automation API's PulumiCommand: LocalWorkspace and Stack call only
 * `run(args, cwd, env, onOutput, onError, signal)` and read `command` and `version`
 * (automation/localWorkspace.js, automation/stack.js runPulumiCmd); results and failures are
 * the Automation API's own CommandResult and CommandError (automation/cmd.js, errors.js).
 */
import { spawn, spawnSync } from "node:child_process";
import * as path from "node:path";
import type { PulumiCommand } from "@pulumi/pulumi/automation";
import * as semver from "semver";
import { installedCli } from "../pulumi-cli";

// Internal to the Automation API, and what its own runner returns and throws.
const { CommandResult } = require("@pulumi/pulumi/automation/cmd") as {
    CommandResult: new (stdout: string, stderr: string, code: number, err?: Error) => unknown;
};
const { createCommandError } = require("@pulumi/pulumi/automation/errors") as { createCommandError: (result: unknown) => Error };

/** How long the CLI has to cancel gracefully after SIGINT before its whole group is killed. */
export const CANCEL_GRACE_MS = 2000;

function signalGroup(pid: number, signal: NodeJS.Signals): void {
    try {
        process.kill(-pid, signal);
    } catch {
        // The group is already gone.
    }
}

export class GroupedPulumiCommand {
    constructor(
        readonly command: string,
        readonly version: semver.SemVer | null,
        private readonly graceMs = CANCEL_GRACE_MS,
    ) {}

    run(
        givenArgs: string[],
        cwd: string,
        additionalEnv: Record<string, string>,
        onOutput?: (data: string) => void,
        onError?: (data: string) => void,
        signal?: AbortSignal,
    ): Promise<unknown> {
        const args = givenArgs.includes("--non-interactive") ? givenArgs : [...givenArgs, "--non-interactive"];
        const env: NodeJS.ProcessEnv = {
            ...process.env,
            ...additionalEnv,
            // The CLI finds its language host and plugins beside itself first.
            PATH: `${path.dirname(this.command)}${path.delimiter}${additionalEnv.PATH ?? process.env.PATH ?? ""}`,
            PULUMI_AUTOMATION_API: "true",
        };
        return new Promise((resolve, reject) => {
            // detached: a new session and process group (setsid), led by the CLI.
            const child = spawn(this.command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
            let stdout = "";
            let stderr = "";
            let killTimer: NodeJS.Timeout | undefined;
            child.stdout.on("data", (data: Buffer) => {
                stdout += data.toString();
                onOutput?.(data.toString());
            });
            child.stderr.on("data", (data: Buffer) => {
                stderr += data.toString();
                onError?.(data.toString());
            });
            const cancel = () => {
                if (child.pid === undefined) {
                    return;
                }
                signalGroup(child.pid, "SIGINT");
                killTimer = setTimeout(() => signalGroup(child.pid as number, "SIGKILL"), this.graceMs);
            };
            if (signal?.aborted) {
                cancel();
            } else {
                signal?.addEventListener("abort", cancel, { once: true });
            }
            child.on("exit", () => {
                // Whatever the CLI leaves behind (a plugin, a program) goes with it.
                if (child.pid !== undefined) {
                    signalGroup(child.pid, "SIGKILL");
                }
            });
            child.on("error", (error) => {
                clearTimeout(killTimer);
                signal?.removeEventListener("abort", cancel);
                reject(createCommandError(new CommandResult("", error.message, -2, error)));
            });
            child.on("close", (code, killedBy) => {
                clearTimeout(killTimer);
                signal?.removeEventListener("abort", cancel);
                const exitCode = code ?? (killedBy ? 128 : -2);
                const result = new CommandResult(stdout, stderr, exitCode);
                if (exitCode !== 0) {
                    reject(createCommandError(result));
                } else {
                    resolve(result);
                }
            });
        });
    }
}

/** The version `pulumi version` prints (`v3.260.0`), or null when it cannot be read. */
export function cliVersion(command: string): semver.SemVer | null {
    const result = spawnSync(command, ["version"], { encoding: "utf8", env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" } });
    return result.status === 0 ? semver.parse(result.stdout.trim().replace(/^v/, "")) : null;
}

/** The admin's installed CLI as the fleet runs it; throws, saying where it looked, when there is none. */
export function installedPulumiCommand(env: NodeJS.ProcessEnv = process.env): PulumiCommand {
    const command = installedCli(env);
    if (command === undefined) {
        throw new Error(
            "no Pulumi CLI found: none on PATH outside node_modules (npm's pulumi launcher is not used) and none in $PULUMI_HOME/bin (~/.pulumi/bin); install the Pulumi CLI",
        );
    }
    return new GroupedPulumiCommand(command, cliVersion(command)) as unknown as PulumiCommand;
}
