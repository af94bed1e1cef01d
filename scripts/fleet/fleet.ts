/**
 * Previews many stacks of one project with refresh, in parallel, through the Automation API
 * (`@pulumi/pulumi/automation`: LocalWorkspace, Stack.preview with `refresh: true` and `onEvent`),
 * and judges each from its engine events (report.ts). One stack's failure or slowness never
 * holds the others: at most `concurrency` previews run at a time, and a preview that outlives
 * `timeoutSeconds` is cancelled and reported as failed: the CLI gets SIGINT, then its whole
 * process group SIGKILL (cli-command.ts). The admin's installed CLI runs them, never npm's
 * launcher in node_modules/.bin.
 */
import * as os from "node:os";
import { CommandError, EngineEvent, LocalWorkspace, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import { checkStack, interruption, leftByInterruption, locksInOutput, recoveryMessage } from "../interrupted-state";
import { installedPulumiCommand } from "./cli-command";
import { driftFrom, failureReason, stalledFrom, StackOutcome } from "./report";

export interface FleetOptions {
    /** The project directory (Pulumi.yaml). */
    workDir: string;
    /** Stacks to preview; default: every stack of the project in the current backend (`pulumi stack ls`). */
    stacks?: string[];
    /** Previews at a time (at least 1). */
    concurrency: number;
    /** Per-stack limit, in seconds. */
    timeoutSeconds: number;
    /** The CLI; default: the admin's installed CLI (installedPulumiCommand). */
    pulumiCommand?: PulumiCommand;
    /** Aborted (Ctrl-C): every running preview is cancelled, none starts, the admin's stack is selected again. */
    signal?: AbortSignal;
    /** Called as each stack finishes (progress). */
    onOutcome?: (outcome: StackOutcome) => void;
}

/**
 * Memory one preview takes at its peak: the CLI, the Node.js program, and the kubernetes and AWS
 * providers (the AWS provider's schema alone holds several hundred MB). Measured about 1 GB
 * with the AWS provider (issue 26); this is the budget per concurrent preview.
 */
export const PREVIEW_MEMORY_BYTES = 1024 ** 3;

/**
 * A default for `--concurrency`: one preview per CPU the process may use, and no more than the
 * free memory holds at PREVIEW_MEMORY_BYTES each; at least one.
 */
export function defaultConcurrency(
    cpus: number = os.availableParallelism(),
    freeMemoryBytes: number = os.freemem(),
    perPreviewBytes: number = PREVIEW_MEMORY_BYTES,
): number {
    return Math.max(1, Math.min(cpus, Math.floor(freeMemoryBytes / perPreviewBytes)));
}

/** Runs `work` over `items` with at most `limit` at a time, results in item order. */
export async function boundedMap<T, R>(items: ReadonlyArray<T>, limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
    const results = new Array<R>(items.length);
    let next = 0;
    const worker = async (): Promise<void> => {
        while (next < items.length) {
            const index = next++;
            results[index] = await work(items[index]);
        }
    };
    await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
    return results;
}

/** The CLI's stderr carried by an Automation API CommandError (its `commandResult` is internal; its message holds the same text). */
function stderrOf(error: unknown): string {
    const result = (error as { commandResult?: { stderr?: unknown } }).commandResult;
    return error instanceof CommandError && typeof result?.stderr === "string" ? result.stderr : "";
}

async function previewOne(
    workspace: LocalWorkspace,
    cli: string,
    name: string,
    timeoutSeconds: number,
    interrupt?: AbortSignal,
): Promise<StackOutcome> {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const events: EngineEvent[] = [];
    if (interrupt?.aborted) {
        return { stack: name, status: "failed", resources: [], reason: "interrupted (not previewed)", seconds: 0 };
    }
    // A stack left by an interrupted update (pending operations, the lock of a runner that ended)
    // is reported with its recovery commands: a preview of it would not show what the next `up` does.
    const left = checkStack({ cli, cwd: workspace.workDir, stack: name, env: { ...process.env, ...workspace.envVars } });
    if (left && leftByInterruption(left)) {
        return { stack: name, status: "failed", resources: [], reason: recoveryMessage(name, left), seconds: seconds() };
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
    }, timeoutSeconds * 1000);
    const onInterrupt = () => controller.abort();
    interrupt?.addEventListener("abort", onInterrupt, { once: true });
    try {
        const stack = await Stack.select(name, workspace);
        await stack.preview({ refresh: true, onEvent: (event) => events.push(event), signal: controller.signal, color: "never" });
        const resources = driftFrom(events);
        const stalled = stalledFrom(events);
        return {
            stack: name,
            status: resources.length === 0 ? "in-sync" : "drifted",
            resources,
            ...(stalled.length > 0 ? { stalled } : {}),
            seconds: seconds(),
        };
    } catch (error) {
        const locked = interruption(locksInOutput(stderrOf(error)), []);
        const reason = timedOut
            ? `timed out after ${timeoutSeconds}s (preview cancelled)`
            : interrupt?.aborted
              ? "interrupted (preview cancelled)"
              : locked
                ? recoveryMessage(name, locked)
                : failureReason(events, stderrOf(error), String((error as Error).message ?? error));
        return { stack: name, status: "failed", resources: [], reason, seconds: seconds() };
    } finally {
        clearTimeout(timer);
        interrupt?.removeEventListener("abort", onInterrupt);
    }
}

/**
 * Every stack's outcome, in the order of `stacks` (or of `pulumi stack ls`). Selecting a stack
 * is how the Automation API addresses it (`pulumi stack select`), which moves the project's
 * current stack; the one the admin had selected is selected again at the end, also when the run
 * is interrupted (`signal`: the previews are cancelled first, then the stack is selected).
 */
export async function previewFleet(options: FleetOptions): Promise<StackOutcome[]> {
    const pulumiCommand = options.pulumiCommand ?? installedPulumiCommand();
    const workspace = await LocalWorkspace.create({ workDir: options.workDir, pulumiCommand });
    const listed = await workspace.listStacks();
    const names = options.stacks ?? listed.map((s) => s.name);
    try {
        return await boundedMap(names, options.concurrency, async (name) => {
            const outcome = await previewOne(workspace, pulumiCommand.command, name, options.timeoutSeconds, options.signal);
            options.onOutcome?.(outcome);
            return outcome;
        });
    } finally {
        const current = listed.find((s) => s.current)?.name;
        if (current !== undefined) {
            await workspace.selectStack(current).catch(() => undefined);
        }
    }
}
