/**
 * `npm run real:tools`: builds the real tier's tools from their Go modules, or reuses them.
 *
 * Each tool is cached under <cache>/tools/<name>-<key> (cacheKey: Go version, go.mod, go.sum,
 * the module's own mains, the recipe), so a warm run only links REAL_BIN. Prints one line per tool
 * with its version and time (`real:tools kubernetes-provider 4.25.0 reused (…)`), and last
 * `REAL_BIN=<dir>`: a directory of every executable the real tier runs, plus crds/ and kwok-stages/.
 *
 * Versions are the binaries' own answers (a version flag, or a provider's GetPluginInfo), asked
 * once per build and kept beside it (<cache>/versions/), and must be what the lockfile says
 * (toolchain.ts VERSION_RULES): a provider of another version than its SDK's fails the run, before
 * any stack could warn about it. The pins are compared with the lockfile before anything is built.
 * A missing Go, a failed step or a wrong version ends the run at once with one line naming the tool
 * and the step (whether or not CI=true: never a silent skip).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
    cacheKey,
    cacheRoot,
    GO_COMPILE_FLAGS,
    type GoModJson,
    goModOf,
    type ModuleFiles,
    releaseGraphProblems,
    REPO_ROOT,
    requiredVersion,
    TOOLS_ROOT,
    type ToolSpec,
    toolSpecs,
    type VersionCheck,
    versionCheckProblems,
    versionIn,
    versionProblems,
} from "./toolchain";

class StepFailure extends Error {
    constructor(
        readonly tool: string,
        readonly step: string,
        detail: string,
    ) {
        super(`real:tools: ${tool}: ${step} failed: ${detail}`);
    }
}

function run(tool: string, step: string, command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
    const result = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? process.env, encoding: "utf8", maxBuffer: 256 << 20 });
    if (result.error) {
        throw new StepFailure(tool, step, result.error.message);
    }
    if (result.status !== 0) {
        process.stderr.write(result.stdout + result.stderr);
        throw new StepFailure(tool, step, `${command} ${args.join(" ")} exited ${result.status}`);
    }
    return result.stdout;
}

function goVersion(): string {
    const result = spawnSync("go", ["env", "GOVERSION"], { encoding: "utf8" });
    if (result.error || result.status !== 0) {
        throw new StepFailure(
            "go",
            "find the Go toolchain",
            "go is not on PATH: install Go 1.26 (the go machines have it at /usr/local/go; elsewhere https://go.dev/dl) and put its bin on PATH",
        );
    }
    return result.stdout.trim();
}

/** The build environment: static binaries, no toolchain downloads, the committed go.sum only. */
function goEnv(): NodeJS.ProcessEnv {
    return { ...process.env, CGO_ENABLED: "0", GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly -buildvcs=false" };
}

/** releaseGraphProblems for one tool: the release's go.mod fetched (it alone, a few kB) and both read by `go mod edit -json`. */
function releaseGraphCheck(tool: string, module: string): string[] {
    const cwd = path.join(TOOLS_ROOT, tool);
    const version = requiredVersion(goModOf(tool), module);
    const step = `read ${module}@${version}'s go.mod`;
    const download = JSON.parse(run(tool, step, "go", ["mod", "download", "-json", `${module}@${version}`], { cwd, env: goEnv() })) as {
        GoMod: string;
    };
    const read = (file: string): GoModJson =>
        JSON.parse(run(tool, step, "go", ["mod", "edit", "-json", file], { cwd, env: goEnv() })) as GoModJson;
    return releaseGraphProblems(tool, { module, version }, read("go.mod"), read(download.GoMod));
}

function moduleDir(spec: ToolSpec, module: string): string {
    const cwd = path.join(TOOLS_ROOT, spec.dir);
    run(spec.name, `download ${module}`, "go", ["mod", "download", module], { cwd, env: goEnv() });
    return run(spec.name, `locate ${module}`, "go", ["list", "-m", "-f", "{{.Dir}}", module], { cwd, env: goEnv() }).trim();
}

function copyModuleFiles(spec: ToolSpec, files: ModuleFiles, target: string): void {
    const from = moduleDir(spec, files.module);
    const into = path.join(target, files.under ?? "");
    fs.mkdirSync(into, { recursive: true });
    for (const file of files.files) {
        const source = path.join(from, file);
        if (!fs.existsSync(source)) {
            throw new StepFailure(spec.name, `copy ${file}`, `${files.module} has no ${file}`);
        }
        const text = fs.readFileSync(source, "utf8");
        const out =
            files.schemaVersion && file.endsWith("schema.json")
                ? JSON.stringify({ ...JSON.parse(text), version: files.schemaVersion })
                : text;
        fs.writeFileSync(path.join(into, path.basename(file)), out, { mode: 0o644 });
    }
}

/**
 * How many packages `go build` compiles at once: the machine's CPUs (go's own default is GOMAXPROCS;
 * said here so that the cold-build figures in docs/real-tier.md name it).
 */
const BUILD_PARALLELISM = String(Math.max(1, os.availableParallelism()));

/**
 * Fetches, into the one module cache every tool shares, the modules the builds of `specs` will need
 * (`go list -deps` of their packages: exactly the modules a build reads, nothing compiled), two tools
 * at a time, while the first build compiles. A cold build otherwise downloads each tool's modules
 * (4.1 GB in all, about 400 s on the CI machine) between its compiles, with the CPUs idle. Errors are
 * left to the builds, which report them. Resolves when every fetch has ended.
 */
function prefetchModules(specs: readonly ToolSpec[]): { done: Promise<void>; stop: () => void } {
    const queue = specs.flatMap((spec) =>
        spec.builds.map((b) => ({
            cwd: path.join(TOOLS_ROOT, spec.dir),
            args: ["list", "-e", "-deps", ...(b.tags?.length ? ["-tags", b.tags.join(",")] : []), ...b.packages],
        })),
    );
    const running = new Set<ChildProcess>();
    const worker = async (): Promise<void> => {
        for (let next = queue.shift(); next; next = queue.shift()) {
            const { cwd, args } = next;
            await new Promise<void>((resolve) => {
                const child = spawn("go", args, { cwd, env: goEnv(), stdio: "ignore" });
                running.add(child);
                child.once("error", () => resolve());
                child.once("exit", () => {
                    running.delete(child);
                    resolve();
                });
            });
        }
    };
    return {
        done: Promise.all([worker(), worker()]).then(() => undefined),
        // A failed build ends the run: the fetches still queued or running end with it.
        stop: () => {
            queue.length = 0;
            running.forEach((child) => child.kill("SIGTERM"));
        },
    };
}

function build(spec: ToolSpec, out: string): void {
    const cwd = path.join(TOOLS_ROOT, spec.dir);
    for (const files of spec.moduleFiles ?? []) {
        copyModuleFiles(spec, files, files.into === "sources" ? cwd : out);
    }
    for (const b of spec.builds) {
        const target = b.output ? path.join(out, b.output) : `${out}${path.sep}`;
        const args = ["build", "-p", BUILD_PARALLELISM, "-trimpath", ...GO_COMPILE_FLAGS, "-o", target, "-ldflags", b.ldflags.join(" ")];
        if (b.tags?.length) {
            args.push("-tags", b.tags.join(","));
        }
        run(spec.name, `go build ${b.packages.join(" ")}`, "go", [...args, ...b.packages], { cwd, env: goEnv() });
        if (b.tests?.length) {
            run(
                spec.name,
                `go test ${b.tests.join(" ")}`,
                "go",
                ["test", "-count=1", "-p", BUILD_PARALLELISM, "-trimpath", ...GO_COMPILE_FLAGS, ...b.tests],
                {
                    cwd,
                    env: goEnv(),
                },
            );
        }
    }
    for (const [name, text] of Object.entries(spec.scripts ?? {})) {
        fs.writeFileSync(path.join(out, name), text, { mode: 0o755 });
    }
    for (const binary of spec.binaries) {
        if (!fs.existsSync(path.join(out, binary))) {
            throw new StepFailure(spec.name, "check outputs", `${binary} was not produced`);
        }
    }
}

/** Where the build of a tool whose inputs hash to `key` (cacheKey) is kept; complete once it holds `.complete`. */
function toolDir(spec: ToolSpec, root: string, key: string): string {
    return path.join(root, "tools", `${spec.name}-${key}`);
}

/** The tools of `specs` with no complete build in the cache for their current inputs. */
function unbuilt(specs: readonly ToolSpec[], root: string, go: string): ToolSpec[] {
    return specs.filter((spec) => !fs.existsSync(path.join(toolDir(spec, root, cacheKey(spec, go)), ".complete")));
}

/** Builds (or reuses) one tool; returns its output directory and whether it was built now. */
function ensureTool(spec: ToolSpec, root: string, go: string): { out: string; seconds?: number } {
    const key = cacheKey(spec, go);
    const out = toolDir(spec, root, key);
    const started = process.hrtime.bigint();
    if (fs.existsSync(path.join(out, ".complete"))) {
        return { out };
    }
    const partial = `${out}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    console.log(
        `real:tools ${spec.name} building (no cached build for these inputs; cold, the whole toolchain takes about 40 min on 2 cores)`,
    );
    build(spec, partial);
    fs.writeFileSync(path.join(partial, ".complete"), `${key}\n`);
    fs.rmSync(out, { recursive: true, force: true });
    fs.renameSync(partial, out);
    return { out, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

/** A provider's version as it tells the engine: started in attach mode (no engine address), asked GetPluginInfo. */
async function pluginInfoVersion(binary: string): Promise<string> {
    // The program's own gRPC stack and the SDK's generated client, resolved from the checkout.
    const from = { paths: [REPO_ROOT] };
    const grpc = require(require.resolve("@grpc/grpc-js", from)) as typeof import("@grpc/grpc-js");
    const { ResourceProviderClient } = require(require.resolve("@pulumi/pulumi/proto/provider_grpc_pb", from));
    const { Empty } = require(require.resolve("google-protobuf/google/protobuf/empty_pb", from));
    const child = spawn(binary, [], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    try {
        const port = await new Promise<string>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no port within 60 s; stderr: ${stderr.trim()}`)), 60_000);
            child.stdout.once("data", (d: Buffer) => {
                clearTimeout(timer);
                resolve(d.toString("utf8").trim());
            });
            child.once("exit", (code) => {
                clearTimeout(timer);
                reject(new Error(`exited ${code} before serving: ${stderr.trim()}`));
            });
        });
        const client = new ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
        try {
            return await new Promise<string>((resolve, reject) =>
                client.getPluginInfo(new Empty(), (error: Error | null, info: { getVersion(): string }) =>
                    error ? reject(error) : resolve(info.getVersion()),
                ),
            );
        } finally {
            client.close();
        }
    } finally {
        if (child.exitCode === null && child.signalCode === null) {
            child.kill("SIGTERM");
        }
        await exited;
    }
}

async function askVersion(spec: ToolSpec, out: string, check: VersionCheck): Promise<string | undefined> {
    const binary = path.join(out, check.binary);
    if (check.ask === "GetPluginInfo") {
        try {
            return versionIn(await pluginInfoVersion(binary));
        } catch (error) {
            throw new StepFailure(spec.name, `ask ${check.binary} its version (GetPluginInfo)`, (error as Error).message);
        }
    }
    return versionIn(run(spec.name, `ask ${check.binary} its version`, binary, [...check.ask], { cwd: out }));
}

/**
 * The versions the tool's binaries report, asked once per build output and kept beside it, in
 * <cache>/versions/<tool>-<key>.json (the key pins every input, so the answers cannot change for
 * that output; outside the output directory, which REAL_BIN links entry by entry).
 */
async function reportedVersions(spec: ToolSpec, root: string, out: string): Promise<Record<string, string | undefined>> {
    const file = path.join(root, "versions", `${path.basename(out)}.json`);
    if (fs.existsSync(file)) {
        return JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, string | undefined>;
    }
    const reported: Record<string, string | undefined> = {};
    for (const check of spec.versions) {
        reported[check.binary] = await askVersion(spec, out, check);
    }
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(`${file}.partial`, `${JSON.stringify(reported, null, 2)}\n`);
    fs.renameSync(`${file}.partial`, file);
    return reported;
}

/** REAL_BIN: one directory of symlinks into the tools' outputs, named by their keys together. */
function linkBin(root: string, outputs: string[]): string {
    const bin = path.join(root, "bin", hashOf(outputs.map((o) => path.basename(o)).join("\n")));
    if (fs.existsSync(path.join(bin, ".complete"))) {
        return bin;
    }
    fs.rmSync(bin, { recursive: true, force: true });
    fs.mkdirSync(bin, { recursive: true });
    for (const out of outputs) {
        for (const entry of fs.readdirSync(out)) {
            if (entry === ".complete") {
                continue;
            }
            fs.symlinkSync(path.join(out, entry), path.join(bin, entry));
        }
    }
    fs.writeFileSync(path.join(bin, ".complete"), "");
    return bin;
}

function hashOf(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

export async function ensureTools(env: NodeJS.ProcessEnv = process.env): Promise<string> {
    const go = goVersion();
    const root = cacheRoot(env);
    const problems = versionCheckProblems(releaseGraphCheck);
    if (problems.length > 0) {
        throw new StepFailure("versions", "compare the tool pins with package-lock.json and each release's go.mod", problems.join("; "));
    }
    const specs = toolSpecs();
    // The modules of every tool still to build after the first, fetched while the first one compiles.
    const prefetch = prefetchModules(unbuilt(specs, root, go).slice(1));
    const outputs: string[] = [];
    try {
        for (const spec of specs) {
            outputs.push(await checkedTool(spec, root, go));
        }
    } catch (error) {
        prefetch.stop();
        throw error;
    } finally {
        await prefetch.done;
    }
    return linkBin(root, outputs);
}

/** Builds or reuses one tool, checks the versions its binaries report and prints its line; returns its output directory. */
async function checkedTool(spec: ToolSpec, root: string, go: string): Promise<string> {
    const { out, seconds } = ensureTool(spec, root, go);
    const reported = await reportedVersions(spec, root, out);
    const problems = versionProblems(spec.name, spec.versions, reported);
    if (problems.length > 0) {
        throw new StepFailure(spec.name, "check versions", problems.join("; "));
    }
    const version = spec.versions.length > 0 ? `${reported[spec.versions[0].binary]} ` : "";
    console.log(
        seconds === undefined
            ? `real:tools ${spec.name} ${version}reused (${path.relative(root, out)})`
            : `real:tools ${spec.name} ${version}built in ${seconds.toFixed(1)} s`,
    );
    return out;
}

/**
 * `real:tools --fetch-modules`: only the module downloads of every tool not yet built, all of them,
 * the first tool's too. `.ci/run` starts it in the background before the Node steps, which use the
 * CPUs but not the network, so a cold build finds its modules on disk: the first tool's alone are
 * 1.4 GB, about 100 s during which its build otherwise waits with the CPUs idle.
 */
async function fetchModules(env: NodeJS.ProcessEnv = process.env): Promise<void> {
    const go = goVersion();
    await prefetchModules(unbuilt(toolSpecs(), cacheRoot(env), go)).done;
}

if (require.main === module && process.argv.includes("--fetch-modules")) {
    const started = process.hrtime.bigint();
    fetchModules().then(
        () => console.log(`real:tools modules fetched in ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`),
        (error: Error) => {
            // The builds fetch what is still missing and report any failure with the tool and the step.
            console.log(`real:tools: fetching modules ahead stopped: ${error.message}`);
        },
    );
} else if (require.main === module) {
    const started = process.hrtime.bigint();
    ensureTools().then(
        (bin) => {
            console.log(`real:tools ready in ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
            console.log(`REAL_BIN=${bin}`);
        },
        (error: Error) => {
            console.error(error instanceof StepFailure ? error.message : `real:tools: ${error.message}`);
            process.exit(1);
        },
    );
}
