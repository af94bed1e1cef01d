/**
 * Volumes and mounts for the selected bundles (steps 4-10 of the namespaced algorithm, 5-10 of
 * the cluster one), and the rule for bringing several sources to one directory.
 *
 * - Entitlements: the namespace Bundles' Secrets form one projected volume; each ClusterBundle
 *   Secret comes through its own Shared Resource CSI volume (the driver takes one share per
 *   volume). When exactly one such volume exists it is mounted whole at
 *   /run/secrets/etc-pki-entitlement (and keeps receiving updates); with several, every key is
 *   mounted as its own file (subPath) there, which the key-overlap check makes unambiguous.
 * - Yum repositories: the same volumes for ConfigMaps, always mounted file by file under
 *   /run/secrets, so nothing else mounted there (the service account token) is hidden.
 * - A Secret or ConfigMap referenced by several eligible bundles is mounted once.
 */
import {
    ENTITLEMENT_MOUNT_PATH,
    type ObjectReference,
    SHARED_RESOURCE_CSI_DRIVER,
    type ShareRole,
    YUM_REPOS_MOUNT_DIR,
    clusterBundleShareName,
    sourceCopyName,
} from "./api";
import { type BundleInfo, type Denial, type KeySets, type ReferencedKind, deny, joinForMessage } from "./decision";
import { SHARE_RESOURCES, type ShareRef } from "./driver-access";
import { freezeJson } from "./json-patch";
import { fingerprint, isConfigMapKey } from "../components/shared/k8s-names";
import type { Volume, VolumeMount } from "./pod";

/** Volume names the webhook owns in a pod (documented as reserved). */
export const ENTITLEMENTS_VOLUME = "subscription-entitlements";
export const YUM_REPOS_VOLUME = "subscription-yum-repos";
const SHARE_VOLUME = /^subscription-share-[0-9a-f]{8}$/;

/** The pod volume of one share: `subscription-share-<fingerprint of the share name>` (a DNS-1123 label). */
export function shareVolumeName(shareName: string): string {
    return `subscription-share-${fingerprint(shareName)}`;
}

/** Share and volume names are pure functions of their inputs; admissions repeat them, so they are remembered. */
const shareNames = new Map<string, { share: string; volume: string }>();
function shareOf(bundle: string, role: ShareRole, namespace: string, name: string): { share: string; volume: string } {
    const id = `${bundle}\n${role}\n${namespace}\n${name}`;
    let known = shareNames.get(id);
    if (!known) {
        if (shareNames.size >= 4096) shareNames.clear();
        const share = clusterBundleShareName(bundle, role, { namespace, name });
        known = { share, volume: shareVolumeName(share) };
        shareNames.set(id, known);
    }
    return known;
}

export function isInjectedVolumeName(name: string): boolean {
    return name === ENTITLEMENTS_VOLUME || name === YUM_REPOS_VOLUME || SHARE_VOLUME.test(name);
}

/** The default mode the API server would set on a projected volume; set here so re-invocation sees no difference. */
const DEFAULT_MODE = 0o644;

export interface MountPlan {
    /** Volumes to add, in a deterministic order. */
    volumes: Volume[];
    /** Mounts every container gets (ephemeral containers only those without subPath). */
    mounts: VolumeMount[];
    warnings: string[];
}

interface Source {
    kind: ReferencedKind;
    namespace: string;
    name: string;
    /** For messages: `Bundle "x"` or `ClusterBundle "y"`. */
    owner: string;
    /** Pod volume that carries it. */
    volume: string;
    /** Share name, for ClusterBundle sources. */
    share?: string;
    keys: readonly string[];
}

interface SourceKind {
    kind: ReferencedKind;
    role: ShareRole;
    refs: (bundle: BundleInfo) => readonly ObjectReference[];
    projectedVolume: string;
    shareAttribute: "sharedSecret" | "sharedConfigMap";
}

const ENTITLEMENTS: SourceKind = {
    kind: "Secret",
    role: "entitlement",
    refs: (bundle) => bundle.entitlements,
    projectedVolume: ENTITLEMENTS_VOLUME,
    shareAttribute: "sharedSecret",
};
const YUM_REPOSITORIES: SourceKind = {
    kind: "ConfigMap",
    role: "yum-repo",
    refs: (bundle) => bundle.yumRepositories,
    projectedVolume: YUM_REPOS_VOLUME,
    shareAttribute: "sharedConfigMap",
};

/**
 * The shares a ClusterBundle's pod volumes name, in mount order: one per entitlement Secret
 * (SharedSecret) and per yum repository ConfigMap (SharedConfigMap). References without a
 * namespace mount nothing (the pod is denied), so they name no share.
 */
export function clusterBundleShares(bundle: BundleInfo): ShareRef[] {
    return [ENTITLEMENTS, YUM_REPOSITORIES].flatMap((what) =>
        what
            .refs(bundle)
            .filter((ref): ref is Required<ObjectReference> => ref.namespace !== undefined)
            .map((ref) => ({
                resource: SHARE_RESOURCES[what.shareAttribute],
                name: shareOf(bundle.name, what.role, ref.namespace, ref.name).share,
            })),
    );
}

/**
 * Where the key names of a referenced object are read: a ClusterBundle's reference at its copy in the
 * source namespace when there is one (what the driver mounts), anything else where it points;
 * undefined for a reference without a namespace.
 */
export function keyLocation(
    keys: Pick<KeySets, "sourceNamespace">,
    clusterScoped: boolean,
    ref: ObjectReference,
): Required<ObjectReference> | undefined {
    if (!ref.namespace) return undefined;
    if (!clusterScoped || !keys.sourceNamespace) return { namespace: ref.namespace, name: ref.name };
    return { namespace: keys.sourceNamespace, name: sourceCopyName({ namespace: ref.namespace, name: ref.name }) };
}

function describe(source: Pick<Source, "kind" | "namespace" | "name">): string {
    return `${source.kind} ${source.namespace}/${source.name}`;
}

/** The distinct sources of one kind, Bundles first, each with its key names; or a denial. */
function collectSources(
    what: SourceKind,
    bundles: readonly BundleInfo[],
    clusterBundles: readonly BundleInfo[],
    podNamespace: string,
    keys: KeySets,
): Source[] | Denial {
    const sources = new Map<string, Source>();
    const invalid: string[] = [];
    const unreadable: string[] = [];
    const missing: string[] = [];
    const add = (bundle: BundleInfo, ref: ObjectReference, clusterScoped: boolean) => {
        const owner = `${clusterScoped ? "ClusterBundle" : "Bundle"} ${JSON.stringify(bundle.name)}`;
        const namespace = clusterScoped ? ref.namespace : (ref.namespace ?? bundle.namespace ?? podNamespace);
        if (!namespace) {
            invalid.push(`${owner} references ${what.kind} ${JSON.stringify(ref.name)} without a namespace`);
            return;
        }
        if (!clusterScoped && namespace !== podNamespace) {
            invalid.push(
                `${owner} references ${what.kind} ${namespace}/${ref.name}, outside the pod's namespace ${JSON.stringify(podNamespace)} (a projected volume reads only its own namespace)`,
            );
            return;
        }
        const id = `${namespace}/${ref.name}`;
        if (sources.has(id)) return;
        const at = keyLocation(keys, clusterScoped, { namespace, name: ref.name }) as Required<ObjectReference>;
        const copy = at.namespace !== namespace ? `its copy ${at.namespace}/${at.name}, which the source sync keeps` : undefined;
        const refused = keys.unreadable?.(what.kind, at.namespace, at.name);
        if (refused !== undefined) {
            unreadable.push(`${owner} references ${what.kind} ${id}${copy ? ` (${copy})` : ""}: ${refused}`);
            return;
        }
        const found = keys.keysOf(what.kind, at.namespace, at.name);
        if (found === undefined) {
            missing.push(`${what.kind} ${id} (referenced by ${owner}${copy ? `; ${copy}, does not exist` : ""})`);
            return;
        }
        const share = clusterScoped ? shareOf(bundle.name, what.role, namespace, ref.name) : undefined;
        sources.set(id, {
            kind: what.kind,
            namespace,
            name: ref.name,
            owner,
            volume: share ? share.volume : what.projectedVolume,
            share: share?.share,
            keys: found,
        });
    };
    for (const bundle of bundles) for (const ref of what.refs(bundle)) add(bundle, ref, false);
    for (const bundle of clusterBundles) for (const ref of what.refs(bundle)) add(bundle, ref, true);
    if (invalid.length > 0) return deny("InvalidBundle", 400, joinForMessage(invalid));
    if (unreadable.length > 0)
        return deny(
            "KeysUnreadable",
            403,
            `${joinForMessage(unreadable)} (grant it with a Role and RoleBinding for the webhook's service account: docs/subscriptions.md, "Teams' own Bundles")`,
        );
    if (missing.length > 0) return deny("ReferenceNotFound", 404, `referenced ${what.kind} not found: ${joinForMessage(missing)}`);
    return [...sources.values()];
}

/** Steps 4/5 and 7/8: no key may come from two sources, and every key must be usable as a file name. */
function checkKeys(sources: readonly Source[]): Denial | undefined {
    const seen = new Map<string, Source>();
    const overlaps: string[] = [];
    const unusable: string[] = [];
    for (const source of sources) {
        for (const key of source.keys) {
            if (!isConfigMapKey(key)) {
                unusable.push(`${describe(source)} key ${JSON.stringify(key)}`);
                continue;
            }
            const first = seen.get(key);
            if (first)
                overlaps.push(
                    `key ${JSON.stringify(key)} is in both ${describe(first)} (${first.owner}) and ${describe(source)} (${source.owner})`,
                );
            else seen.set(key, source);
        }
    }
    if (overlaps.length > 0) {
        return deny("KeyOverlap", 409, `overlapping keys in the injected bundles: ${joinForMessage(overlaps)}`);
    }
    if (unusable.length > 0) return deny("InvalidBundle", 400, `keys that cannot be mounted as files: ${joinForMessage(unusable)}`);
    return undefined;
}

function volumesFor(what: SourceKind, sources: readonly Source[]): Volume[] {
    const volumes: Volume[] = [];
    const projected = sources.filter((source) => !source.share);
    if (projected.length > 0) {
        const sourceField = what.kind === "Secret" ? "secret" : "configMap";
        volumes.push({
            name: what.projectedVolume,
            projected: { defaultMode: DEFAULT_MODE, sources: projected.map((source) => ({ [sourceField]: { name: source.name } })) },
        });
    }
    for (const source of sources) {
        if (!source.share) continue;
        volumes.push({
            name: source.volume,
            csi: { driver: SHARED_RESOURCE_CSI_DRIVER, readOnly: true, volumeAttributes: { [what.shareAttribute]: source.share } },
        });
    }
    return volumes;
}

function fileMounts(sources: readonly Source[], directory: string): VolumeMount[] {
    const mounts: VolumeMount[] = [];
    for (const source of sources) {
        for (const key of source.keys) mounts.push({ name: source.volume, mountPath: `${directory}/${key}`, subPath: key, readOnly: true });
    }
    return mounts.sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
}

/** The volumes and mounts for the eligible bundles (already access-checked), or a denial. */
export function planMounts(
    bundles: readonly BundleInfo[],
    clusterBundles: readonly BundleInfo[],
    podNamespace: string,
    keys: KeySets,
): MountPlan | Denial {
    const entitlements = collectSources(ENTITLEMENTS, bundles, clusterBundles, podNamespace, keys);
    if (!Array.isArray(entitlements)) return entitlements;
    const repositories = collectSources(YUM_REPOSITORIES, bundles, clusterBundles, podNamespace, keys);
    if (!Array.isArray(repositories)) return repositories;
    const problem = checkKeys(entitlements) ?? checkKeys(repositories);
    if (problem) return problem;

    const entitlementDir = ENTITLEMENT_MOUNT_PATH.slice(YUM_REPOS_MOUNT_DIR.length + 1);
    const shadowing = repositories.filter((source) => source.keys.includes(entitlementDir));
    if (shadowing.length > 0 && entitlements.length > 0) {
        return deny(
            "MountConflict",
            409,
            `${describe(shadowing[0])} (${shadowing[0].owner}) has a key ${JSON.stringify(entitlementDir)}, whose file would take the place of the entitlement directory ${ENTITLEMENT_MOUNT_PATH}`,
        );
    }

    const entitlementVolumes = volumesFor(ENTITLEMENTS, entitlements);
    const warnings: string[] = [];
    let entitlementMounts: VolumeMount[];
    if (entitlementVolumes.length === 1) {
        entitlementMounts = [{ name: entitlementVolumes[0].name, mountPath: ENTITLEMENT_MOUNT_PATH, readOnly: true }];
    } else {
        entitlementMounts = fileMounts(entitlements, ENTITLEMENT_MOUNT_PATH);
        if (entitlementVolumes.length > 1) {
            warnings.push(
                `entitlements come from ${entitlementVolumes.length} volumes, so each file is mounted on its own (subPath) and a changed Secret reaches this pod only when its containers restart`,
            );
        }
    }
    return {
        volumes: [...entitlementVolumes, ...volumesFor(YUM_REPOSITORIES, repositories)].map(freezeJson),
        mounts: [...entitlementMounts, ...fileMounts(repositories, YUM_REPOS_MOUNT_DIR)].map(freezeJson),
        warnings,
    };
}

/** Computes the mount plan of a bundle selection; `planMounts` or a memo of it. */
export type Planner = typeof planMounts;
