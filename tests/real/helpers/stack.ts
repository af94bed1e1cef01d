/**
 * A stack of the real program run by the real CLI, isolated from the work tree and from the
 * runner's own Pulumi setup.
 *
 * Each stack gets a project directory of its own in the run's work directory: the repository's
 * Pulumi.yaml with `main` pointing back at the repository, so the program runs from the checkout
 * (its __dirname-relative paths, node_modules, dist/) while the stack file, with the
 * `encryptionsalt` the CLI writes into it, stays out of the tree. State goes to a file backend
 * there, PULUMI_HOME too; secrets use a passphrase; plugins come from REAL_BIN on PATH only
 * (PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: a missing one fails at once, nothing downloads).
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { REPO_ROOT } from "../../../scripts/real/toolchain";

// The checkout the program runs from: one definition, the toolchain's.
export { REPO_ROOT };

export interface RunResult {
    readonly status: number;
    readonly stdout: string;
    readonly stderr: string;
}

export interface StackOptions {
    /** The kubeconfig the runner uses (KUBECONFIG); default the run's cluster. */
    readonly kubeconfig?: string;
    /** Extra environment (HOME, for a second runner). */
    readonly env?: NodeJS.ProcessEnv;
    /** Stacks of one group share a project directory, PULUMI_HOME and backend (a fleet); default the stack's own. */
    readonly group?: string;
    /** Another program's project directory (with its own Pulumi.yaml), instead of this repository's program. */
    readonly projectDirectory?: string;
}

export function realEnv(name: "REAL_WORK" | "REAL_KUBECONFIG" | "REAL_REGISTRY" | "REAL_BASE_IMAGE" | "REAL_BIN"): string {
    const value = process.env[name];
    if (!value) {
        throw new Error(`${name} is not set: run the real tier through npm run test:real (jest.real.config.js's global setup sets it)`);
    }
    return value;
}

/**
 * The PATH the CLI runs with. Hermetic: REAL_BIN, node's directory and the system's, nothing else
 * (so no other pulumi or plugin is found). Existing cluster: the user's PATH, less npm's
 * node_modules/.bin, whose `pulumi` is the npm launcher that downloads a CLI.
 */
export function cliPath(): string {
    const system = [path.dirname(process.execPath), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];
    const parts =
        process.env.REAL_CLUSTER === "existing"
            ? [...(process.env.PATH ?? "").split(path.delimiter).filter((dir) => !dir.split(path.sep).includes("node_modules")), ...system]
            : [process.env.REAL_BIN, ...system];
    return parts.filter((p): p is string => !!p).join(path.delimiter);
}

/**
 * A file backend without metadata sidecars. The program reads its own stack through a
 * StackReference while the engine writes that stack's checkpoint; gocloud's fileblob rewrites a
 * blob's `.attrs` sidecar by truncating it first (gocloud.dev blob/fileblob attrs.go `setAttrs`,
 * `os.Create` then encode), and a read in between fails to decode it: "failed to load checkpoint:
 * EOF" (seen on first ups in the real tier). `metadata=skip` writes no sidecar; the checkpoint itself
 * is replaced atomically (temp file and rename).
 */
export function fileBackendUrl(dir: string): string {
    return `file://${dir}?metadata=skip`;
}

/** The run's temporary directory for everything the tools it starts write there. */
export function runTemp(): string {
    const dir = path.join(realEnv("REAL_WORK"), "tmp");
    fs.mkdirSync(dir, { recursive: true });
    return dir;
}

/**
 * The engine's warning that a provider is older than the version the program's SDK asks for
 * (pulumi/pulumi pkg/host/host.go, `Provider`): "resource plugin kubernetes is expected to have
 * version >=4.34.2, but has 4.25.0". The real tier runs the providers the lockfile pins (real:tools
 * checks each one's GetPluginInfo against it), so no run may print it: every CLI run a TestStack
 * makes fails when it does.
 */
export const PLUGIN_VERSION_WARNING = /resource plugin \S+ is expected to have version >=\S+, but has [^\s;]*/;

/** The run's result, or an error when its output holds the plugin version warning. */
function refusingVersionWarnings(args: readonly string[], result: RunResult): RunResult {
    const warning = PLUGIN_VERSION_WARNING.exec(result.stdout + result.stderr);
    if (warning) {
        throw new Error(
            `pulumi ${args.join(" ")} printed the plugin version warning "${warning[0]}": a plugin version the program asks for is not the one the real tier runs`,
        );
    }
    return result;
}

/**
 * A project of plain JavaScript (no TypeScript, no config) in `dir`, running `source` with the
 * repository's node_modules: the programs a test writes for itself (a floor, a provider request).
 */
export function javascriptProject(dir: string, name: string, source: string): string {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), stringify({ name, runtime: { name: "nodejs", options: { typescript: false } } }));
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, main: "index.js" }));
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    fs.writeFileSync(path.join(dir, "index.js"), source);
    return dir;
}

/** Stack config keys as the stack file holds them: `cluster` becomes `cluster-platform:cluster`. */
function namespacedConfig(config: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(Object.entries(config).map(([k, v]) => [k.includes(":") ? k : `cluster-platform:${k}`, v]));
}

export class TestStack {
    readonly project: string;
    readonly home: string;
    readonly stateDir: string;
    readonly configFile: string;
    private readonly kubeconfig: string;
    private readonly extraEnv: NodeJS.ProcessEnv;

    constructor(
        readonly name: string,
        config: Record<string, unknown>,
        options: StackOptions = {},
    ) {
        const root = path.join(realEnv("REAL_WORK"), "stacks", options.group ?? name);
        this.project = options.projectDirectory ?? path.join(root, "project");
        this.home = path.join(root, "pulumi-home");
        this.stateDir = path.join(root, "state");
        this.configFile = path.join(this.project, `Pulumi.${name}.yaml`);
        this.kubeconfig = options.kubeconfig ?? realEnv("REAL_KUBECONFIG");
        this.extraEnv = options.env ?? {};
        for (const dir of [this.project, this.home, this.stateDir]) {
            fs.mkdirSync(dir, { recursive: true });
        }
        if (!options.projectDirectory) {
            const project = parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8")) as Record<string, unknown>;
            fs.writeFileSync(
                path.join(this.project, "Pulumi.yaml"),
                stringify({ ...project, main: path.relative(this.project, REPO_ROOT) }),
            );
        }
        // The stack file exists before `stack init`, which adds its encryption salt to it: the
        // project declares required config, which an empty stack file would fail to provide.
        fs.writeFileSync(this.configFile, stringify({ config: namespacedConfig(config) }));
        const init = this.run(["stack", "init", name, "--secrets-provider", "passphrase", "--non-interactive"]);
        if (init.status !== 0) {
            throw new Error(`pulumi stack init ${name} failed:\n${init.stderr}${init.stdout}`);
        }
    }

    /** Replaces the stack's configuration (keeping the encryption salt the CLI wrote). */
    setConfig(config: Record<string, unknown>): void {
        const current = parse(fs.readFileSync(this.configFile, "utf8")) as Record<string, unknown>;
        fs.writeFileSync(this.configFile, stringify({ encryptionsalt: current.encryptionsalt, config: namespacedConfig(config) }));
    }

    /** Another runner of the same stack: same state and stack file, its own kubeconfig path, home and PULUMI_HOME. */
    env(): NodeJS.ProcessEnv {
        return {
            PATH: cliPath(),
            HOME: this.extraEnv.HOME ?? path.dirname(this.home),
            PULUMI_HOME: this.home,
            PULUMI_BACKEND_URL: fileBackendUrl(this.stateDir),
            PULUMI_CONFIG_PASSPHRASE: "real-tier-passphrase",
            PULUMI_SKIP_UPDATE_CHECK: "true",
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
            // A run's error output is read by the tests; colour codes would only get in the way.
            NO_COLOR: "1",
            // The CLI, the plugins and the program (the Node SDK's ts-node cache) write temporary files;
            // they go into the run's directory, removed with it, not the machine's /tmp.
            TMPDIR: runTemp(),
            KUBECONFIG: this.kubeconfig,
            ...this.extraEnv,
        };
    }

    run(args: string[], env: NodeJS.ProcessEnv = {}): RunResult {
        const result = spawnSync("pulumi", [...args], {
            cwd: this.project,
            env: { ...this.env(), ...env },
            encoding: "utf8",
            maxBuffer: 256 << 20,
        });
        if (result.error) {
            throw result.error;
        }
        return refusingVersionWarnings(args, { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr });
    }

    /** Runs the CLI asynchronously (a test keeps serving a webhook meanwhile). */
    runAsync(args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
        return new Promise((resolve, reject) => {
            const child = spawn("pulumi", args, { cwd: this.project, env: { ...this.env(), ...env } });
            let stdout = "";
            let stderr = "";
            child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
            child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
            child.on("error", reject);
            child.on("close", (code) => {
                try {
                    resolve(refusingVersionWarnings(args, { status: code ?? 1, stdout, stderr }));
                } catch (error) {
                    reject(error);
                }
            });
        });
    }

    private stackArgs(verb: string[], extra: string[]): string[] {
        return [...verb, "--stack", this.name, "--non-interactive", "--color", "never", ...extra];
    }

    up(extra: string[] = []): RunResult {
        return this.run(this.stackArgs(["up"], ["--yes", "--skip-preview", ...extra]));
    }

    /** `env` is added to the runner's environment for this run only (NODE_OPTIONS, for one). */
    preview(extra: string[] = [], env: NodeJS.ProcessEnv = {}): RunResult {
        return this.run(this.stackArgs(["preview"], ["--diff", ...extra]), env);
    }

    refresh(extra: string[] = []): RunResult {
        return this.run(this.stackArgs(["refresh"], ["--yes", "--skip-preview", ...extra]));
    }

    destroy(extra: string[] = []): RunResult {
        return this.run(this.stackArgs(["destroy"], ["--yes", "--skip-preview", ...extra]));
    }

    /** `pulumi stack export` as text, exactly as the state holds it. */
    exportState(): string {
        const result = this.run(["stack", "export", "--stack", this.name]);
        if (result.status !== 0) {
            throw new Error(`pulumi stack export failed:\n${result.stderr}`);
        }
        return result.stdout;
    }

    /** The DIY backend's lock files of this backend (`.pulumi/locks/...`, pkg/backend/diy/lock.go), one per running update. */
    lockFiles(): string[] {
        const root = path.join(this.stateDir, ".pulumi", "locks");
        if (!fs.existsSync(root)) return [];
        return (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith(".json")).map((f) => path.join(root, f));
    }

    /** The custom timeouts the state records for the resource whose URN ends with `urnSuffix`. */
    customTimeouts(urnSuffix: string): Record<string, number> | undefined {
        const state = JSON.parse(this.exportState()) as {
            deployment: { resources: { urn: string; customTimeouts?: Record<string, number> }[] };
        };
        return state.deployment.resources.find((r) => r.urn.endsWith(urnSuffix))?.customTimeouts;
    }

    outputs(): Record<string, unknown> {
        const result = this.run(["stack", "output", "--stack", this.name, "--json"]);
        if (result.status !== 0) {
            throw new Error(`pulumi stack output failed:\n${result.stderr}`);
        }
        return JSON.parse(result.stdout) as Record<string, unknown>;
    }
}

/** A failed CLI run as one readable message. */
export function describe(result: RunResult): string {
    return `exit ${result.status}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}
