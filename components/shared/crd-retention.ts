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

/**
 * The server-side-apply field manager of every CRD the stack declares, fixed rather than the
 * provider's per-resource random one (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go,
 * `fieldManagerName`: the `pulumi.com/patchFieldManager` annotation first, then the state's,
 * else `pulumi-kubernetes-<random>`). CRDs are adopted (adoption.ts: on the pinned 4.25.0 every
 * create under server-side apply is an apply; from 4.29 only with `upsertExistingObjects`, which
 * the adopting provider sets), so a CRD that is already there (kept by an earlier removal, or made
 * by anyone) is taken back, not refused; under one fixed manager a re-added or renamed owner's
 * CRD continues the removed one's field ownership, so a field its new manifest drops is removed,
 * and `pulumi.com/patchForce` takes fields another manager (OLM, kubectl) holds.
 */
export const CRD_FIELD_MANAGER = "cluster-platform-crds";

/**
 * The field manager of a CRD's `spec.conversion` when a webhook converts it: a patch of its own,
 * so that removing the converting operator relinquishes the field (pulumi-kubernetes
 * provider/pkg/ssa/actions.go, `Relinquish`: an empty apply by the same manager). That alone
 * cannot remove a `caBundle` an injector wrote under its own manager, so the removal also sets
 * `strategy: None` with no webhook block by a merge patch, as OLM does when a
 * CSV is deleted and not replaced (operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/olm/operator.go, `handleClusterServiceVersionDeletion`;
 * components/operator/conversion-webhook-removal.ts).
 */
export const CONVERSION_FIELD_MANAGER = "cluster-platform-crd-conversion";

/**
 * What a CRD patch must carry besides its change: the provider's Check reads every CRD it is
 * given, patches included, into its CRD cache and fails without `spec.group` and
 * `spec.names.kind` (pulumi-kubernetes provider/pkg/clients/cache.go, `groupKindFromCRD`, called
 * from provider.go Check). The same values the CRD has, so applying them changes nothing (a CRD's
 * name is `<plural>.<group>`).
 */
export function crdPatchIdentity(name: string, kind: string): { group: string; names: { kind: string } } {
    return { group: name.slice(name.indexOf(".") + 1), names: { kind } };
}

/** The annotations that make the provider apply with `manager`, forcing conflicts. */
export function fieldManagerAnnotations(manager: string): Record<string, string> {
    return { "pulumi.com/patchFieldManager": manager, "pulumi.com/patchForce": "true" };
}

export interface InstalledCrd {
    /** Who installs it: `operator <name>` or `subscriptions`. */
    owner: string;
    /** What removing it from the stack (or destroying the stack) does to it. */
    onRemoval: OnRemoval;
    /** Set when its owner's webhook converts it (its conversion is reset to None when the owner leaves). */
    conversion?: "webhook";
    /** Its kind, recorded with `conversion` for the reset patch (`crdPatchIdentity`). */
    kind?: string;
}

/** CRD name → owner and fate, keys sorted (a stack output, so deterministic). */
export type InstalledCrds = Record<string, InstalledCrd>;

export interface CrdOwner {
    owner: string;
    crds: readonly string[];
    /** True when the owner opted in to deleting its CRDs on removal. */
    deleteOnRemoval: boolean;
    /** The CRDs its conversion webhook converts, with their kinds. */
    converted?: Readonly<Record<string, string>>;
}

export function installedCrds(owners: readonly CrdOwner[]): InstalledCrds {
    const entries = owners.flatMap((o) =>
        o.crds.map(
            (crd) =>
                [
                    crd,
                    {
                        owner: o.owner,
                        onRemoval: o.deleteOnRemoval ? "delete" : "keep",
                        ...(o.converted?.[crd] !== undefined ? { conversion: "webhook" as const, kind: o.converted[crd] } : {}),
                    },
                ] as const,
        ),
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
    for (const [owner, names] of byOwner(newConversionResets(current, previous), "keep")) {
        warnings.push(
            `${owner}: its conversion webhook leaves with it, so these kept CRDs get spec.conversion.strategy None (no webhook, no caBundle), as OLM sets when a CSV is removed and not replaced: ${names.join(", ")}; each custom resource is then served at every version as stored (only apiVersion rewritten, no field converted, and fields the version read does not declare pruned): read them at their stored version (status.storedVersions), or re-add an operator that converts them, before clients use another version`,
        );
    }
    for (const [owner, names] of byOwner(dropped, "delete")) {
        warnings.push(
            `${owner}: CRDs no longer declared, DELETED with every custom resource in them (deleteCrdsOnRemoval was true at the last update): ${names.join(", ")}`,
        );
    }
    return { infos, warnings };
}

/** CRD name → kind: the CRDs whose conversion the stack holds at None (carried as `conversionResets`, components/shared/previous-update.ts), keys sorted. */
export type ConversionResetState = Record<string, string>;

/**
 * The kept CRDs whose conversion the stack holds at `strategy: None` under
 * `CONVERSION_FIELD_MANAGER`: those a webhook converted at the previous update and this one no
 * longer declares, and those already reset before, until a CRD is declared again (its operator
 * re-added). Declared on every update in between, so a preview after the removal finds nothing
 * to change.
 */
export function conversionResets(
    current: InstalledCrds,
    previous: InstalledCrds | undefined,
    previousResets: ConversionResetState = {},
): ConversionResetState {
    const dropped = Object.entries(previous ?? {}).filter(([, crd]) => crd.onRemoval === "keep" && crd.conversion === "webhook");
    const entries = [...Object.entries(previousResets), ...dropped.map(([name, crd]) => [name, crd.kind ?? ""] as const)].filter(
        ([name]) => current[name] === undefined,
    );
    return Object.fromEntries(entries.sort(byEntryKey));
}

/** The kept CRDs of the previous update that a webhook converted and this update no longer declares (the warning's subject). */
export function newConversionResets(current: InstalledCrds, previous: InstalledCrds | undefined): InstalledCrds {
    return Object.fromEntries(
        Object.entries(previous ?? {}).filter(
            ([name, crd]) => current[name] === undefined && crd.onRemoval === "keep" && crd.conversion === "webhook",
        ),
    );
}
