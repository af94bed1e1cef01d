/**
 * Which bundles a pod gets (steps 1-4 of both seed algorithms): the bundles its inject
 * annotations name (each must exist), plus the always-inject bundles its allow/deny annotations
 * let through; for ClusterBundles, only those the pod's service account may `get`.
 */
import { ANNOTATIONS } from "./api";
import { type AccessDecision, type BundleInfo, type Denial, type InjectedGenerations, deny, listForMessage } from "./decision";
import { isDns1123Subdomain } from "../components/shared/k8s-names";
import { byEntryKey, compareText } from "../components/shared/order";

export interface SelectedClusterBundle {
    bundle: BundleInfo;
    /** Named by the inject-cluster-bundle annotation (not only always-injected). */
    requested: boolean;
}

export interface Selection {
    /** Eligible Bundles of the pod's namespace, sorted by name. */
    bundles: BundleInfo[];
    /** Those of them named by the inject-bundle annotation (not only always-injected). */
    requestedBundles: ReadonlySet<string>;
    /** Eligible ClusterBundles, sorted by name (before the access check). */
    clusterBundles: SelectedClusterBundle[];
}

/** A comma-separated annotation value as names: trimmed, empties dropped, duplicates removed. */
export function parseNameList(value: string): string[] {
    const names = new Set<string>();
    for (const part of value.split(",")) {
        const name = part.trim();
        if (name) names.add(name);
    }
    return [...names];
}

interface NameLists {
    inject: string[];
    allow?: string[];
    deny?: string[];
}

/** Reads one kind's inject/allow/deny annotations; invalid names are added to `invalid`. */
function readLists(
    annotations: Record<string, string>,
    keys: { inject: string; allow: string; deny: string },
    invalid: string[],
): NameLists {
    const lists: NameLists = { inject: [] };
    for (const which of ["inject", "allow", "deny"] as const) {
        const value = annotations[keys[which]];
        if (value === undefined) continue;
        const names = parseNameList(value);
        const wildcardAllowed = which !== "inject";
        const bad = names.filter((name) => !(isDns1123Subdomain(name) || (wildcardAllowed && name === "*")));
        if (bad.length > 0) invalid.push(`${keys[which]}: ${listForMessage(bad)}`);
        lists[which] = names;
    }
    return lists;
}

function passesFilters(name: string, lists: NameLists): boolean {
    if (lists.deny && (lists.deny.includes("*") || lists.deny.includes(name))) return false;
    if (lists.allow && !(lists.allow.includes("*") || lists.allow.includes(name))) return false;
    return true;
}

function byName<T extends { name: string }>(a: T, b: T): number {
    return compareText(a.name, b.name);
}

function eligible(lists: NameLists, available: ReadonlyMap<string, BundleInfo>): { chosen: Map<string, boolean>; missing: string[] } {
    const chosen = new Map<string, boolean>();
    const missing: string[] = [];
    for (const name of lists.inject) {
        if (available.has(name)) chosen.set(name, true);
        else missing.push(name);
    }
    for (const bundle of available.values()) {
        if (bundle.alwaysInject && !chosen.has(bundle.name) && passesFilters(bundle.name, lists)) chosen.set(bundle.name, false);
    }
    return { chosen, missing };
}

/** Steps 1-3: the requested and always-injected bundles, or a denial naming what is invalid or missing. */
export function selectBundles(
    annotations: Record<string, string>,
    namespace: string,
    bundles: ReadonlyMap<string, BundleInfo>,
    clusterBundles: ReadonlyMap<string, BundleInfo>,
): Selection | Denial {
    const invalid: string[] = [];
    const local = readLists(
        annotations,
        { inject: ANNOTATIONS.injectBundle, allow: ANNOTATIONS.allowBundles, deny: ANNOTATIONS.denyBundles },
        invalid,
    );
    const cluster = readLists(
        annotations,
        { inject: ANNOTATIONS.injectClusterBundle, allow: ANNOTATIONS.allowClusterBundles, deny: ANNOTATIONS.denyClusterBundles },
        invalid,
    );
    if (invalid.length > 0) {
        return deny(
            "InvalidAnnotation",
            400,
            `invalid bundle names in pod annotations (a name must be a DNS-1123 subdomain; "*" is allowed only in allow/deny lists): ${invalid.join("; ")}`,
        );
    }

    const localChoice = eligible(local, bundles);
    const clusterChoice = eligible(cluster, clusterBundles);
    const missing: string[] = [];
    if (localChoice.missing.length > 0) {
        missing.push(
            `Bundle ${listForMessage(localChoice.missing)} (annotation ${ANNOTATIONS.injectBundle}) not found in namespace ${JSON.stringify(namespace)}`,
        );
    }
    if (clusterChoice.missing.length > 0) {
        missing.push(`ClusterBundle ${listForMessage(clusterChoice.missing)} (annotation ${ANNOTATIONS.injectClusterBundle}) not found`);
    }
    if (missing.length > 0) return deny("BundleNotFound", 404, missing.join("; "));

    return {
        bundles: [...localChoice.chosen.keys()].map((name) => bundles.get(name) as BundleInfo).sort(byName),
        requestedBundles: new Set(local.inject),
        clusterBundles: [...clusterChoice.chosen.entries()]
            .map(([name, requested]) => ({ bundle: clusterBundles.get(name) as BundleInfo, requested }))
            .sort((a, b) => byName(a.bundle, b.bundle)),
    };
}

export interface AccessOutcome {
    clusterBundles: BundleInfo[];
    warnings: string[];
    /** Always-inject ClusterBundles left out because the service account may not use them (each has a warning). */
    refused: string[];
}

/** `: <what was not allowed>` from a denied review, or nothing. */
function reasonOf(decision: AccessDecision | undefined): string {
    return decision && "allowed" in decision && !decision.allowed && decision.reason ? `: ${decision.reason}` : "";
}

/**
 * Step 4 (ClusterBundles): a requested ClusterBundle the service account may not use (see
 * webhook/driver-access.ts: `get` on it and the driver's `use` on each share) denies the
 * pod; an always-inject one is left out with a warning (denying would block every pod of every
 * service account the bundle's roles were not granted to). An access check that failed denies:
 * entitlements are never injected unverified, and never silently dropped either.
 */
export function applyAccess(
    selected: readonly SelectedClusterBundle[],
    access: ReadonlyMap<string, AccessDecision>,
    serviceAccount: string,
): AccessOutcome | Denial {
    const clusterBundles: BundleInfo[] = [];
    const warnings: string[] = [];
    const refused: string[] = [];
    const left: string[] = [];
    for (const { bundle, requested } of selected) {
        const decision = access.get(bundle.name);
        if (decision === undefined) {
            return deny(
                "AccessCheckFailed",
                500,
                `access of service account ${serviceAccount} to ClusterBundle ${JSON.stringify(bundle.name)} was not reviewed`,
            );
        }
        if ("error" in decision) {
            return deny(
                "AccessCheckFailed",
                503,
                `could not review access of service account ${serviceAccount} to ClusterBundle ${JSON.stringify(bundle.name)}: ${decision.error}; retry`,
            );
        }
        if (decision.allowed) clusterBundles.push(bundle);
        else if (requested) refused.push(bundle.name);
        else {
            left.push(bundle.name);
            warnings.push(
                `always-inject ClusterBundle ${JSON.stringify(bundle.name)} not injected: service account ${serviceAccount} may not use it${reasonOf(decision)}`,
            );
        }
    }
    if (refused.length > 0) {
        return deny(
            "AccessDenied",
            403,
            `service account ${serviceAccount} may not use ClusterBundle ${listForMessage(refused)}${refused.length === 1 ? reasonOf(access.get(refused[0])) : ""} (needs, in the pod's namespace, get on the ClusterBundle and use on each of its shares, as the Shared Resource CSI driver checks before mounting; bind the bundle's ClusterRole, or a role it aggregates to, with a RoleBinding in the namespace or a ClusterRoleBinding)`,
        );
    }
    return { clusterBundles, warnings, refused: left };
}

/** Step 10/11: the bundle-generations annotation value, sections and keys sorted, empty sections left out. */
export function formatGenerations(generations: InjectedGenerations): string {
    const sorted = (record: Record<string, number>) => Object.fromEntries(Object.entries(record).sort(byEntryKey));
    const value: Partial<InjectedGenerations> = {};
    if (Object.keys(generations.bundles).length > 0) value.bundles = sorted(generations.bundles);
    if (Object.keys(generations.clusterBundles).length > 0) value.clusterBundles = sorted(generations.clusterBundles);
    return JSON.stringify(value);
}

/** Whether an existing bundle-generations value records exactly these generations (whitespace and order aside). */
export function sameGenerations(existing: string | undefined, generations: InjectedGenerations): boolean {
    if (existing === undefined) return false;
    let parsed: unknown;
    try {
        parsed = JSON.parse(existing);
    } catch {
        return false;
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return false;
    if (Object.keys(parsed).some((key) => key !== "bundles" && key !== "clusterBundles")) return false;
    try {
        return (
            formatGenerations({ bundles: {}, clusterBundles: {}, ...(parsed as Partial<InjectedGenerations>) }) ===
            formatGenerations(generations)
        );
    } catch {
        return false;
    }
}
