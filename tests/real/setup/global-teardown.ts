/** Stops what global-setup.ts started. */
import type { RealEnvironment } from "./environment";

export default async function globalTeardown(): Promise<void> {
    await ((globalThis as Record<string, unknown>).__realTierEnvironment as RealEnvironment | undefined)?.stop();
}
