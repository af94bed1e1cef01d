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
import { OPERATOR_CONDITION_NAME_ENV, OPERATOR_VERSION_ANNOTATION } from "./deployments";
import { inSemVerRange, parseSemVer, parseSemVerRange } from "./semver-range";

export interface UpgradeEdges {
    csvName: string;
    replaces?: string;
    skips: readonly string[];
    /** `olm.skipRange`: a jump from an installed version inside it is allowed (semver-range.ts). */
    skipRange?: string;
}

/** What runs: the installed CSV's name and, when the Deployment records it, its version. */
export interface InstalledCsv {
    name: string;
    version?: string;
}

type PodTemplateRead = {
    metadata?: { annotations?: Record<string, string> };
    spec?: { containers?: { env?: { name: string; value?: string }[] }[] };
};

/** The CSV the running Deployment was installed from (its version when recorded), or undefined when none runs. */
export function installedCsvOf(deployment: ObjectRead): InstalledCsv | undefined {
    if (typeof deployment !== "object") {
        return undefined;
    }
    const template = ((deployment.spec as { template?: PodTemplateRead } | undefined)?.template ?? {}) as PodTemplateRead;
    const name = (template.spec?.containers ?? []).flatMap((c) => c.env ?? []).find((e) => e.name === OPERATOR_CONDITION_NAME_ENV)?.value;
    const version = template.metadata?.annotations?.[OPERATOR_VERSION_ANNOTATION];
    return name === undefined ? undefined : { name, ...(version === undefined ? {} : { version }) };
}

export type PathVerdict = { ok: true; warning?: string } | { ok: false; message: string };

/** Whether `next` may replace the installed CSV, by OLM's edges: `replaces`, `skips`, then `olm.skipRange`. */
export function upgradeEdgeVerdict(installed: InstalledCsv, next: UpgradeEdges): PathVerdict {
    if (installed.name === next.csvName || next.replaces === installed.name || next.skips.includes(installed.name)) {
        return { ok: true };
    }
    const range = next.skipRange === undefined ? undefined : skipRangeVerdict(installed, next.skipRange);
    if (range?.ok === true || range?.ok === "unknown") {
        return range.ok === true
            ? { ok: true }
            : {
                  ok: true,
                  warning: `${describeValue(next.csvName)} neither replaces nor skips the installed ${describeValue(installed.name)}; ${range.why}`,
              };
    }
    return {
        ok: false,
        message: `${describeValue(next.csvName)} does not replace or skip the installed ${describeValue(installed.name)} (spec.replaces: ${describeValue(next.replaces ?? null)}, spec.skips: ${describeValue(next.skips)}${range ? `; ${range.why}` : ""}): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)`,
    };
}

/**
 * OLM's third edge (pkg/controller/registry/resolver/resolver.go: `SkipRangeIncludesPredicate` of
 * the installed CSV's version; source_registry.go drops a range that does not parse).
 */
function skipRangeVerdict(installed: InstalledCsv, skipRange: string): { ok: true } | { ok: false | "unknown"; why: string } {
    const range = parseSemVerRange(skipRange);
    if (range instanceof Error) {
        return {
            ok: false,
            why: `its olm.skipRange ${describeValue(skipRange)} does not parse (${range.message}), and OLM ignores such a range`,
        };
    }
    if (installed.version === undefined) {
        return {
            ok: "unknown",
            why: `the running Deployment does not record its version (${OPERATOR_VERSION_ANNOTATION}: written by this stack since the skipRange check), so olm.skipRange ${describeValue(skipRange)} cannot be checked and the jump is applied; OLM would take it only if the installed version is in that range`,
        };
    }
    const version = parseSemVer(installed.version);
    if (version instanceof Error) {
        return {
            ok: false,
            why: `the installed version ${describeValue(installed.version)} is not a semantic version (${version.message})`,
        };
    }
    return inSemVerRange(version, range)
        ? { ok: true }
        : {
              ok: false,
              why: `the installed version ${describeValue(installed.version)} is outside its olm.skipRange ${describeValue(skipRange)}`,
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
