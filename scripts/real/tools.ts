/**
 * `npm run real:tools`: builds the real tier's tools from their Go modules, or reuses them.
 *
 * Each tool is cached under <cache>/tools/<name>-<key> (cacheKey: Go version, go.mod, go.sum,
 * the module's own mains, the recipe), so a warm run only links REAL_BIN. Prints one line per tool
 * with its time, and last `REAL_BIN=<dir>`: a directory of every executable the real tier runs,
 * plus crds/ and kwok-stages/. A missing Go or a failed step ends the run at once with one line
 * naming the tool and the step (whether or not CI=true: never a silent skip).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheKey, cacheRoot, type ModuleFiles, TOOLS_ROOT, type ToolSpec, toolSpecs } from "./toolchain";

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

function build(spec: ToolSpec, out: string): void {
    const cwd = path.join(TOOLS_ROOT, spec.dir);
    for (const files of spec.moduleFiles ?? []) {
        copyModuleFiles(spec, files, files.into === "sources" ? cwd : out);
    }
    for (const b of spec.builds) {
        const target = b.output ? path.join(out, b.output) : `${out}${path.sep}`;
        const args = ["build", "-p", "2", "-trimpath", "-o", target, "-ldflags", b.ldflags.join(" ")];
        if (b.tags?.length) {
            args.push("-tags", b.tags.join(","));
        }
        run(spec.name, `go build ${b.packages.join(" ")}`, "go", [...args, ...b.packages], { cwd, env: goEnv() });
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

/** Builds (or reuses) one tool; returns its output directory. */
function ensureTool(spec: ToolSpec, root: string, go: string): string {
    const key = cacheKey(spec, go);
    const out = path.join(root, "tools", `${spec.name}-${key}`);
    const started = process.hrtime.bigint();
    if (fs.existsSync(path.join(out, ".complete"))) {
        console.log(`real:tools ${spec.name} reused (${path.relative(root, out)})`);
        return out;
    }
    const partial = `${out}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    console.log(
        `real:tools ${spec.name} building (no cached build for these inputs; cold, the whole toolchain takes about 25 min on 2 cores)`,
    );
    build(spec, partial);
    fs.writeFileSync(path.join(partial, ".complete"), `${key}\n`);
    fs.rmSync(out, { recursive: true, force: true });
    fs.renameSync(partial, out);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`real:tools ${spec.name} built in ${seconds.toFixed(1)} s`);
    return out;
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

export function ensureTools(env: NodeJS.ProcessEnv = process.env): string {
    const go = goVersion();
    const root = cacheRoot(env);
    const outputs = toolSpecs().map((spec) => ensureTool(spec, root, go));
    return linkBin(root, outputs);
}

if (require.main === module) {
    try {
        const started = process.hrtime.bigint();
        const bin = ensureTools();
        console.log(`real:tools ready in ${(Number(process.hrtime.bigint() - started) / 1e9).toFixed(1)} s`);
        console.log(`REAL_BIN=${bin}`);
    } catch (error) {
        console.error(error instanceof StepFailure ? error.message : `real:tools: ${(error as Error).message}`);
        process.exit(1);
    }
}
