import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ROOT } from "../helpers/render";

/**
 * `npm start` against a stand-in `pulumi`: an executable that records its argv and the
 * environment it was given, answers `version`, and writes into the stack file as the real CLI
 * does (`encryptionsalt`). The machine is made offline for the run (fetch fails), so a download
 * attempt shows as a failed start instead of a silent fetch.
 */
let tmp: string;
let log: string;

const STAND_IN = (version: string) => `#!/bin/sh
printf '%s\\n' "$(node -e 'console.log(JSON.stringify({ argv: process.argv.slice(1), env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("PULUMI_") || k === "PATH")) }))' -- "$@")" >> "$STAND_IN_LOG"
case "$1 \${2:-}" in
  "version "*) echo "v${version}" ;;
  "stack export") if [ -n "\${STAND_IN_EXPORT:-}" ]; then cat "$STAND_IN_EXPORT"; else exit 255; fi ;;
  "stack "*) printf 'encryptionsalt: v1:c3RhbmQtaW4=:v1:stand-in\\n' >> Pulumi.local.yaml ;;
  "up "*) if [ -n "\${STAND_IN_UP_STDERR:-}" ]; then cat "$STAND_IN_UP_STDERR" >&2; exit 255; fi ;;
esac
`;

function standIn(version: string): string {
    const bin = path.join(tmp, `pulumi-${version}`);
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, "pulumi"), STAND_IN(version), { mode: 0o755 });
    return bin;
}

/** An environment with no Pulumi CLI anywhere but `extraPath`, a fresh HOME, and no network for fetch. */
function environment(extraPath: string[]): NodeJS.ProcessEnv {
    const offline = path.join(tmp, "offline.js");
    fs.writeFileSync(
        offline,
        'globalThis.fetch = async () => { throw new TypeError("fetch failed", { cause: { code: "ENOTFOUND" } }); };\n',
    );
    // No CLI and no Go (with Go, npm start builds a CLI: the real tier's tests/real/start.real.ts covers that).
    const systemPath = (process.env.PATH ?? "")
        .split(path.delimiter)
        .filter((dir) => !fs.existsSync(path.join(dir, "pulumi")) && !fs.existsSync(path.join(dir, "go")));
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
        if (!key.startsWith("PULUMI_") && !key.startsWith("npm_") && key !== "NODE_OPTIONS") {
            env[key] = value;
        }
    }
    return {
        ...env,
        HOME: path.join(tmp, "home"),
        PATH: [path.join(ROOT, "node_modules", ".bin"), ...extraPath, ...systemPath].join(path.delimiter),
        NODE_OPTIONS: `--require ${offline}`,
        STAND_IN_LOG: log,
    };
}

const records = () =>
    fs.existsSync(log)
        ? fs
              .readFileSync(log, "utf8")
              .trim()
              .split("\n")
              .map((line) => JSON.parse(line) as { argv: string[]; env: Record<string, string> })
        : [];

const trackedChanges = () => spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, encoding: "utf8" }).stdout;

beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "npm-start-"));
    log = path.join(tmp, "argv.log");
});

afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
});

describe("npm start with a Pulumi CLI on PATH", () => {
    test("GIVEN a CLI on PATH after node_modules/.bin WHEN npm start runs THEN it uses it, unattended, and leaves every tracked file as it was", () => {
        const stackFile = fs.readFileSync(path.join(ROOT, "Pulumi.local.yaml"));
        const before = trackedChanges();
        const bin = standIn("3.230.0");

        const result = spawnSync("npm", ["start", "--silent"], { cwd: ROOT, env: environment([bin]), encoding: "utf8" });

        expect(result.stderr).not.toContain("Downloading pulumi");
        expect(result.status).toBe(0);
        expect(records().map((r) => r.argv)).toEqual([
            ["version"],
            ["stack", "select", "local", "--create", "--secrets-provider", "passphrase", "--non-interactive"],
            ["up", "--stack", "local", "--yes", "--non-interactive"],
            ["stack", "export", "--stack", "local", "--non-interactive"],
        ]);
        for (const { env } of records()) {
            expect(env).toMatchObject({
                PULUMI_BACKEND_URL: `file://${path.join(ROOT, ".pulumi-state")}?metadata=skip`,
                PULUMI_CONFIG_PASSPHRASE: "cluster-platform-local",
                PULUMI_SKIP_UPDATE_CHECK: "true",
                PULUMI_NODEJS_TRANSPILE_ONLY: "true",
            });
            expect(env.PATH.split(path.delimiter)[0]).toBe(bin);
        }
        expect(fs.readFileSync(path.join(ROOT, "Pulumi.local.yaml")).equals(stackFile)).toBe(true);
        expect(trackedChanges()).toBe(before);
    });

    test("GIVEN only a CLI older than requiredPulumiVersion WHEN the start script runs THEN it stops before any stack command, naming both versions", () => {
        const bin = standIn("3.200.0");
        const result = spawnSync(process.execPath, [path.join(ROOT, "scripts", "start.js")], {
            cwd: ROOT,
            env: environment([bin]),
            encoding: "utf8",
        });
        expect(result.status).toBe(1);
        expect(records().map((r) => r.argv)).toEqual([["version"]]);
        expect(result.stderr.trim()).toBe(
            `npm start: ${path.join(bin, "pulumi")} is Pulumi v3.200.0, and this project needs >=3.226.0 (see the README's "Pulumi CLI version"); install a newer one, or remove it from PATH to have npm start fetch one`,
        );
    });

    test("GIVEN no CLI, no network and no Go WHEN the start script runs THEN it says so in one line and points to the offline render", () => {
        const result = spawnSync(process.execPath, [path.join(ROOT, "scripts", "start.js")], {
            cwd: ROOT,
            env: environment([]),
            encoding: "utf8",
        });
        expect(result.status).toBe(1);
        const lines = result.stderr.trim().split("\n");
        expect(lines[lines.length - 1]).toMatch(
            /^npm start: no Pulumi CLI on PATH, it could not be downloaded \(.+\), and no Go toolchain on PATH could build one \(npm run real:tools\); for an offline preview run: npm run render -- --config Pulumi\.local\.yaml --out out\/render$/,
        );
        expect(records()).toEqual([]);
    });

    test("GIVEN a stack locked by a runner of another machine, with a pending create WHEN the start script's `up` is refused THEN the CLI's message is shown and then the recovery commands of docs/operations.md, with the CLI's exit status and no stack trace", () => {
        const bin = standIn("3.260.0");
        const urn = "urn:pulumi:local::cluster-platform::kubernetes:core/v1:Namespace::namespace-widgets";
        // The CLI's texts (pulumi/pulumi v3.259.0 pkg/backend/diy/lock.go checkForLock; sdk/go/common/apitype/core.go);
        // pid 0 on host "gone-runner": a runner of another machine, which may still run.
        const locked = `error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with \`pulumi cancel\`.\n  file:///state/.pulumi/locks/organization/cluster-platform/local/1d4a.json: created by root@gone-runner (pid 4242) at 2026-11-27T04:51:09Z\n`;
        fs.writeFileSync(path.join(tmp, "up.stderr"), locked);
        fs.writeFileSync(
            path.join(tmp, "export.json"),
            JSON.stringify({ version: 3, deployment: { resources: [], pending_operations: [{ resource: { urn }, type: "creating" }] } }),
        );
        const result = spawnSync(process.execPath, [path.join(ROOT, "scripts", "start.js")], {
            cwd: ROOT,
            env: { ...environment([bin]), STAND_IN_UP_STDERR: path.join(tmp, "up.stderr"), STAND_IN_EXPORT: path.join(tmp, "export.json") },
            encoding: "utf8",
        });
        expect({ status: result.status, stderr: result.stderr.split("\n") }).toEqual({
            status: 255,
            stderr: [
                ...locked.split("\n").slice(0, 2),
                'npm start: stack local was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):',
                "  locked by root@gone-runner (pid 4242) since 2026-11-27T04:51:09Z: file:///state/.pulumi/locks/organization/cluster-platform/local/1d4a.json",
                `  pending operation: creating ${urn}`,
                "if that update is still running, wait for it; once its runner has certainly ended, recover with:",
                "  pulumi cancel --stack local --yes",
                "  pulumi refresh --stack local --clear-pending-creates --yes",
                "  pulumi up --stack local",
                "  pulumi preview --stack local --expect-no-changes",
                "",
            ],
        });
    });
});
