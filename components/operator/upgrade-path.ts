/**
 * Which upgrades OLM would take, checked against what runs: the installed CSV is the one whose
 * name the stack's operator Deployment carries in `OPERATOR_CONDITION_NAME` (deployments.ts,
 * as OLM sets it). A new CSV of another name is an upgrade, allowed when it names the installed
 * CSV in `spec.replaces` or `spec.skips` (OLM's resolver follows exactly those edges, and
 * `olm.skipRange`: operator-framework/operator-lifecycle-manager
 * pkg/controller/registry/resolver/cache/predicates.go, `ReplacesPredicate`, `SkipRangeIncludesPredicate`), and when the running operator's
 * OperatorCondition does not say `Upgradeable=False` (pkg/controller/operators/olm/
 * operatorconditions.go, `isOperatorUpgradeable`: a `spec.overrides` entry first, then
 * `status.conditions`, whose `observedGeneration` must match the object's generation).
 * Pure: the reads are made by upgrade.ts.
 */
import type { ObjectRead } from "../shared/object-presence";
import { describeValue } from "../shared/problems";
import { OPERATOR_CONDITION_NAME_ENV } from "./deployments";

export interface UpgradeEdges {
    csvName: string;
    replaces?: string;
    skips: readonly string[];
    /** `olm.skipRange`: not evaluated here (no semver range parser); its presence allows the jump with a warning. */
    skipRange?: string;
}

/** The CSV name the running Deployment was installed from, or undefined when none runs. */
export function installedCsvOf(deployment: ObjectRead): string | undefined {
    if (typeof deployment !== "object") {
        return undefined;
    }
    const containers = ((deployment.spec as { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } })
        ?.template?.spec?.containers ?? []) as { env?: { name: string; value?: string }[] }[];
    return containers.flatMap((c) => c.env ?? []).find((e) => e.name === OPERATOR_CONDITION_NAME_ENV)?.value;
}

export type PathVerdict = { ok: true; warning?: string } | { ok: false; message: string };

/** Whether `next` may replace the installed CSV `installed`, by OLM's edges. */
export function upgradeEdgeVerdict(installed: string, next: UpgradeEdges): PathVerdict {
    if (installed === next.csvName || next.replaces === installed || next.skips.includes(installed)) {
        return { ok: true };
    }
    if (next.skipRange !== undefined) {
        return {
            ok: true,
            warning: `${describeValue(next.csvName)} neither replaces nor skips the installed ${describeValue(installed)}; its olm.skipRange ${describeValue(next.skipRange)} is not evaluated by this stack, so the jump is applied as OLM would only if the installed version is in that range`,
        };
    }
    return {
        ok: false,
        message: `${describeValue(next.csvName)} does not replace or skip the installed ${describeValue(installed)} (spec.replaces: ${describeValue(next.replaces ?? null)}, spec.skips: ${describeValue(next.skips)}): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)`,
    };
}

interface Condition {
    type?: string;
    status?: string;
    message?: string;
    observedGeneration?: number;
}

/** OLM's `isOperatorUpgradeable` over an OperatorCondition as read (absent: upgradeable). */
export function upgradeableVerdict(condition: ObjectRead): PathVerdict {
    if (typeof condition !== "object") {
        return { ok: true };
    }
    const spec = (condition.spec ?? {}) as { overrides?: Condition[] };
    const status = (condition.status ?? {}) as { conditions?: Condition[] };
    const generation = (condition.metadata as { generation?: number } | undefined)?.generation;
    const override = (spec.overrides ?? []).find((c) => c.type === "Upgradeable");
    if (override) {
        return override.status === "True"
            ? { ok: true }
            : { ok: false, message: `the running operator is not upgradeable (OperatorCondition override): ${override.message ?? ""}` };
    }
    const reported = (status.conditions ?? []).find((c) => c.type === "Upgradeable");
    if (reported && reported.observedGeneration !== generation) {
        return {
            ok: false,
            message: `the running operator's OperatorCondition Upgradeable=${reported.status} is outdated (observedGeneration ${reported.observedGeneration ?? "unset"}, generation ${generation ?? "unset"})`,
        };
    }
    if (reported?.status === "False") {
        return { ok: false, message: `the running operator is not upgradeable: ${reported.message ?? ""}` };
    }
    return { ok: true };
}
