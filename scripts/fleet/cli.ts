/**
 * `npm run fleet -- preview [stack...] [--cwd <project>] [--concurrency <n>] [--timeout <seconds>] [--json]`
 *
 * Previews every named stack (default: all stacks of the project in the current backend) with
 * refresh, in parallel, and prints one line per stack: in sync, drifted (which resources, which
 * properties) or failed (the reason's first line); `--json` prints the same as one document.
 * Exit 0 when all are in sync, 2 when any drifted (and none failed), 1 when any failed.
 * The `pulumi` CLI on PATH runs the previews, with its usual backend login and credentials.
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
    try {
        outcomes = await previewFleet({
            workDir: parsed.values.cwd ?? process.cwd(),
            stacks: stacks.length > 0 ? stacks : undefined,
            concurrency,
            timeoutSeconds,
        });
    } catch (error) {
        process.stderr.write(`fleet: ${String((error as Error).message ?? error).split("\n")[0]}\n`);
        return 1;
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
