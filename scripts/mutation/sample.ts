/**
 * `npm run mutation -- [--files a.ts,b.ts] [--tests t1,t2] [--count N] [--seed S] [--timeout SECONDS]`:
 * a deterministic sample of mutants (see `mutants.ts`) of the rules modules, each run against the
 * tests jest finds related to the mutated file, or against the test paths `--tests` names (the
 * related set of a rules module the config schema imports is nearly the whole suite, minutes per
 * mutant; a focused set answers in seconds). A mutant is killed when those tests fail (or
 * time out), survives when they pass. The work happens in a scratch copy of the tracked files,
 * never in this checkout, so an interrupted run leaves nothing mutated behind.
 *
 * Default files: every `rules.ts` under components/, and the k8s-rbac pack's policy modules.
 * Last line: `mutation: mutants=<n> killed=<k> survived=<s> timed_out=<t> score=<k/n>`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { applyMutant, Mutant, mutationPoints, sampleMutants } from "./mutants";

const ROOT = path.resolve(__dirname, "..", "..");

export const USAGE = `usage: npm run mutation -- [--files a.ts,b.ts] [--tests t1,t2] [--count N] [--seed S] [--timeout SECONDS]

A deterministic sample of mutants of the rules modules, each run against the tests jest finds
related to the mutated file, or against the test paths --tests names. A mutant is killed when
those tests fail (or time out) and survives when they pass. Works in a scratch copy of the
tracked files, never in this checkout.

  --files    tracked files to mutate, comma-separated (default: every components/**/rules.ts
             and the k8s-rbac pack's policy modules)
  --tests    test paths to run for every mutant, comma-separated (default: the related tests)
  --count    how many mutants to sample (default 40)
  --seed     the sample's seed (default 1)
  --timeout  seconds per mutant before it counts as killed by time-out (default 180)
  --help     this text

Last line: mutation: mutants=<n> killed=<k> survived=<s> timed_out=<t> score=<k/n>`;

interface Options {
    files: string[];
    /** Test paths to run for every mutant; empty: the tests jest finds related to the mutated file. */
    tests: string[];
    count: number;
    seed: number;
    timeoutSeconds: number;
}

function trackedFiles(): string[] {
    return execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
        .split("\0")
        .filter((f) => f.length > 0);
}

function defaultFiles(tracked: readonly string[]): string[] {
    return tracked.filter(
        (f) => (f.startsWith("components/") && f.endsWith("/rules.ts")) || /^policy-packs\/k8s-rbac\/(?!index\.ts$)[^/]+\.ts$/.test(f),
    );
}

function parseOptions(argv: readonly string[], tracked: readonly string[]): Options {
    const options: Options = { files: defaultFiles(tracked), tests: [], count: 40, seed: 1, timeoutSeconds: 180 };
    const problems: string[] = [];
    for (let i = 0; i < argv.length; i += 2) {
        const [flag, value] = [argv[i], argv[i + 1]];
        if (value === undefined) {
            problems.push(`${flag}: needs a value`);
        } else if (flag === "--files") {
            options.files = value.split(",").filter((f) => f.length > 0);
        } else if (flag === "--tests") {
            options.tests = value.split(",").filter((f) => f.length > 0);
        } else if (flag === "--count" || flag === "--seed" || flag === "--timeout") {
            const n = Number(value);
            if (!Number.isInteger(n) || n < 1) {
                problems.push(`${flag}: ${JSON.stringify(value)} is not a whole number of at least 1`);
            } else if (flag === "--count") {
                options.count = n;
            } else if (flag === "--seed") {
                options.seed = n;
            } else {
                options.timeoutSeconds = n;
            }
        } else {
            problems.push(`${flag}: unknown option (--files, --tests, --count, --seed, --timeout, --help)`);
        }
    }
    for (const file of options.files.filter((f) => !tracked.includes(f))) {
        problems.push(`--files: ${JSON.stringify(file)} is not a tracked file`);
    }
    if (problems.length > 0) {
        throw new Error(problems.join("\n"));
    }
    return options;
}

/** A copy of the tracked files (and dist/, when built) with node_modules and ../shared linked in. */
function scratchCopy(tracked: readonly string[]): string {
    const base = mkdtempSync(path.join(os.tmpdir(), "mutation-"));
    const repo = path.join(base, "repo");
    for (const file of tracked) {
        mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
        cpSync(path.join(ROOT, file), path.join(repo, file));
    }
    if (existsSync(path.join(ROOT, "dist"))) {
        cpSync(path.join(ROOT, "dist"), path.join(repo, "dist"), { recursive: true });
    }
    symlinkSync(path.join(ROOT, "node_modules"), path.join(repo, "node_modules"));
    const shared = path.resolve(ROOT, "..", "shared");
    if (existsSync(shared)) {
        symlinkSync(shared, path.join(base, "shared"));
    }
    return repo;
}

type Verdict = "killed" | "survived" | "timed-out";

/**
 * Each test file as its own entry (jest.config.js runs a folder per entry, whose files jest's
 * dependency graph cannot see behind the folder's require). jest.config.js roots jest at tests/;
 * the dependency graph that finds related tests needs the sources too.
 */
// After the test paths: jest's --testMatch takes every argument up to the next flag.
const EVERY_TEST_FILE = ["--testMatch", "<rootDir>/tests/*/*.test.ts"];

function runRelatedTests(repo: string, file: string, options: Options): Verdict {
    const jest = path.join(repo, "node_modules", "jest", "bin", "jest.js");
    const selection = options.tests.length > 0 ? options.tests : ["--roots", "<rootDir>", "--findRelatedTests", file];
    const timeoutSeconds = options.timeoutSeconds;
    const result = spawnSync(process.execPath, [jest, ...selection, ...EVERY_TEST_FILE, "--bail=1", "--silent", "--maxWorkers=1", "--ci"], {
        cwd: repo,
        stdio: process.env.MUTATION_DEBUG ? "inherit" : "ignore",
        timeout: timeoutSeconds * 1000,
        killSignal: "SIGKILL",
    });
    if (result.error !== undefined || result.signal !== null) {
        return "timed-out";
    }
    return result.status === 0 ? "survived" : "killed";
}

function main(): void {
    if (process.argv.slice(2).some((arg) => arg === "--help" || arg === "-h")) {
        console.log(USAGE);
        return;
    }
    const tracked = trackedFiles();
    const options = parseOptions(process.argv.slice(2), tracked);
    const all = options.files.flatMap((file) => mutationPoints(file, readFileSync(path.join(ROOT, file), "utf8")));
    const sample = sampleMutants(all, options.count, options.seed);
    const repo = scratchCopy(tracked);
    const counts: Record<Verdict, number> = { killed: 0, survived: 0, "timed-out": 0 };
    const survivors: Mutant[] = [];
    try {
        const baselineFiles = options.tests.length > 0 ? sample.slice(0, 1).map((m) => m.file) : [...new Set(sample.map((m) => m.file))];
        const baselineFailures = baselineFiles.filter((file) => runRelatedTests(repo, file, options) !== "survived");
        if (baselineFailures.length > 0) {
            throw new Error(`the related tests fail (or time out) without any mutant: ${baselineFailures.join(", ")}`);
        }
        for (const mutant of sample) {
            const target = path.join(repo, mutant.file);
            const original = readFileSync(target, "utf8");
            writeFileSync(target, applyMutant(original, mutant));
            const verdict = runRelatedTests(repo, mutant.file, options);
            writeFileSync(target, original);
            counts[verdict] += 1;
            if (verdict === "survived") {
                survivors.push(mutant);
            }
            console.log(`${verdict.padEnd(9)} ${mutant.file}:${mutant.line} ${mutant.description}`);
        }
    } finally {
        rmSync(path.dirname(repo), { recursive: true, force: true });
    }
    console.log(
        `candidates: ${all.length} mutation points in ${options.files.length} files; sampled ${sample.length} (seed ${options.seed})`,
    );
    for (const mutant of survivors) {
        console.log(`survivor: ${mutant.file}:${mutant.line} ${mutant.description} (${JSON.stringify(mutant.original)})`);
    }
    const killed = counts.killed + counts["timed-out"];
    console.log(
        `mutation: mutants=${sample.length} killed=${counts.killed} survived=${counts.survived} timed_out=${counts["timed-out"]} score=${killed}/${sample.length}`,
    );
}

if (require.main === module) {
    main();
}
