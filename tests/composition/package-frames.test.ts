/**
 * Installed packages' stack frames keep their real JavaScript paths (components/composition/package-frames.ts).
 * The pure wrapper is tested with a stand-in formatter; what it is for is tested on the real
 * thing: an error thrown by the installed @pulumi/pulumi under source-map-support, as the SDK's
 * ts-node installs it, whose frames are checked against the file system, and inspected as the
 * SDK's uncaught-error handler inspects it, by this machine's Node.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { isPackageFrame, unmapPackageFrames, withPackageFramesUnmapped } from "../../components/composition/package-frames";
import { StackFormatter } from "../../components/composition/promise-stacks";
import { ROOT } from "../helpers/root";
import { tsxCommand } from "../helpers/tsx";

/** A call site with the given function and file, printed as V8 prints one. */
const site = (fn: string, file: string | null): NodeJS.CallSite =>
    ({
        getFunctionName: () => fn,
        getFileName: () => file,
        toString: () => `${fn} (${file}:1:2)`,
    }) as unknown as NodeJS.CallSite;

/** A stand-in for source-map-support: one `    at` line per frame, marked as mapped; records the frames it saw. */
function mappingFormatter(): { formatter: StackFormatter; seen: string[][] } {
    const seen: string[][] = [];
    const formatter: StackFormatter = (error, frames) => {
        seen.push(frames.map((frame) => String(frame.getFunctionName())));
        return `${error.name}: ${error.message}${frames.map((frame) => `\n    at ${frame.getFunctionName()} (MAPPED.ts:9:9)`).join("")}`;
    };
    return { formatter, seen };
}

const SDK = "/work/project/node_modules/@pulumi/pulumi/resource.js";

describe("withPackageFramesUnmapped", () => {
    it.each([
        ["a package file", SDK, true],
        ["a Windows package file", "C:\\p\\node_modules\\@pulumi\\pulumi\\config.js", true],
        ["the program's file", "/work/project/components/config/schema.ts", false],
        ["a name that only contains node_modules", "/work/my_node_modules_notes/x.ts", false],
        ["no file (native)", null, false],
    ])("GIVEN %s THEN it is a package frame: %s", (_, file, expected) => {
        expect(isPackageFrame(site("f", file))).toBe(expected);
    });

    it("GIVEN a two-line message and frames of the program and of packages, mixed WHEN formatted THEN the package frames are V8's lines in their places, the program's are the formatter's, which never saw a package frame", () => {
        const { formatter, seen } = mappingFormatter();
        const error = new Error("invalid configuration: 1 problem\n  - cluster-platform:cluster.name: bad");
        const frames = [
            site("requireImpl", "/work/project/node_modules/@pulumi/pulumi/config.js"),
            site("readStackConfig", "/work/project/components/composition/preflight.ts"),
            site("runProgram", "/work/project/node_modules/@pulumi/pulumi/cmd/run/run.js"),
            site("clusterPlatform", "/work/project/index.ts"),
        ];

        const stack = withPackageFramesUnmapped(formatter)(error, frames);

        expect(stack).toBe(
            [
                "Error: invalid configuration: 1 problem",
                "  - cluster-platform:cluster.name: bad",
                "    at requireImpl (/work/project/node_modules/@pulumi/pulumi/config.js:1:2)",
                "    at readStackConfig (MAPPED.ts:9:9)",
                "    at runProgram (/work/project/node_modules/@pulumi/pulumi/cmd/run/run.js:1:2)",
                "    at clusterPlatform (MAPPED.ts:9:9)",
            ].join("\n"),
        );
        expect(seen).toEqual([["readStackConfig", "clusterPlatform"]]);
    });

    it("GIVEN only package frames WHEN formatted THEN the error's text and V8's lines", () => {
        const { formatter } = mappingFormatter();

        expect(withPackageFramesUnmapped(formatter)(new Error("boom"), [site("a", SDK), site("b", SDK)])).toBe(
            `Error: boom\n    at a (${SDK}:1:2)\n    at b (${SDK}:1:2)`,
        );
    });

    it("GIVEN no package frame WHEN formatted THEN the formatter's own output, from one call with every frame", () => {
        const { formatter, seen } = mappingFormatter();
        const frames = [site("a", "/work/project/a.ts"), site("b", "/work/project/b.ts")];
        const unwrapped = formatter(new Error("boom"), frames);
        seen.length = 0;

        expect(withPackageFramesUnmapped(formatter)(new Error("boom"), frames)).toBe(unwrapped);
        expect(seen).toEqual([["a", "b"]]);
    });

    it("GIVEN a formatter whose output is not a line per frame WHEN a package frame is formatted THEN the formatter formats the whole stack, as without the wrapper", () => {
        const seen: number[] = [];
        const formatter: StackFormatter = (error, frames) => {
            seen.push(frames.length);
            return `SUMMARY ${error.message} (${frames.length} frames)`;
        };

        expect(withPackageFramesUnmapped(formatter)(new Error("boom"), [site("a", SDK), site("b", "/work/project/b.ts")])).toBe(
            "SUMMARY boom (2 frames)",
        );
        expect(seen).toEqual([1, 2]);
    });

    it("GIVEN the wrapper WHEN wrapped again (a second module registry) THEN it is the same function", () => {
        const once = withPackageFramesUnmapped(mappingFormatter().formatter);

        expect(withPackageFramesUnmapped(once)).toBe(once);
    });

    it("GIVEN no formatter installed WHEN unmapPackageFrames runs THEN none is installed", () => {
        const original = Error.prepareStackTrace;
        try {
            (Error as { prepareStackTrace?: StackFormatter }).prepareStackTrace = undefined;
            unmapPackageFrames();
            expect(Error.prepareStackTrace).toBeUndefined();
        } finally {
            Error.prepareStackTrace = original;
        }
    });
});

/** The files of a stack's frames that lie under node_modules. */
function packageFiles(stack: string): string[] {
    return stack
        .split("\n")
        .map((line) => /^ {4}at (?:.* \()?(\/[^()]+?):\d+:\d+\)?$/.exec(line)?.[1])
        .filter((file): file is string => file !== undefined && file.includes("/node_modules/"));
}

/** Runs the fixture child: an error thrown inside @pulumi/pulumi, formatted as `mode` says. */
function sdkErrorStack(mode: "program" | "plain"): { stack: string; inspected?: string } {
    const [command, args] = tsxCommand(path.join(__dirname, "fixtures", "sdk-error-stack.ts"), [mode]);
    // The heap bound ends a return of the inspect loop in a few seconds (SIGABRT) instead of 30 or more.
    const run = spawnSync(command, ["--max-old-space-size=128", ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({ status: 0, signal: null, stderr: "" });
    return JSON.parse(run.stdout) as { stack: string; inspected?: string };
}

describe("an error thrown by the installed @pulumi/pulumi, as the program formats it", () => {
    it("GIVEN source-map-support alone (the SDK's ts-node) WHEN the stack is read THEN some SDK frame names a file that does not exist: the SDK's source maps point one directory too high", () => {
        const { stack } = sdkErrorStack("plain");
        const files = packageFiles(stack);

        expect(files.length).toBeGreaterThan(0);
        expect(files.filter((file) => !fs.existsSync(file))).toEqual(
            expect.arrayContaining([expect.stringMatching(/[\\/]node_modules[\\/]@pulumi[\\/]config\.ts$/)]),
        );
    });

    it("GIVEN the program's formatter installed WHEN the stack is read and inspected in colour, as the SDK's uncaught-error handler does THEN every package frame names a file that exists, and Node's inspect returns the message", () => {
        const { stack, inspected } = sdkErrorStack("program");
        const files = packageFiles(stack);

        expect(files).toEqual(expect.arrayContaining([expect.stringMatching(/[\\/]node_modules[\\/]@pulumi[\\/]pulumi[\\/]config\.js$/)]));
        expect(files.filter((file) => !fs.existsSync(file))).toEqual([]);
        expect(inspected).toContain("Missing required configuration variable 'cluster-platform:missing-key'");
    });
});
