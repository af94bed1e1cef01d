/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took with two shards at once on a cold CI machine (the run of 2026-11-28 that
 * `.ci/run` printed; two cores); catalog-sample as measured alone once it skipped checkpoints (303 s)
 * times 1.32, policy, bench and bench-load (not reached in that run) from 2026-11-27 times 1.32, and
 * min-kube-version as measured alone on 2026-11-29 (96 s) times 1.32:
 * the ratio between that CI run and the figures of 2026-11-27 over the files both have. A file not
 * listed counts as 60 s. Only the spread between shards depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "lifecycle.real.ts": 445,
    "operator-lifecycle.real.ts": 412,
    "catalog-sample.real.ts": 400,
    "cert-manager.real.ts": 322,
    "interrupted.real.ts": 306,
    "verify.real.ts": 223,
    "upgrade.real.ts": 201,
    "bench.real.ts": 176,
    "unavailable-apiservice.real.ts": 163,
    "reconcile.real.ts": 149,
    "service-ca-bundle.real.ts": 141,
    "min-kube-version.real.ts": 127,
    "policy.real.ts": 125,
    "subscriptions-access.real.ts": 121,
    "rbac-authorizer.real.ts": 118,
    "structural-schema.real.ts": 106,
    "webhook.real.ts": 95,
    "openshift-proxy.real.ts": 87,
    "operator-teams.real.ts": 81,
    "errors.real.ts": 75,
    "operator-rename.real.ts": 73,
    "start.real.ts": 63,
    "provider-rule.real.ts": 59,
    "runners.real.ts": 59,
    "fleet.real.ts": 55,
    "plugins.real.ts": 51,
    "import-adoption.real.ts": 47,
    "locking.real.ts": 27,
    "bench-load.real.ts": 21,
    "infrastructure.real.ts": 6,
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
