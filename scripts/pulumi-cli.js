/**
 * Which installed Pulumi CLI the repository's scripts run (`npm start`, `npm run fleet`): the
 * first `pulumi` on PATH that is not an npm launcher, else the official installer's
 * `$PULUMI_HOME/bin/pulumi` (default ~/.pulumi/bin). npm puts node_modules/.bin first on PATH
 * for `npm run`, and the `pulumi` package's launcher there is not the admin's CLI (it downloads
 * one into ~/.pulumi/versions and runs it as its own child). One definition, in plain
 * JavaScript: start.js runs under node without a TypeScript loader.
 */
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const EXE = process.platform === "win32" ? "pulumi.exe" : "pulumi";

function isExecutable(file) {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

/** The installed CLI for `env` (PATH, PULUMI_HOME), or undefined. */
function installedCli(env) {
    const onPath = (env.PATH ?? "")
        .split(path.delimiter)
        .filter((dir) => dir !== "" && !dir.split(path.sep).includes("node_modules"))
        .map((dir) => path.join(dir, EXE));
    const pulumiHome = env.PULUMI_HOME || path.join(os.homedir(), ".pulumi");
    return [...onPath, path.join(pulumiHome, "bin", EXE)].find(isExecutable);
}

module.exports = { EXE, installedCli };
