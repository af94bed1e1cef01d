/**
 * Previews many stacks of one project with refresh, in parallel, through the Automation API
 * (`@pulumi/pulumi/automation`: LocalWorkspace, Stack.preview with `refresh: true` and `onEvent`),
 * and judges each from its engine events (report.ts). One stack's failure or slowness never
 * holds the others: at most `concurrency` previews run at a time, and a preview that outlives
 * `timeoutSeconds` is cancelled (the CLI gets SIGINT, as the Automation API's `signal` sends it)
 * and reported as failed.
 */
import * as os from "node:os";
import { CommandError, EngineEvent, LocalWorkspace, PulumiCommand, Stack } from "@pulumi/pulumi/automation";
import { driftFrom, failureReason, StackOutcome } from "./report";

export interface FleetOptions {
    /** The project directory (Pulumi.yaml). */
    workDir: string;
    /** Stacks to preview; default: every stack of the project in the current backend (`pulumi stack ls`). */
    stacks?: string[];
    /** Previews at a time (at least 1). */
    concurrency: number;
    /** Per-stack limit, in seconds. */
    timeoutSeconds: number;
    /** The CLI; default: `pulumi` on PATH. */
    pulumiCommand?: PulumiCommand;
    /** Called as each stack finishes (progress). */
    onOutcome?: (outcome: StackOutcome) => void;
}

/** A default for `--concurrency`: one preview per CPU the process may use (each runs a Node.js program and providers). */
export function defaultConcurrency(): number {
    return Math.max(1, os.availableParallelism());
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

async function previewOne(workspace: LocalWorkspace, name: string, timeoutSeconds: number): Promise<StackOutcome> {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const events: EngineEvent[] = [];
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
    }, timeoutSeconds * 1000);
    try {
        const stack = await Stack.select(name, workspace);
        await stack.preview({ refresh: true, onEvent: (event) => events.push(event), signal: controller.signal, color: "never" });
        const resources = driftFrom(events);
        return { stack: name, status: resources.length === 0 ? "in-sync" : "drifted", resources, seconds: seconds() };
    } catch (error) {
        const reason = timedOut
            ? `timed out after ${timeoutSeconds}s (preview cancelled)`
            : failureReason(events, stderrOf(error), String((error as Error).message ?? error));
        return { stack: name, status: "failed", resources: [], reason, seconds: seconds() };
    } finally {
        clearTimeout(timer);
    }
}

/**
 * Every stack's outcome, in the order of `stacks` (or of `pulumi stack ls`). Selecting a stack
 * is how the Automation API addresses it (`pulumi stack select`), which moves the project's
 * current stack; the one the admin had selected is selected again at the end.
 */
export async function previewFleet(options: FleetOptions): Promise<StackOutcome[]> {
    const workspace = await LocalWorkspace.create({ workDir: options.workDir, pulumiCommand: options.pulumiCommand });
    const listed = await workspace.listStacks();
    const names = options.stacks ?? listed.map((s) => s.name);
    try {
        return await boundedMap(names, options.concurrency, async (name) => {
            const outcome = await previewOne(workspace, name, options.timeoutSeconds);
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
