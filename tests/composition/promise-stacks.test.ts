/**
 * The SDK's per-promise stack captures get V8's format of their first frame; every other stack
 * keeps the installed formatter (components/composition/promise-stacks.ts). The captures are the
 * SDK's own, taken by the installed @pulumi/pulumi (its `debuggablePromise` and
 * `Resource.callsites`), so an SDK that renames or moves them fails here rather than silently
 * paying the mapping again.
 */
import {
    cheapenSdkPromiseCaptures,
    isSdkPromiseCapture,
    StackFormatter,
    v8StackFormat,
    withCheapPromiseCaptures,
} from "../../components/composition/promise-stacks";
// The SDK's own capturing functions: under jest the installed ones take no stack (the setup's file says why).
import { sdkCaptures } from "../setup/pulumi-stack-captures";

/** A stand-in for source-map-support's formatter: marks what it formats, and counts the frames it saw. */
function markingFormatter(): { formatter: StackFormatter; formatted: string[] } {
    const formatted: string[] = [];
    const formatter: StackFormatter = (error, frames) => {
        formatted.push(String(frames[0]?.getFunctionName()));
        return `MAPPED ${error.message}`;
    };
    return { formatter, formatted };
}

/** The stack `debuggablePromise` records on the promise it is given to track. */
function sdkPromiseStack(): string {
    const tracked = Promise.resolve(1) as Promise<number> & { _debugStackTrace?: string };
    void sdkCaptures.debuggablePromise(tracked, "promise-stacks test");
    return String(tracked._debugStackTrace);
}

describe("the SDK's per-promise stack captures", () => {
    const original = Error.prepareStackTrace;
    afterEach(() => {
        Error.prepareStackTrace = original;
    });

    it("GIVEN a mapping formatter installed WHEN the SDK makes a promise after cheapenSdkPromiseCaptures THEN its stack is V8's format of its first frame only and the formatter never sees it", () => {
        const { formatter, formatted } = markingFormatter();
        Error.prepareStackTrace = formatter;
        cheapenSdkPromiseCaptures({});

        const stack = sdkPromiseStack();

        expect(stack.split("\n")).toHaveLength(2);
        expect(stack.split("\n")[0]).toBe("Error");
        expect(stack.split("\n")[1]).toMatch(
            /^ {4}at (Object\.)?debuggablePromise \(.*[\\/]node_modules[\\/]@pulumi[\\/]pulumi[\\/]runtime[\\/]debuggable\.js:\d+:\d+\)$/,
        );
        expect(formatted).toEqual([]);
    });

    it("GIVEN the same WHEN a program error's stack or the SDK's per-resource capture is read THEN the installed formatter formats it", () => {
        const { formatter, formatted } = markingFormatter();
        Error.prepareStackTrace = formatter;
        cheapenSdkPromiseCaptures({});

        function reportProblem(): string | undefined {
            return new Error("bad config").stack;
        }
        const programError = reportProblem();
        // The capture whose first frame becomes a resource's source position in state.
        sdkCaptures.callsites();

        expect(programError).toBe("MAPPED bad config");
        expect(formatted).toEqual(["reportProblem", "callsites"]);
    });

    it("GIVEN PULUMI_DEBUG_PROMISE_LEAKS set WHEN cheapenSdkPromiseCaptures runs THEN the installed formatter stays, and the leak report's stacks are mapped", () => {
        const { formatter, formatted } = markingFormatter();
        Error.prepareStackTrace = formatter;

        cheapenSdkPromiseCaptures({ PULUMI_DEBUG_PROMISE_LEAKS: "true" });

        expect(Error.prepareStackTrace).toBe(formatter);
        expect(sdkPromiseStack()).toBe("MAPPED ");
        expect(formatted).toEqual(["debuggablePromise"]);
    });

    it("GIVEN no formatter installed WHEN cheapenSdkPromiseCaptures runs THEN none is installed (V8's own format is the cheap one)", () => {
        (Error as { prepareStackTrace?: StackFormatter }).prepareStackTrace = undefined;

        cheapenSdkPromiseCaptures({});

        expect(Error.prepareStackTrace).toBeUndefined();
    });

    it("GIVEN the wrapper installed WHEN the program module loads again (a second registry) THEN it is not wrapped twice", () => {
        const { formatter } = markingFormatter();
        const once = withCheapPromiseCaptures(formatter);

        expect(withCheapPromiseCaptures(once)).toBe(once);
    });
});

describe("isSdkPromiseCapture and v8StackFormat", () => {
    /** A call site with the given function and file, printed as V8 prints one. */
    const site = (fn: string | null, file: string | null): NodeJS.CallSite =>
        ({
            getFunctionName: () => fn,
            getFileName: () => file,
            toString: () => `${fn ?? "<anonymous>"} (${file}:1:2)`,
        }) as unknown as NodeJS.CallSite;
    const sdk = "/work/project/node_modules/@pulumi/pulumi/runtime/debuggable.js";

    it.each([
        ["debuggablePromise in @pulumi/pulumi", true, [site("debuggablePromise", sdk)]],
        ["a Windows path", true, [site("debuggablePromise", "C:\\p\\node_modules\\@pulumi\\pulumi\\runtime\\debuggable.js")]],
        ["a function of that name elsewhere", false, [site("debuggablePromise", "/work/project/index.ts")]],
        ["another SDK function", false, [site("callsites", "/work/project/node_modules/@pulumi/pulumi/resource.js")]],
        ["another package named like it", false, [site("debuggablePromise", "/work/node_modules/@pulumi/pulumi-extra/x.js")]],
        ["no frames", false, []],
        ["an anonymous top frame", false, [site(null, sdk)]],
    ])("GIVEN %s THEN it is the SDK's promise capture: %s", (_, expected, frames) => {
        expect(isSdkPromiseCapture(frames)).toBe(expected);
    });

    it("GIVEN an error and frames WHEN formatted THEN it is V8's layout: the error's string, then four spaces and `at` per frame", () => {
        const error = Object.assign(new Error("boom"), { name: "RunError" });

        expect(v8StackFormat(error, [site("a", "/x.js"), site(null, "/y.js")])).toBe(
            "RunError: boom\n    at a (/x.js:1:2)\n    at <anonymous> (/y.js:1:2)",
        );
        expect(v8StackFormat(new Error(""), [])).toBe("Error");
    });
});
