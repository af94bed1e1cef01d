/**
 * Throwaway projects for image builds: the repository's package.json and package-lock.json,
 * its node_modules (linked, or the production closure copied with fresh mtimes), and a compiled
 * webhook in dist/webhook: the stand-in fixture, or the real server when it is built.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { ImageContent } from "../../components/webhook-image/build";
import { productionClosure, Lockfile } from "../../components/webhook-image/closure";
import { keptDirectory } from "./kept-cache";
import { ROOT } from "./root";

export { ROOT };
export const STAND_IN = path.join(ROOT, "tests", "fixtures", "webhook-image", "stand-in");

export interface ProjectOptions {
    /** Copy these packages' production closure instead of linking node_modules (fresh files, fresh mtimes). */
    copyClosureOf?: string[];
    /** The compiled webhook to package (default: the stand-in fixture), copied into dist/webhook. */
    webhookDirectory?: string;
    /** A whole compiled output (`compileWebhook`'s: webhook/ and the neutral modules it imports), copied as dist/. */
    compiledOutput?: string;
}

export function makeProject(options: ProjectOptions = {}): string {
    const project = mkdtempSync(path.join(os.tmpdir(), "webhook-project-"));
    for (const file of ["package.json", "package-lock.json"]) {
        writeFileSync(path.join(project, file), readFileSync(path.join(ROOT, file)));
    }
    if (options.copyClosureOf === undefined) {
        symlinkSync(path.join(ROOT, "node_modules"), path.join(project, "node_modules"));
    } else {
        const lockfile = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
        const closure = productionClosure(lockfile, options.copyClosureOf, { os: process.platform, cpu: process.arch });
        for (const location of closure.locations) {
            mkdirSync(path.dirname(path.join(project, location)), { recursive: true });
            cpSync(path.join(ROOT, location), path.join(project, location), {
                recursive: true,
                filter: (source) => path.relative(path.join(ROOT, location), source).split(path.sep)[0] !== "node_modules",
            });
        }
    }
    mkdirSync(path.join(project, "dist"), { recursive: true });
    if (options.compiledOutput !== undefined) {
        cpSync(options.compiledOutput, path.join(project, "dist"), { recursive: true });
    } else {
        cpSync(options.webhookDirectory ?? STAND_IN, path.join(project, "dist", "webhook"), { recursive: true });
    }
    return project;
}

/** The image content tests build from `project` on `baseImage`: the webhook as index.ts configures it. */
export function imageContent(project: string, baseImage: string, overrides: Partial<ImageContent> = {}): ImageContent {
    return {
        projectDirectory: project,
        outputDirectory: "dist",
        application: "webhook",
        entrypoint: "webhook/main.js",
        baseImage,
        platforms: ["linux/amd64"],
        user: 65532,
        env: { NODE_ENV: "production" },
        labels: {},
        ...overrides,
    };
}

/**
 * Compiles the real admission server (webhook/main.ts and what it imports) of the checkout at
 * `sourceRoot` (default: this one) as `npm run build` does, into `<directory>` (`webhook/` and the
 * neutral modules it imports, under `components/shared/`); returns `<directory>`. Type declarations of Node.js come from this checkout (they are a devDependency).
 */
export function compileWebhook(directory: string, sourceRoot: string = ROOT): string {
    // This checkout's compile is the same for every test file that needs it (bench:image's tiny
    // run, chroot-e2e): made once per content of its inputs (tests/helpers/kept-cache.ts). Another
    // checkout's (two-clones.test.ts compiles each clone, which is what it tests) always compiles.
    const kept = sourceRoot === ROOT ? keptDirectory("compiled-webhook", compileInputs(), (fresh) => runTsc(fresh, sourceRoot)) : undefined;
    if (kept === undefined) {
        runTsc(directory, sourceRoot);
    } else {
        cpSync(kept, directory, { recursive: true });
    }
    return directory;
}

/**
 * What the compiled webhook depends on, as text: the sources and JSON it can import (webhook/
 * and components/, where its neutral modules live), the lockfile (the compiler's and the type
 * packages' versions, which decide import elision), and this file (the compiler's options).
 */
function compileInputs(): string[] {
    const sources = ["webhook", "components"].flatMap((folder) =>
        (readdirSync(path.join(ROOT, folder), { recursive: true }) as string[])
            .filter((file) => file.endsWith(".ts") || file.endsWith(".json"))
            .sort()
            .map((file) => path.join(folder, file)),
    );
    return [__filename, "package-lock.json", ...sources].flatMap((file) => [file, readFileSync(path.resolve(ROOT, file), "utf8")]);
}

function runTsc(directory: string, sourceRoot: string): void {
    execFileSync(
        process.execPath,
        [
            path.join(ROOT, "node_modules", "typescript", "bin", "tsc"),
            "--outDir",
            directory,
            "--rootDir",
            sourceRoot,
            "--module",
            "commonjs",
            "--target",
            "ES2022",
            "--moduleResolution",
            "node",
            "--esModuleInterop",
            "--resolveJsonModule",
            "--skipLibCheck",
            "--strict",
            "--types",
            "node",
            "--typeRoots",
            path.join(ROOT, "node_modules", "@types"),
            path.join(sourceRoot, "webhook", "main.ts"),
        ],
        { stdio: "pipe" },
    );
}

/**
 * A fresh stand-in project for each test (`"each"`) or for the whole describe block (`"all"`),
 * removed afterwards; call inside `describe` and read the path with the returned function.
 */
export function withProject(scope: "each" | "all", options: ProjectOptions = {}): () => string {
    let project: string | undefined;
    const [setUp, tearDown] = scope === "each" ? [beforeEach, afterEach] : [beforeAll, afterAll];
    setUp(() => {
        project = makeProject(options);
    });
    tearDown(() => {
        if (project !== undefined) {
            rmSync(project, { recursive: true, force: true });
        }
    });
    return () => project as string;
}
