/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took with two shards at once in the last warm clean-clone `.ci/run` measured
 * here (2970a84, 2026-11-30; docs/real-tier.md): jest's time per file, as that run printed it
 * (`[shard n] PASS tests/real/<file> (<s> s)`; infrastructure.real.ts, under a second of its own,
 * counts 5). A file not listed counts as 60 s, and tests/toolchain/shards.test.ts fails on one.
 * Only the spread between shards depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "catalog-sample.real.ts": 312,
    "cert-manager.real.ts": 238,
    "bench.real.ts": 200,
    "lifecycle.real.ts": 192,
    "interrupted.real.ts": 190,
    "upgrade.real.ts": 153,
    "unavailable-apiservice.real.ts": 139,
    "operator-lifecycle.real.ts": 129,
    "reconcile.real.ts": 119,
    "verify.real.ts": 117,
    "service-ca-bundle.real.ts": 93,
    "rbac-authorizer.real.ts": 83,
    "structural-schema.real.ts": 80,
    "subscriptions-access.real.ts": 78,
    "policy.real.ts": 63,
    "operator-teams.real.ts": 61,
    "operator-rename.real.ts": 60,
    "webhook.real.ts": 57,
    "runners.real.ts": 46,
    "openshift-proxy.real.ts": 46,
    "start.real.ts": 31,
    "provider-rule.real.ts": 28,
    "errors.real.ts": 28,
    "plugins.real.ts": 24,
    "fleet.real.ts": 24,
    "min-kube-version.real.ts": 22,
    "import-adoption.real.ts": 21,
    "locking.real.ts": 20,
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
