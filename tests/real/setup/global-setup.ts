/**
 * The real tier's one cluster and registry for the whole run (jest.real.config.js).
 *
 * Hermetic (the default): the tools from `npm run real:tools` (REAL_BIN, or built now), the
 * control plane of scripts/real/cluster.ts, Debian's docker-registry on loopback with the test
 * base image in it. `--cluster existing` (REAL_CLUSTER=existing): the KUBECONFIG the user gave and
 * the `pulumi` on their PATH; nothing is started but the registry. What the tests read is passed
 * on in REAL_* variables, which jest's workers inherit.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startCluster } from "../../../scripts/real/cluster";
import { ensureTools } from "../../../scripts/real/tools";
import { startRegistry } from "../../helpers/registry";
import { buildNodeBaseLayout, pushBase } from "../../helpers/node-base-image";
import { requireTools } from "../../helpers/system-tools";

export default async function globalSetup(): Promise<void> {
    requireTools("docker-registry", "skopeo", "umoci", "openssl");
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "real-tier-"));
    (globalThis as Record<string, unknown>).__realTierWork = work;
    process.env.REAL_WORK = work;
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
        const bin = process.env.REAL_BIN || ensureTools();
        process.env.REAL_BIN = bin;
        const cluster = await startCluster({ bin, dir: path.join(work, "cluster"), log: (line) => process.stdout.write(`\n${line}\n`) });
        (globalThis as Record<string, unknown>).__realTierCluster = cluster.dir;
        process.env.REAL_KUBECONFIG = cluster.kubeconfig;
    }
    const registry = await startRegistry();
    (globalThis as Record<string, unknown>).__realTierRegistry = registry;
    process.env.REAL_REGISTRY = registry.host;
    const base = buildNodeBaseLayout(path.join(work, "base"));
    process.env.REAL_BASE_IMAGE = (await pushBase(base, registry.host, "real/node-base", "oci-index")).pinned;
}
