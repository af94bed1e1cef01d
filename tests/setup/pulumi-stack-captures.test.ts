import * as pulumi from "@pulumi/pulumi";
import { sdkCaptures } from "./pulumi-stack-captures";

/** Internal to the SDK (no declaration): the wrapper that captures a stack for each promise. */
const debuggable = require("@pulumi/pulumi/runtime/debuggable") as {
    debuggablePromise<T>(promise: Promise<T>, context: string): Promise<T>;
};
type Tracked = Promise<number> & { _debugStackTrace?: string; _debugCtx?: string };

/** The `line:column` of this file's frame in a stack. */
function positionInThisFile(stack: string | undefined): string | undefined {
    return /pulumi-stack-captures\.test\.ts:(\d+:\d+)/.exec(stack ?? "")?.[1];
}

describe("the SDK's stack captures under jest (tests/setup/pulumi-stack-captures.ts)", () => {
    test("GIVEN an error made in a test WHEN its stack is read THEN it is jest's mapped one and names this file", () => {
        const stack = new Error("made here").stack;
        expect(positionInThisFile(stack)).toMatch(/^\d+:\d+$/);
        expect(stack?.split("\n").length).toBeGreaterThan(2);
    });

    test("GIVEN a promise the SDK tracks WHEN the stack it recorded is read THEN it holds no frame, the promise and its context are the SDK's, and the stack limit is restored", async () => {
        const limit = Error.stackTraceLimit;
        const promise = Promise.resolve(7) as Tracked;

        const tracked = debuggable.debuggablePromise(promise, "a test's promise");

        // The error's line alone ("Error", or "Error: " as jest's formatter writes an empty message).
        expect(promise._debugStackTrace).toMatch(/^Error(: )?$/);
        expect(promise._debugCtx).toBe("a test's promise");
        expect(Error.stackTraceLimit).toBe(limit);
        expect(debuggable.debuggablePromise).not.toBe(sdkCaptures.debuggablePromise);
        await expect(tracked).resolves.toBe(7);
    });

    test("GIVEN the SDK's own debuggablePromise (sdkCaptures) WHEN it tracks a promise THEN it records a real stack naming this file", () => {
        const promise = Promise.resolve(1) as Tracked;

        void sdkCaptures.debuggablePromise(promise, "the SDK's own");

        expect(positionInThisFile(promise._debugStackTrace)).toMatch(/^\d+:\d+$/);
    });

    test("GIVEN a resource constructed under the mocks WHEN the SDK asks for its callsites THEN there are none, while the SDK's own callsites (sdkCaptures) finds this file", () => {
        const installed = (pulumi.Resource as unknown as { callsites(): unknown[] }).callsites;

        const own = sdkCaptures.callsites() as { file?: string }[];

        expect(installed()).toEqual([]);
        expect(own.some((frame) => frame.file?.endsWith("pulumi-stack-captures.test.ts"))).toBe(true);
    });
});
