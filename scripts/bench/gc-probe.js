/**
 * Preloaded into the webhook process by `bench:scale` only (`node --expose-gc --require`): on
 * SIGUSR2 it runs a full garbage collection and prints the process's memory to stderr as one
 * `gc-probe {...}` line, so the benchmark reads what the server retains, not garbage V8 has not yet
 * collected. The server itself never sees it.
 *
 * `gc()` returns before V8 has handed the freed pages back: sweeping and unmapping run on helper
 * threads afterwards. Read at once, RSS after 3,000 admissions with 10,000 teams was 223-241 MiB;
 * 3 s later, with no other change, 155-167 MiB. So the probe collects, waits a third of
 * `GC_PROBE_SETTLE_MS` (default 3000), collects again (the helpers' work is done by then; the second
 * collection finds what the first one's finalizers freed) and reads the rest of that time later. What
 * it reports is what the process keeps while idle, what a container limit meets between bursts.
 */
"use strict";
const settleMs = Number(process.env.GC_PROBE_SETTLE_MS ?? 3000);
process.on("SIGUSR2", () => {
    globalThis.gc();
    setTimeout(() => {
        globalThis.gc();
        setTimeout(
            () => {
                const usage = process.memoryUsage();
                process.stderr.write(
                    `gc-probe ${JSON.stringify({ rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external })}\n`,
                );
            },
            (settleMs * 2) / 3,
        );
    }, settleMs / 3);
});
