/** Stops what global-setup.ts started and removes its work directory. */
import * as fs from "node:fs";
import { stopCluster } from "../../../scripts/real/cluster";
import { deleteCreatedObjects } from "../helpers/kubectl";
import type { LocalRegistry } from "../../helpers/registry";

export default async function globalTeardown(): Promise<void> {
    const state = globalThis as Record<string, unknown>;
    // On an existing cluster, the fixtures this run created go (the hermetic cluster goes whole).
    const leftovers = process.env.REAL_CLUSTER === "existing" ? deleteCreatedObjects() : [];
    await (state.__realTierRegistry as LocalRegistry | undefined)?.stop();
    if (typeof state.__realTierCluster === "string") {
        await stopCluster(state.__realTierCluster);
    }
    if (typeof state.__realTierWork === "string") {
        fs.rmSync(state.__realTierWork, { recursive: true, force: true });
    }
    if (leftovers.length > 0) {
        throw new Error(`test:real could not delete what it created:\n${leftovers.join("\n")}`);
    }
}
