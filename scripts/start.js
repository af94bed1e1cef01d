#!/usr/bin/env node
/**
 * `npm start`: `pulumi up` on the embedded local stack, unattended.
 *
 * The CLI: the installed one (scripts/pulumi-cli.js: the first `pulumi` on PATH that is not an
 * npm launcher, else the official installer's `~/.pulumi/bin/pulumi`), else the CLI the `pulumi` npm package (a
 * devDependency) fetches once into ~/.pulumi/versions. It must satisfy Pulumi.yaml's
 * `requiredPulumiVersion`. State goes to a local file backend (./.pulumi-state), secrets are
 * encrypted with a passphrase this script sets when none is given, the run never prompts, and
 * the language host transpiles only. The CLI writes `encryptionsalt` into the stack file; every
 * tracked Pulumi*.yaml is put back byte for byte afterwards, so the work tree stays clean.
 * With no CLI and no download (no internet) but Go on PATH, it builds the CLI from Go modules
 * (`npm run real:tools`) and runs that. Where no CLI can be had at all, it says so in one line and
 * points to the offline render.
 */
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");
const { parse } = require("yaml");
const { checkStack, recoveryMessage } = require("./interrupted-state");
const { EXE, installedCli } = require("./pulumi-cli");

const root = path.resolve(__dirname, "..");
const STACK = "local";
const OFFLINE_HINT = "npm run render -- --config Pulumi.local.yaml --out out/render";
async function resolveCli(env) {
    const installed = installedCli(env);
    if (installed) {
        return installed;
    }
    const { resolve } = require("pulumi/lib/resolve");
    try {
        // The CLI of the Node SDK's release, which the real tier proves (README, "Dependency notes"),
        // not the launcher package's own version: npm has no `pulumi` launcher at every SDK release.
        return await resolve({ version: process.env.PULUMI_VERSION || require("@pulumi/pulumi/package.json").version });
    } catch (error) {
        const built = buildCli(env);
        if (built) {
            return built;
        }
        throw error;
    }
}

/**
 * No CLI and none downloadable: with Go on PATH, build the CLI, its Node language host and the
 * providers from their Go modules (`npm run real:tools`, scripts/real/tools.ts), or reuse a
 * previous build from ~/.cache/cluster-platform/real. Returns the built `pulumi`, or undefined
 * without Go.
 */
function buildCli(env) {
    if (spawnSync("go", ["version"], { env }).status !== 0) {
        return undefined;
    }
    process.stderr.write(
        "npm start: no Pulumi CLI on PATH and none could be downloaded; building one from Go modules with npm run real:tools (the first build takes about 40 minutes on 2 cores; later runs reuse ~/.cache/cluster-platform/real)\n",
    );
    const tsx = path.join(root, "node_modules", ".bin", "tsx");
    const result = spawnSync(tsx, [path.join(root, "scripts", "real", "tools.ts")], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "inherit"],
        encoding: "utf8",
    });
    process.stderr.write(result.stdout);
    const bin = /^REAL_BIN=(.+)$/m.exec(result.stdout ?? "");
    if (result.status !== 0 || !bin) {
        throw new Error("npm run real:tools could not build the CLI (its last line above says which tool and step)");
    }
    return path.join(bin[1], EXE);
}

/** `[major, minor, patch]` of "v3.226.0" or "3.226.0-dev.0", or undefined. */
function versionOf(text) {
    const match = /(\d+)\.(\d+)\.(\d+)/.exec(text);
    return match ? match.slice(1, 4).map(Number) : undefined;
}

function atLeast(version, minimum) {
    for (let i = 0; i < 3; i++) {
        if (version[i] !== minimum[i]) {
            return version[i] > minimum[i];
        }
    }
    return true;
}

/** The tracked files the CLI may rewrite, with their bytes now. */
function snapshotProjectFiles() {
    return fs
        .readdirSync(root)
        .filter((name) => /^Pulumi(\..+)?\.ya?ml$/.test(name))
        .map((name) => ({ file: path.join(root, name), bytes: fs.readFileSync(path.join(root, name)) }));
}

function restore(snapshot) {
    for (const { file, bytes } of snapshot) {
        if (!fs.existsSync(file) || !fs.readFileSync(file).equals(bytes)) {
            fs.writeFileSync(file, bytes);
        }
    }
}

function run(bin, args, env, options = {}) {
    const result = spawnSync(bin, args, {
        cwd: root,
        env,
        stdio: options.capture ? ["ignore", "pipe", "inherit"] : options.captureErrors ? ["inherit", "inherit", "pipe"] : "inherit",
        encoding: "utf8",
        maxBuffer: 256 << 20,
    });
    if (result.error) {
        throw result.error;
    }
    if (options.captureErrors) {
        process.stderr.write(result.stderr ?? "");
    }
    return { status: result.status ?? 1, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

async function main() {
    let bin;
    try {
        bin = await resolveCli(process.env);
    } catch (error) {
        const reason = error && error.cause && error.cause.code ? `${error.message}: ${error.cause.code}` : String(error && error.message);
        process.stderr.write(
            `npm start: no Pulumi CLI on PATH, it could not be downloaded (${reason}), and no Go toolchain on PATH could build one (npm run real:tools); for an offline preview run: ${OFFLINE_HINT}\n`,
        );
        return 1;
    }
    const stateDir = path.join(root, ".pulumi-state");
    fs.mkdirSync(stateDir, { recursive: true });
    const env = {
        ...process.env,
        // The CLI finds its language host and plugins beside itself first.
        PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ""}`,
        // No metadata sidecars: the program reads its own stack (a StackReference) while the engine
        // writes it, and fileblob rewrites a sidecar by truncating it first, so a read in between
        // fails with "failed to load checkpoint: EOF" (gocloud.dev blob/fileblob attrs.go).
        PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}?metadata=skip`,
        // The local stack holds no real secrets; a fixed passphrase keeps the run unattended.
        PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "cluster-platform-local",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        // Pulumi.yaml's tsconfig option does this for every run; kept for CLIs that ignore it.
        PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    };

    const required = parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8")).requiredPulumiVersion;
    const version = run(bin, ["version"], env, { capture: true });
    const found = versionOf(version.stdout);
    const minimum = versionOf(String(required));
    if (version.status !== 0 || !found || (minimum && !atLeast(found, minimum))) {
        process.stderr.write(
            `npm start: ${bin} is Pulumi ${version.stdout.trim() || "of unknown version"}, and this project needs ${required} (see the README's "Pulumi CLI version"); install a newer one, or remove it from PATH to have npm start fetch one\n`,
        );
        return 1;
    }

    const snapshot = snapshotProjectFiles();
    try {
        const selected = run(bin, ["stack", "select", STACK, "--create", "--secrets-provider", "passphrase", "--non-interactive"], env);
        if (selected.status !== 0) {
            return selected.status;
        }
        // The CLI's errors (its lock message among them) are read, then shown as they came.
        const up = run(bin, ["up", "--stack", STACK, "--yes", "--non-interactive", ...process.argv.slice(2)], env, { captureErrors: true });
        // A lock or pending operations left by an interrupted run: the recovery commands, not just the CLI's error.
        const interrupted = checkStack({ cli: bin, cwd: root, stack: STACK, env, output: up.stderr });
        if (interrupted) {
            process.stderr.write(`npm start: ${recoveryMessage(STACK, interrupted)}\n`);
        }
        return up.status;
    } finally {
        restore(snapshot);
    }
}

main().then((code) => process.exit(code));
