/**
 * `npm run test:real [-- --cluster existing] [jest arguments]`: the real tier (jest.real.config.js).
 *
 * By default it builds or reuses the tools and starts the hermetic cluster (tests/real/setup).
 * `--cluster existing` runs the same suite against the cluster of $KUBECONFIG with the `pulumi` on
 * PATH: it creates and deletes only its own stacks' objects and the fixtures listed in
 * docs/real-tier.md.
 *
 * `REAL_SHARDS=<n>` (hermetic only, no file arguments) runs the files in n jest processes at once,
 * each with a cluster of its own in its own slot (`REAL_SLOT`, `REAL_SLOT+1`, ...: its own network
 * namespace and CIDR, scripts/real/cluster.ts), the files spread by their recorded wall times
 * (`shardFiles`). A real-tier file waits on the engine, the provider and the API server in turn,
 * keeping about 1.3 of two cores busy, so two clusters on two cores finish sooner than one;
 * `.ci/run` uses 2 (three were slower: docs/real-tier.md, "Shards").
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { shardFiles } from "./shards";

const args = process.argv.slice(2);
const env = { ...process.env };
const at = args.indexOf("--cluster");
if (at >= 0) {
    const mode = args[at + 1];
    if (mode !== "existing" && mode !== "hermetic") {
        console.error(`test:real: --cluster takes "existing" or "hermetic", got ${JSON.stringify(mode)}`);
        process.exit(2);
    }
    env.REAL_CLUSTER = mode;
    args.splice(at, 2);
    if (mode === "existing") {
        // npm start's and the plugin-resolution tests run the tools this repository builds, which an existing
        // cluster's run does not use; the service-ca test publishes and rotates a bundle an existing
        // OpenShift's service-ca owns; the cert-manager test starts cert-manager's controllers on the
        // hermetic cluster; the interrupted-update test stops and restarts the hermetic cluster's API server.
        console.log(
            "test:real --cluster existing: tests/real/start.real.ts, plugins.real.ts, service-ca-bundle.real.ts, cert-manager.real.ts and interrupted.real.ts run only in the hermetic tier",
        );
        args.push("--testPathIgnorePatterns", "(start|service-ca-bundle|plugins|cert-manager|interrupted)\\.real\\.ts$");
    }
}
const jest = require.resolve("jest/bin/jest");
const config = path.join(__dirname, "..", "..", "jest.real.config.js");
const shards = Number(process.env.REAL_SHARDS ?? "1");
if (!Number.isInteger(shards) || shards < 1 || shards > 5) {
    console.error(`test:real: REAL_SHARDS must be an integer from 1 to 5, got ${JSON.stringify(process.env.REAL_SHARDS)}`);
    process.exit(2);
}

/** One jest process per shard, each on its own slot; the run fails when any shard fails. */
async function runShards(): Promise<number> {
    const dir = path.join(__dirname, "..", "..", "tests", "real");
    const files = fs
        .readdirSync(dir)
        .filter((f) => f.endsWith(".real.ts"))
        .map((f) => path.join(dir, f));
    const groups = shardFiles(files, shards);
    const base = Number(process.env.REAL_SLOT || "0");
    if (base + groups.length - 1 > 9) {
        console.error(`test:real: REAL_SLOT=${base} leaves no slot for ${groups.length} shards (slots go to 9)`);
        return 2;
    }
    const codes = await Promise.all(
        groups.map(
            (group, i) =>
                new Promise<number>((resolve) => {
                    const slot = base + i;
                    console.log(
                        `test:real shard ${i + 1}/${groups.length} on slot ${slot}: ${group.map((f) => path.basename(f)).join(" ")}`,
                    );
                    const child = spawn(process.execPath, [jest, "--config", config, ...args, ...group], {
                        env: { ...env, REAL_SLOT: String(slot) },
                        stdio: ["ignore", "pipe", "pipe"],
                    });
                    // Each line prefixed with its shard, so the two runs read apart in one log.
                    const prefix = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) => {
                        let rest = "";
                        stream.on("data", (d: Buffer) => {
                            const lines = (rest + d.toString("utf8")).split("\n");
                            rest = lines.pop() ?? "";
                            for (const line of lines) out.write(`[shard ${i + 1}] ${line}\n`);
                        });
                        stream.on("end", () => rest && out.write(`[shard ${i + 1}] ${rest}\n`));
                    };
                    prefix(child.stdout, process.stdout);
                    prefix(child.stderr, process.stderr);
                    child.on("exit", (code, signal) => {
                        console.log(`test:real shard ${i + 1}/${groups.length} ended: ${signal ?? code}`);
                        resolve(code ?? 1);
                    });
                }),
        ),
    );
    return codes.every((c) => c === 0) ? 0 : 1;
}

if (require.main === module) {
    const namesFiles = args.some((a) => a.endsWith(".real.ts"));
    if (shards > 1 && env.REAL_CLUSTER !== "existing" && !namesFiles) {
        runShards().then((code) => process.exit(code));
    } else {
        const result = spawnSync(process.execPath, [jest, "--config", config, ...args], { stdio: "inherit", env });
        process.exit(result.status ?? 1);
    }
}
