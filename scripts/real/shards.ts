/** How `npm run test:real` spreads the real tier's files over clusters (`REAL_SHARDS`, scripts/real/test.ts). Pure. */
import * as path from "node:path";

/**
 * Seconds each file took on the 2-core machine, two shards at once (CI's run of 2026-11-27; the
 * files added since, interrupted's new cases and verify, estimated); a file not listed counts as 60 s. Only the spread between shards depends on them, never a result.
 */
export const RECORDED_SECONDS: Readonly<Record<string, number>> = {
    "cert-manager.real.ts": 361,
    "rbac-authorizer.real.ts": 300,
    "operator-lifecycle.real.ts": 296,
    "lifecycle.real.ts": 277,
    "interrupted.real.ts": 330,
    "upgrade.real.ts": 184,
    "verify.real.ts": 180,
    "unavailable-apiservice.real.ts": 157,
    "reconcile.real.ts": 142,
    "bench.real.ts": 136,
    "service-ca-bundle.real.ts": 121,
    "subscriptions-access.real.ts": 108,
    "policy.real.ts": 92,
    "operator-rename.real.ts": 84,
    "webhook.real.ts": 82,
    "operator-teams.real.ts": 81,
    "openshift-proxy.real.ts": 72,
    "errors.real.ts": 54,
    "fleet.real.ts": 52,
    "runners.real.ts": 42,
    "structural-schema.real.ts": 40,
    "plugins.real.ts": 38,
    "start.real.ts": 35,
    "import-adoption.real.ts": 30,
    "locking.real.ts": 30,
    "provider-rule.real.ts": 27,
    "bench-load.real.ts": 11,
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
