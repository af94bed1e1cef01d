/**
 * The admission decision as a pure function: pod + namespace + visible bundles + key sets +
 * access decisions → JSON Patch (with warnings) or a denial. No I/O; the server gathers the inputs
 * from its caches (see `prepareInjection` for what it must look up first).
 */
import { ANNOTATIONS } from "./api";
import { containerOperations, injectedMountsOf, volumeOperations } from "./containers";
import {
    type Admission,
    type BundleInfo,
    type InjectedGenerations,
    type InjectionDecision,
    type InjectionInput,
    type KeyLookups,
    type KeySets,
    type ReferencedKind,
    type SkippedBundle,
    deny,
    listForMessage,
} from "./decision";
import { type JsonPatchOperation, pointerToken } from "./json-patch";
import { ENTITLEMENTS_VOLUME, type Planner, YUM_REPOS_VOLUME, isInjectedVolumeName, planMounts } from "./mounts";
import { CONTAINER_LISTS, type Pod, podServiceAccount } from "./pod";
import { type Selection, applyAccess, formatGenerations, sameGenerations, selectBundles } from "./selection";

function admit(patch: JsonPatchOperation[], warnings: string[], injected: InjectedGenerations, skipped?: SkippedBundle[]): Admission {
    return skipped && skipped.length > 0
        ? { allowed: true, patch, warnings, injected, skipped }
        : { allowed: true, patch, warnings, injected };
}

interface Usable {
    bundles: BundleInfo[];
    clusterBundles: BundleInfo[];
    warnings: string[];
    skipped: SkippedBundle[];
}

/**
 * An always-inject bundle the pod did not ask for never refuses the pod: when the plan of the
 * whole selection is a denial, each such bundle is planned alone, and one that cannot be used on
 * its own (its Secret deleted or unreadable, a reference outside its namespace, unusable keys) is
 * left out with a warning. If what remains still conflicts and the pod asked for nothing, every
 * bundle is left out with a warning. Requested bundles keep their denials.
 */
function withoutUnusable(
    selected: Usable,
    requested: { bundles: ReadonlySet<string>; clusterBundles: ReadonlySet<string> },
    namespace: string,
    keys: KeySets,
    plan: Planner,
): { usable: Usable; mounts: ReturnType<Planner> } {
    const warnings = [...selected.warnings];
    const skipped: SkippedBundle[] = [];
    const keep = (bundle: BundleInfo, cluster: boolean): boolean => {
        if ((cluster ? requested.clusterBundles : requested.bundles).has(bundle.name)) return true;
        const alone = cluster ? plan([], [bundle], namespace, keys) : plan([bundle], [], namespace, keys);
        if (!("allowed" in alone)) return true;
        const kind = cluster ? "ClusterBundle" : "Bundle";
        warnings.push(`always-inject ${kind} ${JSON.stringify(bundle.name)} not injected: ${alone.message}`);
        skipped.push({ kind, bundle: cluster ? bundle.name : `${namespace}/${bundle.name}` });
        return false;
    };
    const bundles = selected.bundles.filter((bundle) => keep(bundle, false));
    const clusterBundles = selected.clusterBundles.filter((bundle) => keep(bundle, true));
    const mounts = plan(bundles, clusterBundles, namespace, keys);
    if ("allowed" in mounts && requested.bundles.size === 0 && requested.clusterBundles.size === 0) {
        warnings.push(`always-inject bundles not injected: ${mounts.message}`);
        for (const bundle of bundles) skipped.push({ kind: "Bundle", bundle: `${namespace}/${bundle.name}` });
        for (const bundle of clusterBundles) skipped.push({ kind: "ClusterBundle", bundle: bundle.name });
        return { usable: { bundles: [], clusterBundles: [], warnings, skipped }, mounts: { volumes: [], mounts: [], warnings: [] } };
    }
    return { usable: { bundles, clusterBundles, warnings, skipped }, mounts };
}

const NOTHING: InjectedGenerations = { bundles: {}, clusterBundles: {} };

export interface Preparation {
    /** The bundle selection (handed back to `decideInjection` so annotations are read once). */
    selection: Selection;
    /** ClusterBundles whose access the pod's service account needs reviewed. */
    accessReviews: string[];
    /** The Secrets / ConfigMaps the decision reads key names of. */
    lookups: KeyLookups;
}

/** What the server must have at hand before `decideInjection` (undefined: nothing to look up). */
export function prepareInjection(input: Pick<InjectionInput, "pod" | "namespace" | "bundles" | "clusterBundles">): Preparation | undefined {
    const selection = selectBundles(input.pod.metadata.annotations ?? {}, input.namespace, input.bundles, input.clusterBundles);
    if ("allowed" in selection) return undefined;
    const lookups: KeyLookups = { Secret: new Map(), ConfigMap: new Map() };
    const add = (kind: ReferencedKind, namespace: string, name: string) => {
        let names = lookups[kind].get(namespace);
        if (!names) lookups[kind].set(namespace, (names = new Set()));
        names.add(name);
    };
    const note = (bundle: BundleInfo) => {
        for (const ref of bundle.entitlements) add("Secret", ref.namespace ?? bundle.namespace ?? input.namespace, ref.name);
        for (const ref of bundle.yumRepositories) add("ConfigMap", ref.namespace ?? bundle.namespace ?? input.namespace, ref.name);
    };
    selection.bundles.forEach(note);
    selection.clusterBundles.forEach(({ bundle }) => note(bundle));
    if (selection.bundles.length === 0 && selection.clusterBundles.length === 0) return undefined;
    return { selection, accessReviews: selection.clusterBundles.map(({ bundle }) => bundle.name), lookups };
}

/**
 * Why the pod is for Windows nodes, if it is: `spec.os.name: windows` (kubernetes
 * staging/src/k8s.io/api/core/v1/types.go PodOS: the OS the pod's containers run on) or a
 * `kubernetes.io/os: windows` node selector (the node label kubelet sets from its OS).
 */
export function windowsNode(pod: Pod): string | undefined {
    const os = pod.spec.os as { name?: unknown } | undefined;
    if (os && typeof os === "object" && os.name === "windows") return "spec.os.name: windows";
    const selector = pod.spec.nodeSelector as Record<string, unknown> | undefined;
    if (selector && typeof selector === "object" && selector["kubernetes.io/os"] === "windows")
        return "nodeSelector kubernetes.io/os: windows";
    return undefined;
}

/**
 * Volumes with a reserved name that the webhook did not add: the pod carries no bundle-generations
 * annotation, which every injection writes, so a volume of that name is the user's own and would be
 * silently replaced.
 */
function foreignReservedVolumes(pod: Pod): string[] {
    if (pod.metadata.annotations?.[ANNOTATIONS.bundleGenerations] !== undefined) return [];
    return (pod.spec.volumes ?? []).filter((volume) => isInjectedVolumeName(volume.name)).map((volume) => volume.name);
}

function generationsAnnotation(pod: Pod, injected: InjectedGenerations): JsonPatchOperation[] {
    const annotations = pod.metadata.annotations;
    if (sameGenerations(annotations?.[ANNOTATIONS.bundleGenerations], injected)) return [];
    const value = formatGenerations(injected);
    if (annotations === undefined || annotations === null) {
        return [{ op: "add", path: "/metadata/annotations", value: { [ANNOTATIONS.bundleGenerations]: value } }];
    }
    return [{ op: "add", path: `/metadata/annotations/${pointerToken(ANNOTATIONS.bundleGenerations)}`, value }];
}

/**
 * Both seed algorithms, for a pod being created. `plan` may be a memo of `planMounts` (the server
 * keeps one per cluster-state version: the plan depends only on bundles and key sets), and
 * `selected` the selection `prepareInjection` made from the same maps.
 */
export function decideInjection(input: InjectionInput, plan: Planner = planMounts, selected?: Selection): InjectionDecision {
    const { pod, namespace } = input;
    const selection = selected ?? selectBundles(pod.metadata.annotations ?? {}, namespace, input.bundles, input.clusterBundles);
    if ("allowed" in selection) return selection;
    if (selection.bundles.length === 0 && selection.clusterBundles.length === 0) return admit([], [], NOTHING);

    const windows = windowsNode(pod);
    if (windows) {
        return admit(
            [],
            [
                `subscription bundles not injected: the pod is for Windows nodes (${windows}); the entitlement paths and the Shared Resource CSI driver are Linux-only, so its volumes could not be mounted`,
            ],
            NOTHING,
        );
    }

    const serviceAccount = `${namespace}/${podServiceAccount(pod)}`;
    const access = applyAccess(selection.clusterBundles, input.access, serviceAccount);
    if ("allowed" in access) return access;
    if (selection.bundles.length === 0 && access.clusterBundles.length === 0) return admit([], access.warnings, NOTHING);

    let usable: Usable = { bundles: selection.bundles, clusterBundles: access.clusterBundles, warnings: access.warnings, skipped: [] };
    let mounts = plan(usable.bundles, usable.clusterBundles, namespace, input.keys);
    if ("allowed" in mounts) {
        const requested = {
            bundles: selection.requestedBundles,
            clusterBundles: new Set(selection.clusterBundles.filter((item) => item.requested).map((item) => item.bundle.name)),
        };
        ({ usable, mounts } = withoutUnusable(usable, requested, namespace, input.keys, plan));
        if ("allowed" in mounts) return mounts;
        if (usable.bundles.length === 0 && usable.clusterBundles.length === 0) return admit([], usable.warnings, NOTHING, usable.skipped);
    }
    const foreign = foreignReservedVolumes(pod);
    if (foreign.length > 0) {
        return deny(
            "MountConflict",
            409,
            `the pod's volume ${listForMessage(foreign)} has a name reserved for injected subscription volumes (${ENTITLEMENTS_VOLUME}, ${YUM_REPOS_VOLUME}, subscription-share-<8 hex digits>) and would be replaced; rename it`,
        );
    }
    const containers = containerOperations(pod, CONTAINER_LISTS, mounts.mounts);
    if ("allowed" in containers) return containers;

    const injected: InjectedGenerations = {
        bundles: Object.fromEntries(usable.bundles.map((bundle) => [bundle.name, bundle.generation])),
        clusterBundles: Object.fromEntries(usable.clusterBundles.map((bundle) => [bundle.name, bundle.generation])),
    };
    const patch = [...generationsAnnotation(pod, injected), ...volumeOperations(pod, mounts.volumes), ...containers.operations];
    return admit(patch, [...usable.warnings, ...mounts.warnings, ...containers.warnings], injected, usable.skipped);
}

/**
 * An UPDATE of the `pods/ephemeralcontainers` subresource (how ephemeral containers really
 * arrive): the pod's volumes cannot change any more, so new ephemeral containers get the same
 * injected mounts as its other containers (those without subPath), and nothing else changes.
 */
export function decideEphemeralContainers(pod: Pod): InjectionDecision {
    const mounts = injectedMountsOf(pod);
    if (mounts.length === 0) return admit([], [], NOTHING);
    const containers = containerOperations(pod, ["ephemeralContainers"], mounts);
    if ("allowed" in containers) return containers;
    return admit(containers.operations, containers.warnings, NOTHING);
}
