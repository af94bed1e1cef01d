#!/usr/bin/env node
/**
 * The npm mirror on the project's build machines serves only Linux builds of platform-specific
 * packages, so `npm install` there leaves the other platforms' optional binaries (e.g.
 * @swc/core-darwin-arm64) out of package-lock.json, and `npm ci` then refuses the lockfile as
 * out of sync. This adds the missing optional entries with the os/cpu/libc their names state,
 * so `npm ci` skips them on other platforms exactly as with a lockfile made against the full
 * registry. Run it after `npm install`: `node scripts/complete-lockfile.js`.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const lockPath = path.join(__dirname, "..", "package-lock.json");
const lock = JSON.parse(fs.readFileSync(lockPath, "utf8"));
const OS = ["darwin", "linux", "win32", "freebsd", "android", "openharmony", "sunos", "aix", "netbsd", "openbsd"];
const CPU = ["arm64", "x64", "ia32", "arm", "ppc64", "s390x", "riscv64", "loong64", "wasm32", "mips64el"];

function platformOf(name) {
    const parts = name.split("/").pop().split("-");
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p));
    const libc =
        parts.includes("musl") || parts.includes("musleabihf")
            ? "musl"
            : parts.includes("gnu") || parts.includes("gnueabihf")
              ? "glibc"
              : undefined;
    return { os, cpu, libc };
}

let added = 0;
for (const [location, entry] of Object.entries(lock.packages)) {
    for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
        const base = location === "" ? "node_modules" : `${location}/node_modules`;
        const nested = `${base}/${dep}`;
        if (lock.packages[nested] || lock.packages[`node_modules/${dep}`]) {
            continue;
        }
        const { os, cpu, libc } = platformOf(dep);
        if (!os && !cpu) {
            continue;
        }
        lock.packages[`node_modules/${dep}`] = {
            version,
            ...(entry.dev ? { dev: true } : {}),
            optional: true,
            ...(cpu ? { cpu: [cpu] } : {}),
            ...(os ? { os: [os] } : {}),
            ...(libc ? { libc: [libc] } : {}),
        };
        added++;
    }
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} optional platform entries`);
