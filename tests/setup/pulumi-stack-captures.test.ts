import * as fs from "node:fs";
import { suiteStackFormatter } from "./pulumi-stack-captures";

/** Internal to the SDK (no declaration): the wrapper that captures a stack for each promise. */
const { debuggablePromise } = require("@pulumi/pulumi/runtime/debuggable") as {
    debuggablePromise<T>(promise: Promise<T>, context: string): Promise<T>;
};

/** The `line:column` of this file's frame in a stack. */
function positionInThisFile(stack: string | undefined): string | undefined {
    return /pulumi-stack-captures\.test\.ts:(\d+:\d+)/.exec(stack ?? "")?.[1];
}

/** Where `marker` starts in this TypeScript file, as `line:column` (1-based, as stacks count). */
function sourcePosition(marker: string): string {
    const lines = fs.readFileSync(__filename, "utf8").split("\n");
    const line = lines.findIndex((text) => text.includes(marker) && !text.includes("sourcePosition("));
    return `${line + 1}:${lines[line].indexOf(marker) + 1}`;
}

// The type annotations sit before the calls on purpose: swc drops them, so a call's column in the
// transpiled file differs from its column here, and only a mapped stack names this file's column.
describe("stack traces under jest (tests/setup/pulumi-stack-captures.ts)", () => {
    test("GIVEN an error made in a test WHEN its stack is read THEN it names the TypeScript position (jest's source map still applies)", () => {
        const error: Error | undefined = new Error("made here");
        expect(positionInThisFile(error?.stack)).toBe(sourcePosition('new Error("made here")'));
    });

    test("GIVEN a promise the Pulumi SDK wraps WHEN the stack it captured is read THEN it is V8's own, unmapped: a position in the transpiled file", async () => {
        // The setup's own formatter: a file of the same part that loaded the program (index.ts) has
        // wrapped it with the program's, which keeps only the first frame of these captures
        // (components/composition/promise-stacks.ts, tested in tests/composition/).
        const installed = Error.prepareStackTrace;
        Error.prepareStackTrace = suiteStackFormatter;
        const promise = Promise.resolve();
        let wrapped: Promise<void> | undefined;
        try {
            wrapped = debuggablePromise(promise, "test");
        } finally {
            Error.prepareStackTrace = installed;
        }
        const position = positionInThisFile((promise as unknown as { _debugStackTrace: string })._debugStackTrace);
        // A mapped frame names the call here: where the callee starts, or its argument list.
        const mapped = [sourcePosition('debuggablePromise(promise, "test")'), sourcePosition('(promise, "test")')];
        expect(position).toMatch(/^\d+:\d+$/);
        expect(mapped).not.toContain(position);
        await wrapped;
    });
});
