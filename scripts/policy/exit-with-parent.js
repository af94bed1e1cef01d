/**
 * Preloaded (`node --require`) into a pack's analyzer process that scripts/policy/analyzer.ts
 * starts for a whole test run: it exits when the process that started it is gone, however that
 * one ended (a jest worker is killed, not exited), so no analyzer outlives its run.
 */
const parent = Number(process.env.CLUSTER_PLATFORM_ANALYZER_PARENT);
if (Number.isInteger(parent) && parent > 0) {
    setInterval(() => {
        try {
            process.kill(parent, 0);
        } catch {
            process.exit(0);
        }
    }, 1000).unref();
}
