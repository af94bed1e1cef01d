/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took on the 2-core machine, two shards at once (`REAL_SHARDS=2 npm run test:real`
 * on 2026-11-27, 25 min a shard; rbac-authorizer after its aggregation wait stopped waiting out
 * history-dependent roles; catalog-sample alone, 2026-11-27, on a quieter machine); a file not listed counts as 60 s. Only the spread between shards
 * depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "catalog-sample.real.ts": 736,
    "cert-manager.real.ts": 264,
    "operator-lifecycle.real.ts": 244,
    "lifecycle.real.ts": 241,
    "interrupted.real.ts": 236,
    "verify.real.ts": 185,
    "upgrade.real.ts": 181,
    "unavailable-apiservice.real.ts": 141,
    "bench.real.ts": 133,
    "subscriptions-access.real.ts": 130,
    "reconcile.real.ts": 125,
    "service-ca-bundle.real.ts": 113,
    "rbac-authorizer.real.ts": 100,
    "policy.real.ts": 95,
    "structural-schema.real.ts": 88,
    "operator-rename.real.ts": 86,
    "webhook.real.ts": 74,
    "operator-teams.real.ts": 73,
    "openshift-proxy.real.ts": 55,
    "start.real.ts": 54,
    "errors.real.ts": 48,
    "runners.real.ts": 47,
    "fleet.real.ts": 39,
    "provider-rule.real.ts": 32,
    "import-adoption.real.ts": 29,
    "plugins.real.ts": 28,
    "locking.real.ts": 17,
    "bench-load.real.ts": 16,
    "infrastructure.real.ts": 5,
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
