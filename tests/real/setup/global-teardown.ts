/** Stops what global-setup.ts started and removes its work directory. */
import * as fs from "node:fs";
import { stopCluster } from "../../../scripts/real/cluster";
import type { LocalRegistry } from "../../helpers/registry";

export default async function globalTeardown(): Promise<void> {
    const state = globalThis as Record<string, unknown>;
    await (state.__realTierRegistry as LocalRegistry | undefined)?.stop();
    if (typeof state.__realTierCluster === "string") {
        await stopCluster(state.__realTierCluster);
    }
    if (typeof state.__realTierWork === "string") {
        fs.rmSync(state.__realTierWork, { recursive: true, force: true });
    }
}
