/**
 * The Pulumi SDK reads a stack trace for every promise it makes (`debuggablePromise`,
 * pulumi/pulumi sdk/nodejs/runtime/debuggable.ts) and an unbounded one for every resource it
 * constructs (`Resource.callsites` in sdk/nodejs/resource.ts, for the source position the engine
 * shows). Under jest each of those goes through jest's source-map formatter, which clones and maps
 * every frame: in a render that was about 40 % of the time. Under the mocks nothing reads those
 * stacks (the promise-leak report is printed only with PULUMI_DEBUG_PROMISE_LEAKS set, and the mock
 * monitor ignores source positions), so these captures get V8's own, unmapped format. Every other
 * error, a failing test's included, keeps jest's mapped stack. (The program itself does the same
 * for the per-promise captures alone, components/composition/promise-stacks.ts, whose V8 format
 * this uses.)
 */
import { v8StackFormat } from "../../components/composition/promise-stacks";

/** A capture the SDK takes for itself: an empty `Error` made inside @pulumi/pulumi. */
function isPulumiCapture(error: Error, frames: NodeJS.CallSite[]): boolean {
    return error.message === "" && error.name === "Error" && (frames[0]?.getFileName() ?? "").includes("/node_modules/@pulumi/pulumi/");
}

// Jest installs its formatter on the worker's own Error (jest-runner testWorker.js), which formats
// errors made in the test's context only while that context's Error has none. setTimeout is the
// worker's own function (jest-environment-node copies it in), so its Function constructor reaches
// the worker's Error.
const workerError = (setTimeout as unknown as { constructor: FunctionConstructor }).constructor("return Error")() as ErrorConstructor;
/** The formatter installed here (exported for its test, which may run after the program has wrapped it). */
export function suiteStackFormatter(error: Error, frames: NodeJS.CallSite[]): unknown {
    return isPulumiCapture(error, frames) ? v8StackFormat(error, frames) : (workerError.prepareStackTrace ?? v8StackFormat)(error, frames);
}

if (workerError !== Error) {
    Error.prepareStackTrace = suiteStackFormatter;
}
