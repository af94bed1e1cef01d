/**
 * What goes into the webhook image: the compiled application (every file of its output folder,
 * plus any compiled module outside it that those files require) and the production dependency
 * closure of the packages it requires, as layer entries under `/app`.
 *
 * Requires are read with TypeScript's own scanner (`preProcessFile`), which skips comments and
 * strings; only literal `require("...")`/`import` specifiers are seen, so an application that
 * loads modules by computed name must list those packages as requires somewhere.
 */
import { existsSync, promises as fs, readdirSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import * as path from "node:path";
import { installsOn, Lockfile, NpmPlatform, packageNameAt, packageNameOf, productionClosure } from "./closure";
import { LayerEntry, normalizedFileMode } from "./layer";
import { Platform } from "./rules";

/** The image directory the application and its node_modules live in (also the working directory). */
export const APP_ROOT = "app";

export interface ApplicationSource {
    /** Absolute path of the project: package.json, package-lock.json and node_modules. */
    projectDirectory: string;
    /** The compiler's output directory, relative to the project (e.g. `dist`). */
    outputDirectory: string;
    /** The application's folder inside the output directory (e.g. `webhook`). */
    application: string;
    /** The file Node.js starts, relative to the output directory (e.g. `webhook/main.js`). */
    entrypoint: string;
}

export interface ImageSources {
    /** `/app/package.json` and the compiled application. */
    application: LayerEntry[];
    /** `/app/node_modules/...`: the production closure of what the application requires. */
    dependencies: LayerEntry[];
    /** The packages the application requires directly, sorted. */
    requiredPackages: string[];
}

export class SourceError extends Error {
    constructor(readonly problems: string[]) {
        super(`cannot package the webhook image:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
        this.name = "SourceError";
    }
}

/** Files the image never needs: type declarations, source maps and compiler caches. */
function isBuildArtifact(name: string): boolean {
    return /\.d\.[cm]?ts$/.test(name) || name.endsWith(".map") || name.endsWith(".tsbuildinfo");
}

const BUILTINS = new Set(builtinModules);
const JS_EXTENSIONS = [".js", ".cjs", ".mjs"];

/** npm's names for the machine this runs on, and for an image platform. */
export function npmPlatformOf(platform: Platform): NpmPlatform {
    const cpu: Record<string, string> = {
        amd64: "x64",
        "386": "ia32",
        arm64: "arm64",
        arm: "arm",
        ppc64le: "ppc64",
        s390x: "s390x",
        riscv64: "riscv64",
    };
    return { os: platform.os, cpu: cpu[platform.architecture] ?? platform.architecture };
}

export async function collectImageSources(given: ApplicationSource, platforms: ReadonlyArray<Platform>): Promise<ImageSources> {
    const source = { ...given, projectDirectory: path.resolve(given.projectDirectory) };
    const problems: string[] = [];
    const outputRoot = path.join(source.projectDirectory, source.outputDirectory);
    const appRoot = path.join(outputRoot, source.application);
    const missing = missingBuildProblem(source);
    if (missing !== undefined) {
        throw new SourceError([missing]);
    }

    const appFiles = new Set<string>();
    for (const file of await walk(appRoot, problems, { skipDirectory: () => false })) {
        if (!isBuildArtifact(file.name)) {
            appFiles.add(file.absolute);
        }
    }
    const required = new Set<string>();
    const scanned = new Set<string>();
    const queue = [...appFiles].filter((file) => JS_EXTENSIONS.includes(path.extname(file)));
    const ts = require("typescript") as typeof import("typescript");
    while (queue.length > 0) {
        const file = queue.shift() as string;
        if (scanned.has(file)) {
            continue;
        }
        scanned.add(file);
        const text = await fs.readFile(file, "utf8");
        for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
            const relative = path.relative(source.projectDirectory, file);
            if (specifier.startsWith(".") || specifier.startsWith("/")) {
                const target = await resolveModuleFile(path.resolve(path.dirname(file), specifier));
                if (target === undefined) {
                    problems.push(`${relative} requires ${JSON.stringify(specifier)}, which does not exist`);
                } else if (!isInside(outputRoot, target)) {
                    problems.push(
                        `${relative} requires ${JSON.stringify(specifier)}, outside ${source.outputDirectory}/, which the image cannot carry`,
                    );
                } else if (!appFiles.has(target)) {
                    appFiles.add(target);
                    queue.push(target);
                }
                continue;
            }
            if (specifier.startsWith("node:") || BUILTINS.has(specifier)) {
                continue;
            }
            const name = packageNameOf(specifier);
            if (name !== undefined) {
                required.add(name);
            }
        }
    }

    const application: LayerEntry[] = [
        { path: `${APP_ROOT}/package.json`, type: "file", mode: 0o644, content: Buffer.from('{"private":true,"type":"commonjs"}\n') },
    ];
    for (const file of [...appFiles].sort()) {
        const stat = await fs.stat(file);
        application.push({
            path: `${APP_ROOT}/${toPosix(path.relative(outputRoot, file))}`,
            type: "file",
            mode: normalizedFileMode(stat.mode),
            source: file,
        });
    }

    const lockfile = JSON.parse(await fs.readFile(path.join(source.projectDirectory, "package-lock.json"), "utf8")) as Lockfile;
    const npmPlatforms = platforms.map(npmPlatformOf);
    const host: NpmPlatform = { os: process.platform, cpu: process.arch };
    const locations = new Set<string>();
    for (const platform of npmPlatforms) {
        const closure = productionClosure(lockfile, [...required], platform);
        problems.push(...closure.problems.filter((p) => !problems.includes(p)));
        closure.locations.forEach((l) => locations.add(l));
    }
    const dependencies: LayerEntry[] = [];
    const nativeAddons: string[] = [];
    for (const location of [...locations].sort()) {
        const directory = path.join(source.projectDirectory, location);
        if (!(await isDirectory(directory))) {
            const pkg = lockfile.packages?.[location];
            if (pkg !== undefined && !installsOn(pkg, host)) {
                problems.push(
                    `${location} is built for ${pkg.os?.join(",") ?? "any os"}/${pkg.cpu?.join(",") ?? "any cpu"} and is not installed on this machine: build the image on a machine of that platform`,
                );
            } else {
                problems.push(`${location} is in package-lock.json but not installed: run npm ci`);
            }
            continue;
        }
        const mismatch = await installedMismatch(directory, location, lockfile);
        if (mismatch !== undefined) {
            problems.push(mismatch);
            continue;
        }
        for (const file of await walk(directory, problems, { skipDirectory: (name) => name === "node_modules" })) {
            if (isBuildArtifact(file.name)) {
                continue;
            }
            const imagePath = `${APP_ROOT}/${toPosix(path.relative(source.projectDirectory, file.absolute))}`;
            if (file.kind === "symlink") {
                const target = await fs.readlink(file.absolute);
                if (path.isAbsolute(target) || !isInside(directory, path.resolve(path.dirname(file.absolute), target))) {
                    problems.push(
                        `${path.relative(source.projectDirectory, file.absolute)} is a symlink to ${JSON.stringify(target)}, outside its package`,
                    );
                    continue;
                }
                dependencies.push({ path: imagePath, type: "symlink", mode: 0o777, linkTarget: target });
                continue;
            }
            if (file.name.endsWith(".node")) {
                nativeAddons.push(path.relative(source.projectDirectory, file.absolute));
            }
            dependencies.push({ path: imagePath, type: "file", mode: normalizedFileMode(file.mode), source: file.absolute });
        }
    }
    const foreign = npmPlatforms.filter((p) => p.os !== host.os || p.cpu !== host.cpu);
    if (nativeAddons.length > 0 && foreign.length > 0) {
        problems.push(
            `the dependencies hold native addons built for ${host.os}/${host.cpu} (${nativeAddons.slice(0, 3).join(", ")}${nativeAddons.length > 3 ? ", ..." : ""}), which cannot run on ${foreign.map((p) => `${p.os}/${p.cpu}`).join(", ")}`,
        );
    }
    if (problems.length > 0) {
        throw new SourceError(problems);
    }
    return { application, dependencies, requiredPackages: [...required].sort() };
}

/**
 * Why the package installed at `location` is not the one package-lock.json names (another
 * name or version: node_modules from another lockfile, or changed by hand), or undefined. The
 * image packages the lockfile's packages only, so two clones of one commit cannot build
 * different images from different installs; the files themselves are what npm ci unpacks from
 * the tarball the lockfile's `integrity` pins.
 */
async function installedMismatch(directory: string, location: string, lockfile: Lockfile): Promise<string | undefined> {
    const packages = lockfile.packages ?? {};
    const wanted = { name: packageNameAt(packages, location), version: packages[location]?.version };
    let installed: { name?: unknown; version?: unknown };
    try {
        installed = JSON.parse(await fs.readFile(path.join(directory, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
    } catch {
        return `${location} has no readable package.json: run npm ci`;
    }
    if (installed.name !== wanted.name || installed.version !== wanted.version) {
        return `${location} is ${String(installed.name)}@${String(installed.version)} but package-lock.json names ${wanted.name}@${String(wanted.version)}: run npm ci`;
    }
    return undefined;
}

interface WalkedFile {
    absolute: string;
    name: string;
    kind: "file" | "symlink";
    mode: number;
}

/**
 * Every file and symlink under `directory` (not entering skipped directories). Synchronous
 * calls: walking thousands of package files this way is several times faster than one
 * thread-pool round trip per directory entry.
 */
async function walk(directory: string, problems: string[], options: { skipDirectory(name: string): boolean }): Promise<WalkedFile[]> {
    const out: WalkedFile[] = [];
    const pending = [directory];
    while (pending.length > 0) {
        const current = pending.pop() as string;
        for (const dirent of readdirSync(current, { withFileTypes: true })) {
            const absolute = path.join(current, dirent.name);
            if (dirent.isDirectory()) {
                if (!options.skipDirectory(dirent.name)) {
                    pending.push(absolute);
                }
            } else if (dirent.isSymbolicLink()) {
                out.push({ absolute, name: dirent.name, kind: "symlink", mode: 0o777 });
            } else if (dirent.isFile()) {
                out.push({ absolute, name: dirent.name, kind: "file", mode: statSync(absolute).mode });
            } else {
                problems.push(`${absolute} is neither a file, a directory nor a symlink`);
            }
        }
    }
    return out;
}

async function resolveModuleFile(target: string): Promise<string | undefined> {
    const candidates = [
        target,
        ...[...JS_EXTENSIONS, ".json"].map((ext) => target + ext),
        ...["index.js", "index.json"].map((f) => path.join(target, f)),
    ];
    for (const candidate of candidates) {
        if (await isFile(candidate)) {
            return candidate;
        }
    }
    return undefined;
}

async function isFile(file: string): Promise<boolean> {
    return fs.stat(file).then(
        (s) => s.isFile(),
        () => false,
    );
}

async function isDirectory(directory: string): Promise<boolean> {
    return fs.stat(directory).then(
        (s) => s.isDirectory(),
        () => false,
    );
}

function isInside(root: string, candidate: string): boolean {
    const relative = path.relative(root, candidate);
    return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative);
}

function toPosix(relative: string): string {
    return relative.split(path.sep).join("/");
}

/** Why the compiled entrypoint cannot be packaged (it was never built), or undefined. */
export function missingBuildProblem(source: ApplicationSource): string | undefined {
    const entry = path.join(source.projectDirectory, source.outputDirectory, source.entrypoint);
    return existsSync(entry)
        ? undefined
        : `${path.join(source.outputDirectory, source.entrypoint)} does not exist: build the webhook first (npm run build)`;
}

/**
 * TypeScript sources newer than their compiled output (or never compiled): the output would
 * package stale code. Paths relative to the project, sorted.
 */
export async function staleOutputs(projectDirectory: string, sourceFolder: string, outputDirectory: string): Promise<string[]> {
    const stale: string[] = [];
    const problems: string[] = [];
    const sourceRoot = path.join(projectDirectory, sourceFolder);
    if (!(await isDirectory(sourceRoot))) {
        return [];
    }
    for (const file of await walk(sourceRoot, problems, { skipDirectory: (name) => name === "node_modules" })) {
        if (!file.name.endsWith(".ts") || /\.d\.[cm]?ts$/.test(file.name)) {
            continue;
        }
        const relative = path.relative(projectDirectory, file.absolute);
        const compiled = path.join(projectDirectory, outputDirectory, relative.replace(/\.ts$/, ".js"));
        const [sourceStat, outputStat] = await Promise.all([fs.stat(file.absolute), fs.stat(compiled).catch(() => undefined)]);
        if (outputStat === undefined || outputStat.mtimeMs < sourceStat.mtimeMs) {
            stale.push(toPosix(relative));
        }
    }
    return stale.sort();
}
