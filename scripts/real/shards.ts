/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took with two shards at once in the last warm clean-clone `.ci/run` measured
 * here (2fe422e, 2026-11-29; docs/real-tier.md): jest's time per file, as that run printed it
 * (`[shard n] PASS tests/real/<file> (<s> s)`; infrastructure.real.ts, under a second of its own,
 * counts 5). A file not listed counts as 60 s, and tests/toolchain/shards.test.ts fails on one.
 * Only the spread between shards depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "cert-manager.real.ts": 333,
    "catalog-sample.real.ts": 308,
    "interrupted.real.ts": 197,
    "bench.real.ts": 194,
    "operator-lifecycle.real.ts": 187,
    "lifecycle.real.ts": 167,
    "upgrade.real.ts": 157,
    "unavailable-apiservice.real.ts": 150,
    "verify.real.ts": 117,
    "reconcile.real.ts": 107,
    "service-ca-bundle.real.ts": 96,
    "rbac-authorizer.real.ts": 85,
    "structural-schema.real.ts": 85,
    "policy.real.ts": 83,
    "subscriptions-access.real.ts": 80,
    "min-kube-version.real.ts": 78,
    "operator-rename.real.ts": 74,
    "webhook.real.ts": 62,
    "runners.real.ts": 54,
    "operator-teams.real.ts": 49,
    "openshift-proxy.real.ts": 45,
    "errors.real.ts": 44,
    "start.real.ts": 41,
    "fleet.real.ts": 39,
    "plugins.real.ts": 32,
    "provider-rule.real.ts": 26,
    "locking.real.ts": 21,
    "import-adoption.real.ts": 20,
    "bench-load.real.ts": 7,
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
