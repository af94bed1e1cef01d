/**
 * Stack frames of installed packages keep their real JavaScript paths; only the program's own
 * frames are mapped to TypeScript.
 *
 * Why: @pulumi/pulumi ships source maps whose `sources` point one directory too high
 * (`resource.js.map` names `../resource.ts`), so the SDK's ts-node registration maps every SDK
 * frame to a file that does not exist, `node_modules/@pulumi/resource.ts`: a scoped package
 * directory followed by a file name. Node 20.20's `util.inspect(error, { colors: true })` loops on
 * such a frame, growing a string until it throws "Invalid string length" or the heap runs out
 * (`markNodeModules`, nodejs/node#64011, fixed by nodejs/node#64022 after Node 20's end of life).
 * The SDK inspects every error the program fails with that way, for its trace span
 * (cmd/run/run.js `uncaughtHandler` → error.js `defaultErrorMessage`), even a RunError whose
 * message alone is shown. On the real CLI a stack config with ten mistakes took 30.5 s to report
 * before this and 4.3 s after; with a 256 MB Node heap the program crashed and the CLI showed no
 * problem at all (docs/performance.md, "A config error's 30 seconds").
 *
 * A package frame in V8's own format names the file that runs, so the loop cannot start. The
 * program's frames (its errors, and the first frames of `Resource.callsites`, a resource's source
 * position) stay mapped by the installed formatter. Pure but for `unmapPackageFrames`, which
 * installs it.
 */
import type { StackFormatter } from "./promise-stacks";

/** Whether a frame runs an installed package's code: its file lies under a node_modules directory. */
export function isPackageFrame(frame: NodeJS.CallSite): boolean {
    return /[\\/]node_modules[\\/]/.test(frame.getFileName() ?? "");
}

const WRAPPED = Symbol("package frames unmapped");

/**
 * `formatter` for the frames outside node_modules only; the others get V8's line for them
 * (`    at <frame>`), in their place. A formatter whose output is not the error's text followed by
 * one `    at` line per frame it was given formats the whole stack as before.
 */
export function withPackageFramesUnmapped(formatter: StackFormatter): StackFormatter {
    if (WRAPPED in formatter) {
        return formatter;
    }
    const wrapped: StackFormatter = (error, frames) => {
        if (!frames.some(isPackageFrame)) {
            return formatter(error, frames);
        }
        const own = frames.filter((frame) => !isPackageFrame(frame));
        const formatted = formatter(error, own);
        const lines = typeof formatted === "string" ? formatted.split("\n") : [];
        const header = lines.length - own.length;
        if (header < 1 || !lines.slice(header).every((line) => line.startsWith("    at "))) {
            return formatter(error, frames);
        }
        let next = header;
        const framed = frames.map((frame) => (isPackageFrame(frame) ? `    at ${String(frame)}` : lines[next++]));
        return [...lines.slice(0, header), ...framed].join("\n");
    };
    return Object.assign(wrapped, { [WRAPPED]: true });
}

/**
 * Wraps the installed `Error.prepareStackTrace` with {@link withPackageFramesUnmapped}. Nothing to
 * do with no formatter installed: V8's own format maps nothing. Called once, when the program
 * loads, after the SDK has registered ts-node.
 */
export function unmapPackageFrames(): void {
    const installed = Error.prepareStackTrace as StackFormatter | undefined;
    if (installed !== undefined) {
        Error.prepareStackTrace = withPackageFramesUnmapped(installed);
    }
}
