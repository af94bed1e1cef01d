/**
 * The Node.js SDK reads a stack trace for every promise it makes: `debuggablePromise`
 * (pulumi/pulumi sdk/nodejs/runtime/debuggable.ts) stores `new Error().stack` on the promise for
 * its promise-leak report, which it prints only when PULUMI_DEBUG_PROMISE_LEAKS is set. The read
 * is eager, so V8 formats every one of those stacks through `Error.prepareStackTrace`, and under the
 * SDK's ts-node registration that is source-map-support's, which maps each frame to its TypeScript
 * line. In a no-change preview of bench:real's 10-ClusterBundle stack that mapping was about 1 s of
 * the program process's 8 s of CPU (docs/performance.md, "The SDK's per-promise stacks").
 *
 * So, unless PULUMI_DEBUG_PROMISE_LEAKS asks for the report, those captures get V8's own
 * unmapped format, and only their first frame (`debuggablePromise` itself): the stored stack's one
 * reader is `promiseDebugString`, which the leak report calls only with that variable set, and
 * formatting every frame V8 collects (`Error.stackTraceLimit`: 10 in the program, 100 under
 * jest), even unmapped, was still 7 s of the 56 s of CPU the operator test folder took
 * (`--cpu-prof`; docs/performance.md). Every other stack keeps the installed formatter: errors
 * the program reports, and the SDK's per-resource capture (`Resource.callsites` in
 * sdk/nodejs/resource.ts), whose first frame becomes the resource's source position in state and
 * must stay mapped.
 */

/** The SDK function whose per-promise captures are formatted cheaply. */
export const SDK_PROMISE_CAPTURE = "debuggablePromise";

/** `Error.prepareStackTrace`'s shape. */
export type StackFormatter = (error: Error, frames: NodeJS.CallSite[]) => unknown;

/** The format V8 gives a stack when no formatter is installed: the error's string, then a line per frame. */
export function v8StackFormat(error: Error, frames: readonly NodeJS.CallSite[]): string {
    return `${Error.prototype.toString.call(error)}${frames.map((frame) => `\n    at ${String(frame)}`).join("")}`;
}

/** Whether a capture is the one `debuggablePromise` of @pulumi/pulumi takes for a promise it makes. */
export function isSdkPromiseCapture(frames: readonly NodeJS.CallSite[]): boolean {
    const top = frames[0];
    return (
        top !== undefined &&
        top.getFunctionName() === SDK_PROMISE_CAPTURE &&
        /[\\/]node_modules[\\/]@pulumi[\\/]pulumi[\\/]/.test(top.getFileName() ?? "")
    );
}

const WRAPPED = Symbol("cheap SDK promise captures");

/** `formatter` for every stack but the SDK's per-promise captures, which get V8's format of their first frame. */
export function withCheapPromiseCaptures(formatter: StackFormatter): StackFormatter {
    if (WRAPPED in formatter) {
        return formatter;
    }
    const wrapped: StackFormatter = (error, frames) =>
        isSdkPromiseCapture(frames) ? v8StackFormat(error, frames.slice(0, 1)) : formatter(error, frames);
    return Object.assign(wrapped, { [WRAPPED]: true });
}

/**
 * Wraps the installed `Error.prepareStackTrace` with {@link withCheapPromiseCaptures}. Nothing to
 * do with no formatter installed (V8's own format is already the cheap one) or with
 * PULUMI_DEBUG_PROMISE_LEAKS set (the leak report then shows mapped stacks, as the SDK prints
 * them). Called once, when the program loads, after the SDK has registered ts-node.
 */
export function cheapenSdkPromiseCaptures(env: NodeJS.ProcessEnv = process.env): void {
    const installed = Error.prepareStackTrace as StackFormatter | undefined;
    if (installed === undefined || env.PULUMI_DEBUG_PROMISE_LEAKS) {
        return;
    }
    Error.prepareStackTrace = withCheapPromiseCaptures(installed);
}
