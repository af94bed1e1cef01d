/**
 * `npm run fleet -- preview [stack...] [--cwd <project>] [--concurrency <n>] [--timeout <seconds>] [--json]`
 *
 * Previews every named stack (default: all stacks of the project in the current backend) with
 * refresh, in parallel, and prints one line per stack: in sync, drifted (which resources, which
 * properties) or failed (the reason's first line); `--json` prints the same as one document.
 * Exit 0 when all are in sync, 2 when any drifted (and none failed), 1 when any failed or has its
 * reconcile stalled, 130 when interrupted (Ctrl-C: the previews are cancelled, their process trees
 * ended, and the admin's current stack selected again before it exits).
 * The admin's installed `pulumi` runs the previews (never npm's launcher in node_modules/.bin),
 * with its usual backend login and credentials. Default concurrency: one per CPU, at most one per
 * GB of free memory (fleet.ts defaultConcurrency).
 */
import { parseArgs } from "node:util";
import { defaultConcurrency, previewFleet } from "./fleet";
import { fleetDocument, formatReportLines } from "./report";

export const DEFAULT_TIMEOUT_SECONDS = 900;
const USAGE = "usage: npm run fleet -- preview [stack...] [--cwd <project>] [--concurrency <n>] [--timeout <seconds>] [--json]";

function positiveInteger(text: string | undefined, fallback: number, flag: string): number {
    if (text === undefined) {
        return fallback;
    }
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) {
        throw new Error(`${flag} ${JSON.stringify(text)} must be a positive integer`);
    }
    return value;
}

export async function main(argv: string[]): Promise<number> {
    let parsed;
    let concurrency: number;
    let timeoutSeconds: number;
    try {
        parsed = parseArgs({
            args: argv,
            allowPositionals: true,
            options: { cwd: { type: "string" }, concurrency: { type: "string" }, timeout: { type: "string" }, json: { type: "boolean" } },
        });
        concurrency = positiveInteger(parsed.values.concurrency, defaultConcurrency(), "--concurrency");
        timeoutSeconds = positiveInteger(parsed.values.timeout, DEFAULT_TIMEOUT_SECONDS, "--timeout");
    } catch (error) {
        process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
        return 1;
    }
    const [command, ...stacks] = parsed.positionals;
    if (command !== "preview") {
        process.stderr.write(`${USAGE}\n`);
        return 1;
    }
    let outcomes;
    // Ctrl-C (and a polite kill): cancel the previews, select the admin's stack again, then exit.
    // The previews run in process groups of their own, so the terminal's SIGINT reaches only this.
    const interrupt = new AbortController();
    const onSignal = () => interrupt.abort();
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
        outcomes = await previewFleet({
            workDir: parsed.values.cwd ?? process.cwd(),
            stacks: stacks.length > 0 ? stacks : undefined,
            concurrency,
            timeoutSeconds,
            signal: interrupt.signal,
        });
    } catch (error) {
        process.stderr.write(`fleet: ${String((error as Error).message ?? error).split("\n")[0]}\n`);
        return 1;
    } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
    }
    if (interrupt.signal.aborted) {
        process.stderr.write("fleet: interrupted: previews cancelled, the current stack selected again\n");
        return 130;
    }
    const document = fleetDocument(outcomes);
    process.stdout.write(parsed.values.json ? `${JSON.stringify(document, null, 2)}\n` : `${formatReportLines(outcomes).join("\n")}\n`);
    return document.exitCode;
}

if (require.main === module) {
    main(process.argv.slice(2)).then(
        (code) => process.exit(code),
        (error: unknown) => {
            process.stderr.write(`${String(error)}\n`);
            process.exit(1);
        },
    );
}
