/**
 * The admission decision as a pure function: pod + namespace + visible bundles + key sets +
 * access decisions → JSON Patch (with warnings) or a denial. No I/O; the server gathers the inputs
 * from its caches (see `prepareInjection` for what it must look up first).
 */
import { ANNOTATIONS, type ObjectReference } from "./api";
import { containerOperations, injectedMountsOf, volumeOperations } from "./containers";
import {
    type Admission,
    type BundleInfo,
    type Denial,
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
import { ENTITLEMENTS_VOLUME, type Planner, YUM_REPOS_VOLUME, isInjectedVolumeName, keyLocation, planMounts } from "./mounts";
import { CONTAINER_LISTS, type Pod, podServiceAccount } from "./pod";
import { type Selection, applyAccess, formatGenerations, sameGenerations, selectBundles } from "./selection";
import { compareText } from "../components/shared/order";
import { isRecord } from "../components/shared/records";

function admit(patch: JsonPatchOperation[], warnings: string[], injected: InjectedGenerations, skipped?: SkippedBundle[]): Admission {
    return skipped && skipped.length > 0
        ? { allowed: true, patch, warnings, injected, skipped }
        : { allowed: true, patch, warnings, injected };
}

const NOTHING: InjectedGenerations = { bundles: {}, clusterBundles: {} };

export interface Preparation {
    /** The bundle selection (handed back to `decideInjection` so annotations are read once). */
    selection: Selection;
    /** ClusterBundles whose access the pod's service account needs reviewed. */
    accessReviews: string[];
    /** The Secrets / ConfigMaps the decision reads key names of (a ClusterBundle's at its copy). */
    lookups: KeyLookups;
}

/** What the server must have at hand before `decideInjection` (undefined: nothing to look up). */
export function prepareInjection(
    input: Pick<InjectionInput, "pod" | "namespace" | "bundles" | "clusterBundles"> & { keys?: Pick<KeySets, "sourceNamespace"> },
): Preparation | undefined {
    if (mirrorPod(input.pod)) return undefined;
    const selection = selectBundles(input.pod.metadata.annotations ?? {}, input.namespace, input.bundles, input.clusterBundles);
    if ("allowed" in selection) return undefined;
    const lookups: KeyLookups = { Secret: new Map(), ConfigMap: new Map() };
    const add = (kind: ReferencedKind, location: { namespace: string; name: string } | undefined) => {
        if (!location) return;
        let names = lookups[kind].get(location.namespace);
        if (!names) lookups[kind].set(location.namespace, (names = new Set()));
        names.add(location.name);
    };
    const keys = input.keys ?? {};
    const note = (bundle: BundleInfo, clusterScoped: boolean) => {
        const local = (ref: ObjectReference) =>
            clusterScoped ? ref : { name: ref.name, namespace: ref.namespace ?? bundle.namespace ?? input.namespace };
        for (const ref of bundle.entitlements) add("Secret", keyLocation(keys, clusterScoped, local(ref)));
        for (const ref of bundle.yumRepositories) add("ConfigMap", keyLocation(keys, clusterScoped, local(ref)));
    };
    selection.bundles.forEach((bundle) => note(bundle, false));
    selection.clusterBundles.forEach(({ bundle }) => note(bundle, true));
    if (selection.bundles.length === 0 && selection.clusterBundles.length === 0) return undefined;
    return { selection, accessReviews: selection.clusterBundles.map(({ bundle }) => bundle.name), lookups };
}

/**
 * A mirror pod: kubelet's copy of a static pod (annotation `kubernetes.io/config.mirror`). Its
 * volumes are the static pod's, which kubelet mounts from its manifest, and the ServiceAccount
 * admission plugin refuses a mirror pod that references Secrets, ConfigMaps or a service account
 * (kubernetes plugin/pkg/admission/serviceaccount/admission.go: "a mirror pod may not reference
 * secrets"), so the webhook leaves mirror pods alone.
 */
export const MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror";

export function mirrorPod(pod: Pod): boolean {
    return pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] !== undefined;
}

/** The labels kubelet sets on every node from its OS (kubernetes pkg/kubelet/kubelet_node_status.go `initialNode`). */
const OS_LABELS = ["kubernetes.io/os", "beta.kubernetes.io/os"];
/** Set by kubelet on Windows nodes only (k8s.io/api/core/v1 `LabelWindowsBuild`). */
const WINDOWS_BUILD_LABEL = "node.kubernetes.io/windows-build";

interface Requirement {
    key?: unknown;
    operator?: unknown;
    values?: unknown;
}

/**
 * Whether a node selector requirement can hold on a Linux node, whose labels are `kubernetes.io/os:
 * linux` (and the beta one) and no `node.kubernetes.io/windows-build`
 * (k8s.io/component-helpers/scheduling/corev1/nodeaffinity: In, NotIn, Exists, DoesNotExist, and Gt/Lt,
 * which compare integers and so fail on "linux" or a missing label). Requirements on other keys can.
 */
function admitsLinux(requirement: Requirement): boolean {
    const values = Array.isArray(requirement.values) ? requirement.values : [];
    const key = typeof requirement.key === "string" ? requirement.key : "";
    const value = OS_LABELS.includes(key) ? "linux" : key === WINDOWS_BUILD_LABEL ? undefined : null;
    if (value === null) return true;
    switch (requirement.operator) {
        case "In":
            return value !== undefined && values.includes(value);
        case "NotIn":
            return value === undefined || !values.includes(value);
        case "Exists":
            return value !== undefined;
        case "DoesNotExist":
            return value === undefined;
        case "Gt":
        case "Lt":
            return false;
        default:
            return true; // the API server refuses other operators; nothing is inferred from one
    }
}

/**
 * Why the pod cannot run on a Linux node, if it cannot. The entitlement paths and the Shared
 * Resource CSI driver are Linux-only, so such a pod's subscription volumes could never be mounted.
 * Read from what the scheduler requires of a node: `spec.os.name` (kubernetes
 * staging/src/k8s.io/api/core/v1/types.go `PodOS`), `nodeSelector`, and the required node affinity,
 * whose terms are ORed and each term's requirements ANDed (an empty term matches no node). Tolerations
 * are not read: a toleration lets a pod onto a tainted node but never keeps it off another
 * (pkg/scheduler/framework/plugins/tainttoleration), so no set of tolerations makes a pod Windows-only.
 */
export function windowsNode(pod: Pod): string | undefined {
    const spec = pod.spec as Record<string, unknown>;
    const os = spec.os as { name?: unknown } | undefined;
    if (os && typeof os === "object" && os.name === "windows") return "spec.os.name: windows";
    const selector = isRecord(spec.nodeSelector) ? spec.nodeSelector : {};
    for (const key of OS_LABELS) {
        const value = selector[key];
        if (typeof value === "string" && value !== "linux") return `nodeSelector ${key}: ${value}`;
    }
    if (typeof selector[WINDOWS_BUILD_LABEL] === "string") return `nodeSelector ${WINDOWS_BUILD_LABEL}`;
    const affinity = isRecord(spec.affinity) && isRecord(spec.affinity.nodeAffinity) ? spec.affinity.nodeAffinity : {};
    const required = affinity.requiredDuringSchedulingIgnoredDuringExecution;
    const terms = isRecord(required) && Array.isArray(required.nodeSelectorTerms) ? required.nodeSelectorTerms : undefined;
    if (terms === undefined || terms.length === 0) return undefined;
    const linuxTerm = terms.some((term: unknown) => {
        if (!isRecord(term)) return false;
        const expressions = Array.isArray(term.matchExpressions) ? (term.matchExpressions as Requirement[]) : [];
        const fields = Array.isArray(term.matchFields) ? term.matchFields : [];
        if (expressions.length === 0 && fields.length === 0) return false;
        return expressions.every((requirement) => isRecord(requirement) && admitsLinux(requirement));
    });
    return linuxTerm ? undefined : "required node affinity: no node selector term admits a Linux node";
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

interface Requested {
    bundles: ReadonlySet<string>;
    clusterBundles: ReadonlySet<string>;
}

/** One attempt at injecting exactly these bundles: the patch with its warnings, or the denial it meets. */
function attempt(
    pod: Pod,
    namespace: string,
    bundles: readonly BundleInfo[],
    clusterBundles: readonly BundleInfo[],
    keys: KeySets,
    plan: Planner,
): Admission | Denial {
    if (bundles.length === 0 && clusterBundles.length === 0) return admit([], [], NOTHING);
    const mounts = plan(bundles, clusterBundles, namespace, keys);
    if ("allowed" in mounts) return mounts;
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
        bundles: Object.fromEntries(bundles.map((bundle) => [bundle.name, bundle.generation])),
        clusterBundles: Object.fromEntries(clusterBundles.map((bundle) => [bundle.name, bundle.generation])),
    };
    const patch = [...generationsAnnotation(pod, injected), ...volumeOperations(pod, mounts.volumes), ...containers.operations];
    return admit(patch, [...mounts.warnings, ...containers.warnings], injected);
}

/**
 * An always-inject bundle the pod did not ask for never refuses the pod. When the whole selection
 * cannot be injected, the requested bundles are tried alone (their denial is the pod's answer); then
 * each always-inject bundle is tried with them, and one that cannot be injected (its mount point
 * taken by the pod's own volume or file, a reserved volume name, its Secret missing or unreadable,
 * keys that clash with a requested bundle's) is left out with a warning naming why, and counted. If
 * the rest still cannot go in together (their keys clash with each other), none of them is injected:
 * the webhook does not pick one of two conflicting bundles the pod never named.
 */
function withoutUnusable(
    pod: Pod,
    namespace: string,
    selected: { bundles: readonly BundleInfo[]; clusterBundles: readonly BundleInfo[] },
    requested: Requested,
    keys: KeySets,
    plan: Planner,
): { outcome: Admission | Denial; warnings: string[]; skipped: SkippedBundle[] } {
    const named = {
        bundles: selected.bundles.filter((bundle) => requested.bundles.has(bundle.name)),
        clusterBundles: selected.clusterBundles.filter((bundle) => requested.clusterBundles.has(bundle.name)),
    };
    const base = attempt(pod, namespace, named.bundles, named.clusterBundles, keys, plan);
    const warnings: string[] = [];
    const skipped: SkippedBundle[] = [];
    if (!base.allowed) return { outcome: base, warnings, skipped };
    const skip = (bundle: BundleInfo, cluster: boolean, reason: SkippedBundle["reason"]) =>
        skipped.push({ kind: cluster ? "ClusterBundle" : "Bundle", bundle: cluster ? bundle.name : `${namespace}/${bundle.name}`, reason });
    const usable = { bundles: [...named.bundles], clusterBundles: [...named.clusterBundles] };
    for (const [bundle, cluster] of [
        ...selected.bundles.map((bundle): [BundleInfo, boolean] => [bundle, false]),
        ...selected.clusterBundles.map((bundle): [BundleInfo, boolean] => [bundle, true]),
    ]) {
        if ((cluster ? requested.clusterBundles : requested.bundles).has(bundle.name)) continue;
        const alone = cluster
            ? attempt(pod, namespace, named.bundles, [...named.clusterBundles, bundle], keys, plan)
            : attempt(pod, namespace, [...named.bundles, bundle], named.clusterBundles, keys, plan);
        if (alone.allowed) {
            (cluster ? usable.clusterBundles : usable.bundles).push(bundle);
            continue;
        }
        warnings.push(
            `always-inject ${cluster ? "ClusterBundle" : "Bundle"} ${JSON.stringify(bundle.name)} not injected: ${alone.message}`,
        );
        skip(bundle, cluster, alone.reason);
    }
    usable.bundles.sort(byBundleName);
    usable.clusterBundles.sort(byBundleName);
    const together = attempt(pod, namespace, usable.bundles, usable.clusterBundles, keys, plan);
    if (together.allowed) return { outcome: together, warnings, skipped };
    warnings.push(`always-inject bundles not injected: ${together.message}`);
    for (const bundle of usable.bundles) if (!requested.bundles.has(bundle.name)) skip(bundle, false, together.reason);
    for (const bundle of usable.clusterBundles) if (!requested.clusterBundles.has(bundle.name)) skip(bundle, true, together.reason);
    return { outcome: base, warnings, skipped };
}

function byBundleName(a: BundleInfo, b: BundleInfo): number {
    return compareText(a.name, b.name);
}

/** Whether the pod names any bundle in an inject annotation (asks for something). */
function asksForBundles(pod: Pod): boolean {
    const annotations = pod.metadata.annotations ?? {};
    return annotations[ANNOTATIONS.injectBundle] !== undefined || annotations[ANNOTATIONS.injectClusterBundle] !== undefined;
}

/**
 * Both seed algorithms, for a pod being created. `plan` may be a memo of `planMounts` (the server
 * keeps one per cluster-state version: the plan depends only on bundles and key sets), and
 * `selected` the selection `prepareInjection` made from the same maps.
 */
export function decideInjection(input: InjectionInput, plan: Planner = planMounts, selected?: Selection): InjectionDecision {
    const { pod, namespace } = input;
    if (mirrorPod(pod)) {
        return admit(
            [],
            asksForBundles(pod)
                ? [
                      `subscription bundles not injected: the pod is a mirror pod (${MIRROR_POD_ANNOTATION}), whose volumes come from its static pod's manifest on the node, and the ServiceAccount admission plugin refuses mirror pods that reference Secrets; mount entitlements in the static pod's manifest instead`,
                  ]
                : [],
            NOTHING,
        );
    }
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
    const refused: SkippedBundle[] = access.refused.map((name) => ({ kind: "ClusterBundle", bundle: name, reason: "AccessDenied" }));
    const whole = attempt(pod, namespace, selection.bundles, access.clusterBundles, input.keys, plan);
    if (whole.allowed) return admit(whole.patch, [...access.warnings, ...whole.warnings], whole.injected, refused);
    const requested: Requested = {
        bundles: selection.requestedBundles,
        clusterBundles: new Set(selection.clusterBundles.filter((item) => item.requested).map((item) => item.bundle.name)),
    };
    const reduced = withoutUnusable(
        pod,
        namespace,
        { bundles: selection.bundles, clusterBundles: access.clusterBundles },
        requested,
        input.keys,
        plan,
    );
    if (!reduced.outcome.allowed) return reduced.outcome;
    return admit(reduced.outcome.patch, [...access.warnings, ...reduced.warnings, ...reduced.outcome.warnings], reduced.outcome.injected, [
        ...refused,
        ...reduced.skipped,
    ]);
}

/**
 * An UPDATE of the `pods/ephemeralcontainers` subresource (how ephemeral containers really
 * arrive): the pod's volumes cannot change any more, so the ephemeral containers this update adds
 * (those absent from `oldObject`) get the same injected mounts as the pod's other containers (those
 * without subPath), and nothing else changes: Kubernetes refuses any change to an existing ephemeral
 * container (pkg/apis/core/validation/validation.go `ValidatePodEphemeralContainersUpdate`:
 * "existing ephemeral containers ... may not be changed"). Mirror pods are left alone.
 */
export function decideEphemeralContainers(pod: Pod, existing: ReadonlySet<string> = new Set()): InjectionDecision {
    if (mirrorPod(pod)) return admit([], [], NOTHING);
    const mounts = injectedMountsOf(pod);
    if (mounts.length === 0) return admit([], [], NOTHING);
    const containers = containerOperations(pod, ["ephemeralContainers"], mounts, (container) => !existing.has(container.name));
    if ("allowed" in containers) return containers;
    return admit(containers.operations, containers.warnings, NOTHING);
}
