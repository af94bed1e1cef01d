/**
 * Throwaway projects for image builds: the repository's package.json and package-lock.json,
 * its node_modules (linked, or the production closure copied with fresh mtimes), and a compiled
 * webhook in dist/webhook: the stand-in fixture, or the real server when it is built.
 */
import { spawnSync } from "node:child_process";
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
 * Compiles the real admission server of the checkout at `sourceRoot` (default: this one) as
 * `npm run build` does: `tsc -p` over a config that extends the checkout's tsconfig.build.json,
 * restricted to `webhook/` (the same JavaScript as the build's `dist/`, without the source maps,
 * whose `sources` are relative to where the output is written), into `<directory>` (`webhook/`
 * and the neutral modules it imports, under `components/shared/`); returns `<directory>`. Type
 * declarations come from this checkout (they are devDependencies). It is also the oracle of the
 * run-time compile (tests/webhook-image/compile.test.ts).
 */
export function compileWebhook(directory: string, sourceRoot: string = ROOT): string {
    // The compiler's output is a function of the sources, the lockfile (compiler and type
    // packages) and the options, all in the key; not of where the checkout is or how it was
    // cloned. So every test file that needs a compile of the same content (bench:image's tiny run,
    // chroot-e2e, compile.test's oracle, and each clone of two-clones.test.ts, whose sources are
    // this commit's) shares one, made once per content (tests/helpers/kept-cache.ts): about 7 s
    // of CPU each on the suite's 2-core machines. A clone whose sources differ gets its own.
    const kept = keptDirectory("compiled-webhook", compileInputs(sourceRoot), (fresh) => runTsc(fresh, sourceRoot));
    if (kept === undefined) {
        runTsc(directory, sourceRoot);
    } else {
        cpSync(kept, directory, { recursive: true });
    }
    return directory;
}

/**
 * What the compiled webhook of `sourceRoot` depends on, as text: the sources and JSON it can
 * import (webhook/ and components/, where its neutral modules live), the lockfile (the
 * compiler's and the type packages' versions, which decide import elision), the tsconfig files
 * (the build's options) and this file (how the compiler is run). Paths are relative to the
 * checkout, so two checkouts of one content share a key.
 */
function compileInputs(sourceRoot: string): string[] {
    const sources = ["webhook", "components"].flatMap((folder) =>
        (readdirSync(path.join(sourceRoot, folder), { recursive: true }) as string[])
            .filter((file) => file.endsWith(".ts") || file.endsWith(".json"))
            .sort()
            .map((file) => path.join(folder, file)),
    );
    const files = ["package-lock.json", "tsconfig.json", "tsconfig.build.json", ...sources];
    return [readFileSync(__filename, "utf8"), ...files.flatMap((file) => [file, readFileSync(path.join(sourceRoot, file), "utf8")])];
}

function runTsc(directory: string, sourceRoot: string): void {
    const config = path.join(directory, "tsconfig.oracle.json");
    writeFileSync(
        config,
        JSON.stringify({
            extends: path.join(sourceRoot, "tsconfig.build.json"),
            compilerOptions: {
                outDir: directory,
                rootDir: sourceRoot,
                incremental: false,
                // Source maps name the sources relative to the output directory: without them, one
                // compile serves every place it is copied to.
                sourceMap: false,
                typeRoots: [path.join(ROOT, "node_modules", "@types")],
            },
            include: [path.join(sourceRoot, "webhook", "**", "*.ts")],
        }),
    );
    const tsc = spawnSync(process.execPath, [path.join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", config], {
        encoding: "utf8",
    });
    rmSync(config);
    // tsc reports type errors on stdout and still emits: a compile that says anything failed.
    if (tsc.status !== 0 || tsc.stdout !== "" || tsc.stderr !== "") {
        throw new Error(`tsc -p over ${sourceRoot}/tsconfig.build.json (webhook/) exited ${tsc.status}:\n${tsc.stdout}${tsc.stderr}`);
    }
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
