/**
 * The real tier's environment: the tools, one cluster, one registry with the test base image.
 *
 * Hermetic (the default): the tools from `npm run real:tools` (REAL_BIN, or built now), the
 * control plane of scripts/real/cluster.ts, Debian's docker-registry on loopback with the test
 * base image in it. `--cluster existing` (REAL_CLUSTER=existing): the KUBECONFIG the user gave and
 * the `pulumi` on their PATH; nothing is started but the registry. What the tests read is passed
 * on in REAL_* variables (jest's workers inherit them). Used by the jest global setup and by
 * `npm run bench:real`.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { endedProcesses, startCluster, stopCluster } from "../../../scripts/real/cluster";
import { ensureTools } from "../../../scripts/real/tools";
import { buildNodeBaseLayout, pushBase } from "../../helpers/node-base-image";
import { startRegistry } from "../../helpers/registry";
import { requireTools } from "../../helpers/system-tools";
import { deleteCreatedObjects } from "../helpers/kubectl";
import { killTree, processesOfRun } from "../helpers/processes";

export interface RealEnvironment {
    /** Deletes what the run created on an existing cluster, stops what was started, removes the work directory. */
    stop(): Promise<void>;
}

export async function startRealEnvironment(
    log: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<RealEnvironment> {
    requireTools("docker-registry", "skopeo", "umoci", "openssl");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "real-tier-"));
    process.env.REAL_WORK = work;
    let clusterDir: string | undefined;
    const stops: (() => Promise<void>)[] = [];
    const stop = async () => {
        const leftovers = process.env.REAL_CLUSTER === "existing" ? deleteCreatedObjects() : [];
        for (const s of stops.reverse()) {
            await s();
        }
        // A control-plane process that ended on its own is named with its log's end (read before the directory goes).
        const ended = clusterDir ? endedProcesses(clusterDir) : [];
        if (clusterDir) {
            await stopCluster(clusterDir);
        }
        // No process the run started may outlive it: each one still running is named, then ended.
        const stray = processesOfRun(work);
        for (const entry of stray) {
            await killTree(entry.pid);
        }
        fs.rmSync(work, { recursive: true, force: true });
        const problems = [
            ...ended.map((e) => `test:real: the cluster's ${e.name} ended during the run; the end of its log:\n${e.logTail}`),
            ...(leftovers.length > 0 ? [`test:real could not delete what it created:\n${leftovers.join("\n")}`] : []),
            ...(stray.length > 0
                ? [
                      `test:real: processes the run started were still running at its end (now killed):\n${stray.map((e) => `${e.pid} ${e.command}`).join("\n")}`,
                  ]
                : []),
        ];
        if (problems.length > 0) {
            throw new Error(problems.join("\n"));
        }
    };
    try {
        if (process.env.REAL_CLUSTER === "existing") {
            if (!process.env.KUBECONFIG) {
                throw new Error("test:real --cluster existing: set KUBECONFIG to the cluster's kubeconfig");
            }
            process.env.REAL_KUBECONFIG = process.env.KUBECONFIG;
            // Stacks name their cluster by context (cluster.kubeContext), the kubeconfig's current one.
            const context = spawnSync("kubectl", ["config", "current-context"], { encoding: "utf8" });
            if (context.status !== 0) {
                throw new Error(`test:real --cluster existing: kubectl config current-context failed: ${context.stderr.trim()}`);
            }
            process.env.REAL_CONTEXT = context.stdout.trim();
        } else {
            const bin = process.env.REAL_BIN || (await ensureTools());
            process.env.REAL_BIN = bin;
            clusterDir = path.join(work, "cluster");
            // The cluster's state directory, for what a test starts on it on demand (startCertManager).
            process.env.REAL_CLUSTER_DIR = clusterDir;
            const cluster = await startCluster({ bin, dir: clusterDir, log });
            process.env.REAL_KUBECONFIG = cluster.kubeconfig;
        }
        const registry = await startRegistry();
        stops.push(() => registry.stop());
        process.env.REAL_REGISTRY = registry.host;
        const base = buildNodeBaseLayout(path.join(work, "base"));
        process.env.REAL_BASE_IMAGE = (await pushBase(base, registry.host, "real/node-base", "oci-index")).pinned;
    } catch (error) {
        await stop();
        throw error;
    }
    return { stop };
}
