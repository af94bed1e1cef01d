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
    type ReferencedKind,
} from "./decision";
import { type JsonPatchOperation, pointerToken } from "./json-patch";
import { type Planner, planMounts } from "./mounts";
import { CONTAINER_LISTS, type Pod, podServiceAccount } from "./pod";
import { type Selection, applyAccess, formatGenerations, sameGenerations, selectBundles } from "./selection";

function admit(patch: JsonPatchOperation[], warnings: string[], injected: InjectedGenerations): Admission {
    return { allowed: true, patch, warnings, injected };
}

const NOTHING: InjectedGenerations = { bundles: {}, clusterBundles: {} };

export interface Preparation {
    /** The bundle selection (handed back to `decideInjection` so annotations are read once). */
    selection: Selection;
    /** ClusterBundles whose access the pod's service account needs reviewed. */
    accessReviews: string[];
    /** Namespaces whose Secrets / ConfigMaps the decision reads key names from. */
    namespaces: Record<ReferencedKind, Set<string>>;
}

/** What the server must have at hand before `decideInjection` (undefined: nothing to look up). */
export function prepareInjection(input: Pick<InjectionInput, "pod" | "namespace" | "bundles" | "clusterBundles">): Preparation | undefined {
    const selection = selectBundles(input.pod.metadata.annotations ?? {}, input.namespace, input.bundles, input.clusterBundles);
    if ("allowed" in selection) return undefined;
    const namespaces: Preparation["namespaces"] = { Secret: new Set(), ConfigMap: new Set() };
    const note = (bundle: BundleInfo) => {
        for (const ref of bundle.entitlements) namespaces.Secret.add(ref.namespace ?? bundle.namespace ?? input.namespace);
        for (const ref of bundle.yumRepositories) namespaces.ConfigMap.add(ref.namespace ?? bundle.namespace ?? input.namespace);
    };
    selection.bundles.forEach(note);
    selection.clusterBundles.forEach(({ bundle }) => note(bundle));
    if (selection.bundles.length === 0 && selection.clusterBundles.length === 0) return undefined;
    return { selection, accessReviews: selection.clusterBundles.map(({ bundle }) => bundle.name), namespaces };
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

    const serviceAccount = `${namespace}/${podServiceAccount(pod)}`;
    const access = applyAccess(selection.clusterBundles, input.access, serviceAccount);
    if ("allowed" in access) return access;
    if (selection.bundles.length === 0 && access.clusterBundles.length === 0) return admit([], access.warnings, NOTHING);

    const mounts = plan(selection.bundles, access.clusterBundles, namespace, input.keys);
    if ("allowed" in mounts) return mounts;
    const containers = containerOperations(pod, CONTAINER_LISTS, mounts.mounts);
    if ("allowed" in containers) return containers;

    const injected: InjectedGenerations = {
        bundles: Object.fromEntries(selection.bundles.map((bundle) => [bundle.name, bundle.generation])),
        clusterBundles: Object.fromEntries(access.clusterBundles.map((bundle) => [bundle.name, bundle.generation])),
    };
    const patch = [...generationsAnnotation(pod, injected), ...volumeOperations(pod, mounts.volumes), ...containers.operations];
    return admit(patch, [...access.warnings, ...mounts.warnings, ...containers.warnings], injected);
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
