import * as fs from "node:fs";
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

/** Where `marker` starts in this TypeScript file, as `line:column` (1-based, as stacks count). */
function sourcePosition(marker: string): string {
    const lines = fs.readFileSync(__filename, "utf8").split("\n");
    const line = lines.findIndex((text) => text.includes(marker) && !text.includes("sourcePosition("));
    return `${line + 1}:${lines[line].indexOf(marker) + 1}`;
}

describe("the SDK's stack captures under jest (tests/setup/pulumi-stack-captures.ts)", () => {
    // The type annotation sits before the call on purpose: swc drops it, so the call's column in the
    // transpiled file differs from its column here, and only a mapped stack names this file's column.
    test("GIVEN an error made in a test WHEN its stack is read THEN it names the TypeScript position (jest's source map still applies)", () => {
        const error: Error | undefined = new Error("made here");
        expect(positionInThisFile(error?.stack)).toBe(sourcePosition('new Error("made here")'));
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
