/**
 * How long a plain `pulumi up` takes to load the program, and how much memory, up to the first
 * registered resource: the program is loaded the way the Pulumi Node.js language host loads it
 * (scripts/bench/load-probe.js), with the tsconfig Pulumi.yaml's runtime options name, on the
 * local stack's config with the project defaults applied as the engine applies them. For
 * comparison, in the same run: the host's default before this project set `tsconfig` (ts-node
 * type-checking through tsconfig.json), and the floor, the same program compiled by tsc
 * (dist/, `npm run build` first) loaded by plain node. Each mode runs `--rounds` times in fresh
 * processes (default 3); medians are reported. `--skip-typecheck` leaves out the slow mode.
 *
 *   npm run build && npm run bench:load [-- --rounds 5 --skip-typecheck]
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
import { applyProjectConfig, ProjectFile } from "../render/project-config";

const ROOT = path.resolve(__dirname, "..", "..");
const PROBE = path.join(__dirname, "load-probe.js");
const TARGET_MS = 5000;
const TARGET_RSS_MB = 400;

interface Sample {
    ms: number;
    rssMb: number;
    maxRssMb: number;
}

function option(name: string, fallback: number): number {
    const at = process.argv.indexOf(name);
    return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

/** The config the engine hands the program for the local stack (PULUMI_CONFIG's JSON of strings). */
function localStackConfig(): string {
    const project = parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")) as ProjectFile;
    const stack = parse(fs.readFileSync(path.join(ROOT, "Pulumi.local.yaml"), "utf8")).config as Record<string, unknown>;
    const merged = applyProjectConfig(project, "local", stack);
    if (!merged.ok) {
        throw new Error(merged.error);
    }
    return JSON.stringify(
        Object.fromEntries(Object.entries(merged.config).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])),
    );
}

function probe(mode: "host" | "compiled", tsconfig: string): Sample {
    const env: NodeJS.ProcessEnv = { ...process.env, PULUMI_CONFIG: localStackConfig() };
    delete env.PULUMI_NODEJS_TRANSPILE_ONLY; // a plain `pulumi up`: nothing but Pulumi.yaml decides
    const result = spawnSync(process.execPath, [PROBE, mode, tsconfig], { cwd: ROOT, env, encoding: "utf8" });
    // The probe exits the moment the first resource registers; the SDK's exit hook then warns
    // about the program's unfinished promises and sets an exit code, so the JSON line decides.
    const line = result.stdout.split("\n").find((l) => l.startsWith("{"));
    if (line === undefined) {
        throw new Error(`probe ${mode} ${tsconfig} failed (exit ${result.status}):\n${result.stderr}`);
    }
    return JSON.parse(line) as Sample;
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

function summary(label: string, samples: Sample[]): { ms: number; maxRssMb: number } {
    const ms = median(samples.map((s) => s.ms));
    const maxRssMb = median(samples.map((s) => s.maxRssMb));
    console.log(
        `${label.padEnd(34)} ms: [${samples.map((s) => s.ms).join(", ")}] (median ${ms}), max RSS MB: [${samples.map((s) => s.maxRssMb).join(", ")}] (median ${maxRssMb})`,
    );
    return { ms, maxRssMb };
}

function main(): void {
    if (!fs.existsSync(path.join(ROOT, "dist", "index.js"))) {
        throw new Error("dist/index.js is missing: run npm run build first (the floor is the compiled program)");
    }
    const rounds = option("--rounds", 3);
    const tsconfig =
        (parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")).runtime?.options?.tsconfig as string | undefined) ??
        "tsconfig.json";
    console.log(
        `machine: ${os.cpus().length} CPUs (${os.cpus()[0]?.model}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`,
    );

    const run = (mode: "host" | "compiled", config: string) => Array.from({ length: rounds }, () => probe(mode, config));
    const host = summary(`host, ${tsconfig}`, run("host", tsconfig));
    const floor = summary("floor: compiled, plain node", run("compiled", tsconfig));
    const typecheck = process.argv.includes("--skip-typecheck")
        ? undefined
        : summary("host, tsconfig.json (type-checks)", run("host", "tsconfig.json"));

    const met = host.ms <= TARGET_MS && host.maxRssMb <= TARGET_RSS_MB;
    console.log(
        `bench:load host_ms=${host.ms} host_max_rss_mb=${host.maxRssMb} floor_ms=${floor.ms} floor_max_rss_mb=${floor.maxRssMb} ratio=${(host.ms / floor.ms).toFixed(2)}` +
            (typecheck ? ` typecheck_ms=${typecheck.ms} typecheck_max_rss_mb=${typecheck.maxRssMb}` : "") +
            ` target=${met ? "met" : "missed"} (<= ${TARGET_MS} ms, <= ${TARGET_RSS_MB} MB)`,
    );
}

main();
