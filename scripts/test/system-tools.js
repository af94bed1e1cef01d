#!/usr/bin/env node
/**
 * The Debian tools the test suites run as real peers, and the Debian package of each.
 * `npm test` runs this first (the `pretest` script): as root on a machine with apt-get it
 * installs whatever is missing; otherwise it lists what is missing, with the command that
 * installs it, and the suites that need a missing tool fail at once saying the same
 * (tests/helpers/system-tools.ts), instead of an ENOENT stack trace or a start-up timeout.
 */
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

/** tool → Debian package. */
const DEBIAN_PACKAGES = {
    "docker-registry": "docker-registry",
    skopeo: "skopeo",
    umoci: "umoci",
    htpasswd: "apache2-utils",
    openssl: "openssl",
};

function onPath(tool, env = process.env) {
    return (env.PATH ?? "")
        .split(path.delimiter)
        .filter((dir) => dir !== "")
        .some((dir) => {
            try {
                fs.accessSync(path.join(dir, tool), fs.constants.X_OK);
                return true;
            } catch {
                return false;
            }
        });
}

function missingTools(tools = Object.keys(DEBIAN_PACKAGES), env = process.env) {
    return tools.filter((tool) => !onPath(tool, env));
}

function installCommand(tools) {
    return `apt-get install -y --no-install-recommends ${[...new Set(tools.map((t) => DEBIAN_PACKAGES[t]))].join(" ")}`;
}

/** The one line a suite fails with when `tool` is missing. */
function missingToolMessage(tool) {
    return `${tool} is not installed (Debian package ${DEBIAN_PACKAGES[tool]}): install it with \`sudo ${installCommand([tool])}\`, or run \`npm test\` as root to have it installed`;
}

function main() {
    const missing = missingTools();
    if (missing.length === 0) {
        return 0;
    }
    const root = typeof process.getuid === "function" && process.getuid() === 0;
    if (root && onPath("apt-get")) {
        process.stdout.write(`npm test: installing ${missing.join(", ")} with apt-get\n`);
        const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
        for (const args of [
            ["update", "-qq"],
            ["install", "-y", "-qq", "--no-install-recommends", ...new Set(missing.map((t) => DEBIAN_PACKAGES[t]))],
        ]) {
            const result = spawnSync("apt-get", args, { stdio: "inherit", env });
            if (result.status !== 0) {
                process.stderr.write(
                    `npm test: apt-get ${args[0]} failed (exit ${result.status}); the suites that need ${missing.join(", ")} will fail\n`,
                );
                return 0;
            }
        }
        return 0;
    }
    for (const tool of missing) {
        process.stderr.write(`npm test: ${missingToolMessage(tool)}\n`);
    }
    return 0;
}

module.exports = { DEBIAN_PACKAGES, missingTools, missingToolMessage, installCommand };

if (require.main === module) {
    process.exit(main());
}
