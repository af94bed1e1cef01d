/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took on the 2-core machine (docs/real-tier.md, "Figures"); a file not listed
 * counts as 60 s. Only the spread between shards depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "cert-manager.real.ts": 310,
    // Its one run (load 4-7): 294 s to the answers, 180 of them an aggregation wait the evaluator fix of 31f849b should end.
    "rbac-authorizer.real.ts": 300,
    "upgrade.real.ts": 240,
    "unavailable-apiservice.real.ts": 165,
    "lifecycle.real.ts": 160,
    "interrupted.real.ts": 120,
    "import-adoption.real.ts": 115,
    "reconcile.real.ts": 90,
    "operator-lifecycle.real.ts": 90,
    "bench.real.ts": 80,
    "subscriptions-access.real.ts": 80,
};

/** The files split into `shards` groups of about equal recorded time (longest first, each to the lightest group). */
export function shardFiles(files: readonly string[], shards: number): string[][] {
    const groups = Array.from({ length: shards }, () => ({ files: [] as string[], seconds: 0 }));
    const weight = (file: string) => RECORDED_SECONDS[path.basename(file)] ?? 60;
    for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
        const lightest = groups.reduce((a, b) => (b.seconds < a.seconds ? b : a));
        lightest.files.push(file);
        lightest.seconds += weight(file);
    }
    return groups.map((g) => g.files.sort()).filter((g) => g.length > 0);
}
