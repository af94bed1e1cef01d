/**
 * No silent loss for running pods (seed 000: "Non-terminated pods which inject the ClusterBundle
 * are not altered"). The Shared Resource CSI driver does alter them: when a share is deleted it
 * removes the files from every volume that mounted it (pkg/csidriver/driver.go
 * `shareDeleteRanger`), and whenever a share or its source changes it reviews each mounting pod's
 * access again and empties the volume of a pod that lost `use` ("lostPermissions" in
 * `innerShareUpdateRanger`). So a change that deletes a share (a ClusterBundle removed from
 * config, or a reference removed or renamed, which renames its share) or removes a role the
 * bundle aggregates to takes entitlements from running pods. The preview warns about each.
 *
 * What ran before is what this stack declared in its last update: it publishes, per ClusterBundle,
 * its shares and the roles it aggregates to as the stack output `subscriptionShareGrants`, and
 * the next update reads that output back (components/shared/previous-update.ts).
 * The program cannot list the cluster's shares itself: Kubernetes resources in Pulumi are read by
 * name (`.get`), and the names of shares it no longer declares are exactly what it would need.
 * A stack without the output (its first update, or one from before this output) warns about nothing.
 */
import * as pulumi from "@pulumi/pulumi";
import { ClusterBundleDeclaration, referencesOf } from "./bundles";
import { byEntryKey, byText } from "../shared/order";

/** Per ClusterBundle: its share names and the roles it aggregates to, sorted. */
export type ShareGrants = Record<string, { shares: string[]; roles: string[] }>;

export function shareGrantsOf(bundles: readonly ClusterBundleDeclaration[]): ShareGrants {
    return Object.fromEntries(
        [...bundles].sort(byText((bundle) => bundle.name)).map((bundle) => [
            bundle.name,
            {
                shares: referencesOf(bundle)
                    .map((r) => r.share)
                    .sort(),
                roles: [...bundle.aggregateToClusterRoles].sort(),
            },
        ]),
    );
}

const list = (items: readonly string[]) => items.map((item) => JSON.stringify(item)).join(", ");

/** One warning per ClusterBundle whose change takes entitlements from running pods, naming what they lose. */
export function runningPodLosses(previous: ShareGrants, current: ShareGrants): string[] {
    const warnings: string[] = [];
    for (const [bundle, before] of Object.entries(previous).sort(byEntryKey)) {
        const now = current[bundle];
        const who = `ClusterBundle ${JSON.stringify(bundle)}`;
        if (now === undefined) {
            warnings.push(
                `${who} is removed from cluster-platform:subscriptions.clusterBundles: its shares ${list(before.shares)} are deleted, and the Shared Resource CSI driver empties their volumes in running pods that mounted them (the pods keep running without those entitlements and yum repositories)`,
            );
            continue;
        }
        const deleted = before.shares.filter((share) => !now.shares.includes(share));
        if (deleted.length > 0) {
            warnings.push(
                `${who}: shares ${list(deleted)} are deleted (a reference was removed or renamed, which renames its share); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
            );
        }
        const revoked = before.roles.filter((role) => !now.roles.includes(role));
        const kept = before.shares.filter((share) => now.shares.includes(share));
        if (revoked.length > 0 && kept.length > 0) {
            warnings.push(
                `${who} no longer aggregates to ${list(revoked)}: service accounts that could use it only through ${revoked.length === 1 ? "that role" : "those roles"} lose "use" on shares ${list(kept)}; the Shared Resource CSI driver re-checks access when a share or its Secret/ConfigMap changes (the next entitlement rotation) and then empties the volumes of their running pods`,
            );
        }
    }
    return warnings;
}

/**
 * Warns, in the preview, about each loss this update causes against what the previous update
 * granted (its `subscriptionShareGrants` output, none on the first update); returns this update's
 * grants for the stack output. `clusterBundles` is empty when the capability is disabled (every
 * bundle is then removed).
 */
export function warnRunningPodLosses(previous: ShareGrants | undefined, clusterBundles: readonly ClusterBundleDeclaration[]): ShareGrants {
    const current = shareGrantsOf(clusterBundles);
    for (const warning of runningPodLosses(previous ?? {}, current)) {
        pulumi.log.warn(`subscriptions: ${warning}`);
    }
    return current;
}
