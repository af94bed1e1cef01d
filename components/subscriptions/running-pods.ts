/**
 * Running pods keep their entitlements (seed 000: "Non-terminated pods which inject the deleted
 * ClusterBundle are not impacted"). The Shared Resource CSI driver would impact them: when a share is
 * deleted it removes the files from every volume that mounted it (pkg/csidriver/driver.go
 * `shareDeleteRanger`), and whenever a share or its source changes it reviews each mounting pod's
 * access again and empties the volume of a pod that lost `use` ("lostPermissions" in
 * `innerShareUpdateRanger`). So when an update drops a share (a ClusterBundle removed from config, or
 * a reference removed or renamed, which renames its share), the share stays, with everything a
 * running pod needs to keep reading it (its ClusterRole's `use`, the copy in the source namespace,
 * the driver's access to it), for as long as a non-terminated pod mounts it; the first update after
 * the last such pod ends deletes it. `subscriptions.removedShares: deleteAtOnce` deletes at once.
 * New pods cannot ask for a removed ClusterBundle (the webhook refuses it: it no longer exists).
 *
 * What ran before is what this stack declared in its last update: it publishes, per ClusterBundle,
 * its shares with the object each copies and the roles it aggregates to as the stack output
 * `subscriptionShareGrants`, kept shares included, and the next update reads that output back
 * (components/shared/previous-update.ts). The program cannot list the cluster's shares itself:
 * Kubernetes resources in Pulumi are read by name (`.get`), and the names of shares it no longer
 * declares are exactly what it would need. Which pods mount a share it asks the API server (a list
 * of pods, reduced to their CSI volumes as each page arrives); no Secret is read.
 */
import * as pulumi from "@pulumi/pulumi";
import { SHARED_RESOURCE_CSI_DRIVER } from "../../webhook/api";
import { ClusterBundleDeclaration, ClusterBundleReference, referencesOf } from "./bundles";
import { RemovedSharesPolicy } from "./rules";
import type { CollectionRead } from "../shared/object-presence";
import { byEntryKey, byText } from "../shared/order";

/** What a share copies: the original's kind, namespace and name. */
export interface ShareSource {
    kind: "Secret" | "ConfigMap";
    namespace: string;
    name: string;
}

/** Per ClusterBundle: its share names, the roles it aggregates to, and what each share copies (absent in outputs of earlier releases). */
export type ShareGrants = Record<string, { shares: string[]; roles: string[]; sources?: Record<string, ShareSource> }>;

/** A share an update no longer declares that it keeps, because running pods mount it. */
export interface KeptShare {
    reference: ClusterBundleReference;
    /** The roles its ClusterRole aggregated to when it was last declared (a removed bundle's ClusterRole keeps them). */
    roles: string[];
    /** The running pods that mount it (`namespace/name`), sorted. */
    pods: string[];
}

function grantOf(references: readonly ClusterBundleReference[], roles: readonly string[]): ShareGrants[string] {
    return {
        shares: [...new Set(references.map((r) => r.share))].sort(),
        roles: [...roles].sort(),
        sources: Object.fromEntries(
            [...references]
                .sort(byText((r) => r.share))
                .map((r) => [r.share, { kind: r.kind, namespace: r.ref.namespace, name: r.ref.name }]),
        ),
    };
}

/** This update's grants: the declared bundles' shares, and the kept ones under their bundles. */
export function shareGrantsOf(bundles: readonly ClusterBundleDeclaration[], kept: readonly KeptShare[] = []): ShareGrants {
    const grants: ShareGrants = {};
    for (const bundle of [...bundles].sort(byText((b) => b.name))) {
        const own = kept.filter((k) => k.reference.bundle === bundle.name).map((k) => k.reference);
        grants[bundle.name] = grantOf([...referencesOf(bundle), ...own], bundle.aggregateToClusterRoles);
    }
    for (const share of kept) {
        if (bundles.some((bundle) => bundle.name === share.reference.bundle)) continue;
        const all = kept.filter((k) => k.reference.bundle === share.reference.bundle);
        grants[share.reference.bundle] = grantOf(
            all.map((k) => k.reference),
            share.roles,
        );
    }
    return Object.fromEntries(Object.entries(grants).sort(byEntryKey));
}

/** A share the previous update had that this one does not declare, with what is known of it. */
export interface DroppedShare {
    bundle: string;
    share: string;
    /** What it copies; unknown when the previous update's output predates `sources`. */
    source?: ShareSource;
    roles: string[];
    /** Whether its whole ClusterBundle is gone. */
    bundleRemoved: boolean;
}

export function droppedShares(previous: ShareGrants, current: readonly ClusterBundleDeclaration[]): DroppedShare[] {
    const dropped: DroppedShare[] = [];
    for (const [bundle, before] of Object.entries(previous).sort(byEntryKey)) {
        const now = current.find((b) => b.name === bundle);
        const declared = new Set(now ? referencesOf(now).map((r) => r.share) : []);
        for (const share of before.shares) {
            if (declared.has(share)) continue;
            dropped.push({ bundle, share, source: before.sources?.[share], roles: before.roles, bundleRemoved: now === undefined });
        }
    }
    return dropped;
}

/** The share a pod volume mounts, if it is a Shared Resource CSI volume. */
function shareOfVolume(volume: unknown): string | undefined {
    const csi = (volume as { csi?: { driver?: unknown; volumeAttributes?: Record<string, unknown> } } | null)?.csi;
    if (!csi || csi.driver !== SHARED_RESOURCE_CSI_DRIVER) return undefined;
    const attributes = csi.volumeAttributes ?? {};
    const share = attributes.sharedSecret ?? attributes.sharedConfigMap;
    return typeof share === "string" ? share : undefined;
}

/**
 * A pod reduced to what the check reads, or nothing when it mounts no share or has terminated
 * (phase Succeeded or Failed: kubelet has unmounted its volumes).
 */
export function podShareUse(pod: Record<string, unknown>): { pod: string; shares: string[] } | undefined {
    const phase = (pod.status as { phase?: unknown } | undefined)?.phase;
    if (phase === "Succeeded" || phase === "Failed") return undefined;
    const volumes = (pod.spec as { volumes?: unknown } | undefined)?.volumes;
    const shares = Array.isArray(volumes) ? volumes.map(shareOfVolume).filter((share): share is string => share !== undefined) : [];
    if (shares.length === 0) return undefined;
    const metadata = (pod.metadata ?? {}) as { namespace?: unknown; name?: unknown };
    return { pod: `${String(metadata.namespace)}/${String(metadata.name)}`, shares };
}

/** Per share, the running pods that mount it. */
export function podsByShare(pods: readonly Record<string, unknown>[]): Map<string, string[]> {
    const users = new Map<string, string[]>();
    for (const pod of pods) {
        const use = podShareUse(pod);
        for (const share of use?.shares ?? []) users.set(share, [...(users.get(share) ?? []), use!.pod]);
    }
    return users;
}

const list = (items: readonly string[], limit = 5) => {
    const shown = items.slice(0, limit).map((item) => JSON.stringify(item));
    return items.length > limit ? `${shown.join(", ")} and ${items.length - limit} more` : shown.join(", ");
};

/** The configured policy, or `disabled`: the capability is off, so nothing of it stays. */
export type RemovalPolicy = RemovedSharesPolicy | "disabled";

export interface RemovalPlan {
    /** The dropped shares kept for running pods. */
    kept: KeptShare[];
    /** This update's grants (declared and kept), for the stack output. */
    grants: ShareGrants;
    /** One line per ClusterBundle whose change keeps or deletes shares, or revokes a role. */
    warnings: string[];
}

/**
 * What becomes of the shares this update drops: with `keepWhileInUse`, those a running pod mounts are
 * kept (pods from `pods`; "unknown" when the cluster cannot be asked keeps every one whose source is
 * known), the others deleted; with `deleteAtOnce`, all deleted. Each line names bundle, shares and
 * pods. A share whose source the previous output does not record cannot be kept (its copy is unknown).
 */
export function planRemovedShares(
    previous: ShareGrants | undefined,
    clusterBundles: readonly ClusterBundleDeclaration[],
    policy: RemovalPolicy,
    pods: CollectionRead,
): RemovalPlan {
    const dropped = droppedShares(previous ?? {}, clusterBundles);
    const users = pods === "unknown" ? undefined : podsByShare(pods);
    const kept: KeptShare[] = [];
    const warnings: string[] = [];
    const byBundle = new Map<string, DroppedShare[]>();
    for (const share of dropped) byBundle.set(share.bundle, [...(byBundle.get(share.bundle) ?? []), share]);
    for (const [bundle, shares] of byBundle) {
        const who = `ClusterBundle ${JSON.stringify(bundle)}${shares[0].bundleRemoved ? " is removed from cluster-platform:subscriptions.clusterBundles" : ""}`;
        const deleted: DroppedShare[] = [];
        const keptHere: KeptShare[] = [];
        for (const share of shares) {
            const mounting = users?.get(share.share) ?? [];
            const keep = policy === "keepWhileInUse" && share.source !== undefined && (users === undefined || mounting.length > 0);
            if (!keep) {
                deleted.push(share);
                continue;
            }
            const source = share.source!;
            const kind = source.kind === "Secret" ? "entitlements" : "yumRepositories";
            keptHere.push({
                reference: {
                    bundle,
                    source: kind,
                    kind: source.kind,
                    ref: { namespace: source.namespace, name: source.name },
                    share: share.share,
                },
                roles: share.roles,
                pods: [...mounting].sort(),
            });
        }
        kept.push(...keptHere);
        for (const share of keptHere) {
            warnings.push(
                users === undefined
                    ? `${who}: share ${JSON.stringify(share.reference.share)} is kept (the cluster cannot be asked which pods mount it); an update with the cluster reachable deletes it once no running pod does`
                    : `${who}: share ${JSON.stringify(share.reference.share)} is kept while running pods mount it (${list(share.pods)}), with its ClusterRole's use, its copy and the driver's access; the first update after they end deletes it`,
            );
        }
        if (deleted.length > 0) {
            const unknownSource = deleted.filter((share) => share.source === undefined);
            const why =
                policy === "disabled"
                    ? " (subscriptions.enabled is false: nothing of the capability stays)"
                    : policy === "deleteAtOnce"
                      ? " (subscriptions.removedShares: deleteAtOnce)"
                      : unknownSource.length > 0
                        ? " (the previous update did not record what they copy, so they cannot be kept)"
                        : " (no running pod mounts them)";
            warnings.push(
                `${who}: shares ${list(deleted.map((share) => share.share))} are deleted${why}; the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
            );
        }
    }
    // A role dropped from aggregateToClusterRoles revokes `use` through it at once (the ClusterRole changes).
    for (const [bundle, before] of Object.entries(previous ?? {}).sort(byEntryKey)) {
        const now = clusterBundles.find((b) => b.name === bundle);
        if (!now) continue;
        const revoked = before.roles.filter((role) => !now.aggregateToClusterRoles.includes(role));
        const stay = before.shares.filter((share) => referencesOf(now).some((r) => r.share === share));
        if (revoked.length > 0 && stay.length > 0) {
            warnings.push(
                `ClusterBundle ${JSON.stringify(bundle)} no longer aggregates to ${list(revoked)}: service accounts that could use it only through ${revoked.length === 1 ? "that role" : "those roles"} lose "use" on shares ${list(stay)}; the Shared Resource CSI driver re-checks access when a share or its Secret/ConfigMap changes (the next entitlement rotation) and then empties the volumes of their running pods`,
            );
        }
    }
    return { kept, grants: shareGrantsOf(clusterBundles, kept), warnings };
}

/** A running pod's CSI volumes are all the check reads: each pod is reduced to them as its page arrives. */
export function podSharesOnly(pod: Record<string, unknown>): Record<string, unknown> | undefined {
    const use = podShareUse(pod);
    if (!use) return undefined;
    const [namespace, name] = use.pod.split("/");
    return {
        metadata: { namespace, name },
        spec: {
            volumes: use.shares.map((share) => ({
                csi: { driver: SHARED_RESOURCE_CSI_DRIVER, volumeAttributes: { sharedSecret: share } },
            })),
        },
    };
}

/**
 * Plans, and says in the preview, what this update does to the shares the previous one declared:
 * `listPods` is asked only when shares are dropped and the policy keeps them.
 */
export async function keepSharesOfRunningPods(
    previous: ShareGrants | undefined,
    clusterBundles: readonly ClusterBundleDeclaration[],
    policy: RemovalPolicy,
    listPods: () => Promise<CollectionRead>,
): Promise<RemovalPlan> {
    const needsPods = policy === "keepWhileInUse" && droppedShares(previous ?? {}, clusterBundles).some((share) => share.source);
    const plan = planRemovedShares(previous, clusterBundles, policy, needsPods ? await listPods() : []);
    for (const warning of plan.warnings) pulumi.log.warn(`subscriptions: ${warning}`);
    return plan;
}
