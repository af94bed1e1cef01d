/**
 * The Pulumi SDK takes two stack captures of its own that nothing reads under the mocks:
 *
 * - `debuggablePromise` (pulumi/pulumi sdk/nodejs/runtime/debuggable.ts) stores `new Error().stack`
 *   on every promise it makes, for a leak report printed only with PULUMI_DEBUG_PROMISE_LEAKS set;
 * - `Resource.callsites` (sdk/nodejs/resource.ts) captures the whole stack (`stackTraceLimit`
 *   set to infinity) for every resource constructed, to send the engine a source position, which
 *   the mock monitor ignores.
 *
 * Under jest each capture collects up to 100 frames (jest-runner sets `Error.stackTraceLimit` to
 * 100) and formats them, and the promises' captures alone were a fifth of a render's CPU: the
 * operator folder took 44.6 s of CPU in one profile (`node --cpu-prof node_modules/jest/bin/jest.js
 * -i tests/operator.test.ts`), 8.7 s of it inside `debuggablePromise` and 1.7 s in `callsites`. So
 * here, unless PULUMI_DEBUG_PROMISE_LEAKS asks for the report, the promises' captures take no frame
 * and `Resource.callsites` answers that there are none (the SDK then sends no source position, as
 * it does when a stack has no usable frame). Every other stack, a failing test's included, keeps
 * jest's mapped format. The program itself formats the promises' captures cheaply
 * (components/composition/promise-stacks.ts); its tests read real captures through
 * {@link sdkCaptures}.
 */
import * as pulumi from "@pulumi/pulumi";

/** The SDK module that makes every promise it tracks (internal: no declaration, no `exports` map). */
const debuggable = require("@pulumi/pulumi/runtime/debuggable") as {
    debuggablePromise<T>(promise: Promise<T>, context: unknown): Promise<T>;
};
/** `Resource.callsites`, a static method the Resource constructor calls through the class. */
const resourceClass = pulumi.Resource as unknown as { callsites(): unknown[] };

/** On each replacement: the SDK's own function it stands for, so a second load of this module neither wraps twice nor loses it. */
const SDK_FUNCTION = Symbol.for("cluster-platform.tests.sdk-function");

function sdkFunctionOf<F extends object>(installed: F): F {
    return (installed as F & { [SDK_FUNCTION]?: F })[SDK_FUNCTION] ?? installed;
}

/** The SDK's own capturing functions, as @pulumi/pulumi defines them, for the tests that read real captures. */
export const sdkCaptures = {
    debuggablePromise: sdkFunctionOf(debuggable.debuggablePromise),
    callsites: sdkFunctionOf(resourceClass.callsites),
} as const;

if (!process.env.PULUMI_DEBUG_PROMISE_LEAKS) {
    const { debuggablePromise, callsites } = sdkCaptures;
    debuggable.debuggablePromise = Object.assign(
        <T>(promise: Promise<T>, context: unknown): Promise<T> => {
            const limit = Error.stackTraceLimit;
            Error.stackTraceLimit = 0;
            try {
                return debuggablePromise(promise, context);
            } finally {
                Error.stackTraceLimit = limit;
            }
        },
        { [SDK_FUNCTION]: debuggablePromise },
    );
    resourceClass.callsites = Object.assign((): unknown[] => [], { [SDK_FUNCTION]: callsites });
}
