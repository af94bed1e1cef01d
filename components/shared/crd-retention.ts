/**
 * What happens to the CustomResourceDefinitions the stack installs when their owner (an operator,
 * the subscription capability) leaves config, a new bundle drops one, or the stack is destroyed.
 * Pure: no Pulumi imports.
 *
 * Every CRD is declared with `retainOnDelete` unless its operator opts in with
 * `operators[].deleteCrdsOnRemoval`: deleting a CRD deletes every custom resource of it, and OLM
 * never deletes an operator's owned CRDs, "in order to prevent data loss" (operator-framework/olm-docs
 * content/en/docs/Tasks/uninstall-operator.md; seed 002, "Upgrade / Downgrade Strategy", leaves
 * supporting resources behind for the same reason). The engine reads the option from
 * the resource's state, not from the program: a delete step of a resource whose last update set
 * `retainOnDelete` drops it from the stack without calling the provider (pulumi/pulumi
 * pkg/resource/deploy/step.go, DeleteStep.Apply: `else if s.old.RetainOnDelete`). So what a
 * removal does is decided by the update before it, and a program that no longer declares a CRD
 * cannot name it; the stack therefore publishes what it installed (the `installedCrds` output)
 * and reads it back (components/shared/previous-update.ts) on the next update, whose preview names each CRD that leaves the stack and
 * what happens to it.
 */
import { byEntryKey } from "./order";

export type OnRemoval = "keep" | "delete";

export interface InstalledCrd {
    /** Who installs it: `operator <name>` or `subscriptions`. */
    owner: string;
    /** What removing it from the stack (or destroying the stack) does to it. */
    onRemoval: OnRemoval;
}

/** CRD name → owner and fate, keys sorted (a stack output, so deterministic). */
export type InstalledCrds = Record<string, InstalledCrd>;

export interface CrdOwner {
    owner: string;
    crds: readonly string[];
    /** True when the owner opted in to deleting its CRDs on removal. */
    deleteOnRemoval: boolean;
}

export function installedCrds(owners: readonly CrdOwner[]): InstalledCrds {
    const entries = owners.flatMap((o) =>
        o.crds.map((crd) => [crd, { owner: o.owner, onRemoval: o.deleteOnRemoval ? "delete" : "keep" }] as const),
    );
    return Object.fromEntries(entries.sort(byEntryKey));
}

export interface RetentionMessages {
    /** Info lines: per owner, the CRDs kept (or, opted in, deleted) when it is removed or the stack destroyed. */
    infos: string[];
    /** Warning lines: CRDs the previous update installed that this one no longer declares, and their fate. */
    warnings: string[];
}

function byOwner(crds: InstalledCrds, onRemoval: OnRemoval): Map<string, string[]> {
    const grouped = new Map<string, string[]>();
    for (const [name, crd] of Object.entries(crds)) {
        if (crd.onRemoval === onRemoval) {
            grouped.set(crd.owner, [...(grouped.get(crd.owner) ?? []), name]);
        }
    }
    return new Map([...grouped].sort(byEntryKey));
}

/** What the preview says about CRDs: what each owner's removal would do, and what this update does to the CRDs it drops. */
export function retentionMessages(current: InstalledCrds, previous: InstalledCrds | undefined): RetentionMessages {
    const infos: string[] = [];
    for (const [owner, names] of byOwner(current, "keep")) {
        infos.push(
            `${owner}: CRDs kept in the cluster, with their custom resources, when it is removed from config or the stack is destroyed (retainOnDelete): ${names.join(", ")}`,
        );
    }
    for (const [owner, names] of byOwner(current, "delete")) {
        infos.push(
            `${owner}: CRDs DELETED, with every custom resource in them, when it is removed from config or the stack is destroyed (deleteCrdsOnRemoval: true): ${names.join(", ")}`,
        );
    }
    const dropped: InstalledCrds = Object.fromEntries(Object.entries(previous ?? {}).filter(([name]) => current[name] === undefined));
    const warnings: string[] = [];
    for (const [owner, names] of byOwner(dropped, "keep")) {
        warnings.push(
            `${owner}: CRDs no longer declared, left in the cluster with their custom resources (retainOnDelete; the stack stops managing them): ${names.join(", ")}; delete them with kubectl once nothing needs their data`,
        );
    }
    for (const [owner, names] of byOwner(dropped, "delete")) {
        warnings.push(
            `${owner}: CRDs no longer declared, DELETED with every custom resource in them (deleteCrdsOnRemoval was true at the last update): ${names.join(", ")}`,
        );
    }
    return { infos, warnings };
}
