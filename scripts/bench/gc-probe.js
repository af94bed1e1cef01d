/**
 * Preloaded into the webhook process by `bench:scale` only (`node --expose-gc --require`): on
 * SIGUSR2 it runs a full garbage collection and prints the process's memory to stderr as one
 * `gc-probe {...}` line, so the benchmark reads what the server retains, not garbage V8 has not yet
 * collected. The server itself never sees it.
 */
"use strict";
process.on("SIGUSR2", () => {
    globalThis.gc();
    globalThis.gc();
    const usage = process.memoryUsage();
    process.stderr.write(`gc-probe ${JSON.stringify({ rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external })}\n`);
});
