#!/usr/bin/env node
/**
 * `npm start`: `pulumi up` on the embedded local stack, unattended.
 *
 * Uses a Pulumi CLI on PATH, else the one the `pulumi` npm package (a devDependency) fetches
 * on first use. State goes to a local file backend (./.pulumi-state), secrets are encrypted
 * with a passphrase this script sets when none is given, and the run never prompts.
 * Where no CLI can be had (no internet), it says so in one line and points to the offline render.
 */
"use strict";

const { spawnSync, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const root = path.resolve(__dirname, "..");
const STACK = "local";
const OFFLINE_HINT = "npm run render -- --config Pulumi.local.yaml --out out/render";

function cliOnPath() {
    try {
        const found = execFileSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" }).trim();
        // npm puts the launcher itself (node_modules/.bin/pulumi) on PATH; that one downloads.
        return found && !found.includes(`${path.sep}node_modules${path.sep}`) ? found : undefined;
    } catch {
        return undefined;
    }
}

async function resolveCli() {
    const onPath = cliOnPath();
    if (onPath) {
        return onPath;
    }
    const { resolve } = require("pulumi/lib/resolve");
    return resolve();
}

function run(bin, args, env) {
    const result = spawnSync(bin, args, { cwd: root, env, stdio: "inherit" });
    if (result.error) {
        throw result.error;
    }
    return result.status ?? 1;
}

async function main() {
    let bin;
    try {
        bin = await resolveCli();
    } catch (error) {
        const reason = error && error.cause && error.cause.code ? `${error.message}: ${error.cause.code}` : String(error && error.message);
        process.stderr.write(`npm start: no Pulumi CLI on PATH and it could not be downloaded (${reason}); for an offline preview run: ${OFFLINE_HINT}\n`);
        return 1;
    }
    const stateDir = path.join(root, ".pulumi-state");
    fs.mkdirSync(stateDir, { recursive: true });
    const env = {
        ...process.env,
        PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ""}`,
        PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL ?? `file://${stateDir}`,
        // The local stack holds no real secrets; a fixed passphrase keeps the run unattended.
        PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE ?? "cluster-platform-local",
        PULUMI_SKIP_UPDATE_CHECK: "true",
        // Type-checking is `npm run typecheck`; the engine only needs to transpile.
        PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    };
    const selected = run(bin, ["stack", "select", STACK, "--create", "--secrets-provider", "passphrase", "--non-interactive"], env);
    if (selected !== 0) {
        return selected;
    }
    return run(bin, ["up", "--stack", STACK, "--yes", "--non-interactive", ...process.argv.slice(2)], env);
}

main().then((code) => process.exit(code));
