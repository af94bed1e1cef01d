/** The real tier's one environment for the whole run (environment.ts), kept for the teardown. */
import { startRealEnvironment } from "./environment";

export default async function globalSetup(): Promise<void> {
    (globalThis as Record<string, unknown>).__realTierEnvironment = await startRealEnvironment((line) =>
        process.stdout.write(`\n${line}\n`),
    );
}
