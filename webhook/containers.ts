/**
 * Puts the injected mounts into every container (init, regular and ephemeral) and volumes into the
 * pod, as JSON Patch operations against the pod as received; refuses mounts that would collide
 * with what a container already mounts. Re-running over its own result yields no operation.
 */
import { type Denial, deny, joinForMessage } from "./decision";
import { type JsonPatchOperation } from "./json-patch";
import { isInjectedVolumeName } from "./mounts";
import { CONTAINER_LISTS, type Container, type ContainerList, type Pod, type Volume, type VolumeMount } from "./pod";

/** Structural equality of JSON values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    if (Array.isArray(a)) {
        const other = b as unknown[];
        return a.length === other.length && a.every((item, i) => sameJson(item, other[i]));
    }
    const left = a as Record<string, unknown>;
    const right = b as Record<string, unknown>;
    const keys = Object.keys(left).filter((key) => left[key] !== undefined);
    if (keys.length !== Object.keys(right).filter((key) => right[key] !== undefined).length) return false;
    return keys.every((key) => sameJson(left[key], right[key]));
}

/**
 * At most one operation that turns `current` into its entries the webhook does not own plus
 * `desired`: nothing when already so, an append for a single entry, else the whole list.
 */
function listOperations<T extends { name: string }>(
    path: string,
    current: readonly T[] | undefined,
    desired: readonly T[],
): JsonPatchOperation[] {
    const owned = (current ?? []).filter((entry) => isInjectedVolumeName(entry.name));
    if (sameJson(owned, desired)) return [];
    if (current === undefined || current === null) return [{ op: "add", path, value: desired }];
    if (owned.length === 0 && desired.length === 1) return [{ op: "add", path: `${path}/-`, value: desired[0] }];
    return [
        {
            op: current.length === 0 && owned.length === 0 ? "add" : "replace",
            path,
            value: [...current.filter((entry) => !isInjectedVolumeName(entry.name)), ...desired],
        },
    ];
}

const CLEAN_PATH = /^\/(?!var\/run(\/|$))(?:[^/.][^/]*\/)*[^/.][^/]*$/;

const normalized = new Map<string, string>();

/** Absolute, normalised path; `/var/run` is treated as `/run` (a symlink in most images). */
export function normalizeMountPath(path: string): string {
    if (CLEAN_PATH.test(path)) return path;
    const known = normalized.get(path);
    if (known !== undefined) return known;
    if (normalized.size >= 1024) normalized.clear();
    const result = normalizeSlowly(path);
    normalized.set(path, result);
    return result;
}

function normalizeSlowly(path: string): string {
    const parts: string[] = [];
    for (const part of path.split("/")) {
        if (part === "" || part === ".") continue;
        if (part === "..") parts.pop();
        else parts.push(part);
    }
    if (parts[0] === "var" && parts[1] === "run") parts.splice(0, 2, "run");
    return `/${parts.join("/")}`;
}

/** The injected mount paths, and every directory above them, for lookups by normalised path. */
interface TargetIndex {
    targets: Map<string, VolumeMount>;
    /** Directory → an injected mount below it. */
    above: Map<string, VolumeMount>;
}

const indexes = new WeakMap<readonly VolumeMount[], TargetIndex>();

/** Indexes the mounts (remembered per list: a memoised plan's lists recur on every admission). */
function indexTargets(mounts: readonly VolumeMount[]): TargetIndex {
    let index = indexes.get(mounts);
    if (!index) indexes.set(mounts, (index = buildIndex(mounts)));
    return index;
}

function buildIndex(mounts: readonly VolumeMount[]): TargetIndex {
    const index: TargetIndex = { targets: new Map(), above: new Map() };
    for (const mount of mounts) {
        const path = normalizeMountPath(mount.mountPath);
        index.targets.set(path, mount);
        for (let cut = path.lastIndexOf("/"); cut >= 0; cut = path.lastIndexOf("/", cut - 1)) {
            const directory = cut === 0 ? "/" : path.slice(0, cut);
            if (!index.above.has(directory)) index.above.set(directory, mount);
            if (cut === 0) break;
        }
    }
    return index;
}

/** The injected mount an existing path collides with: the same path, one below it, or one above it. */
function collision(taken: string, index: TargetIndex): { mount: VolumeMount; nested: boolean } | undefined {
    const same = index.targets.get(taken);
    if (same) return { mount: same, nested: false };
    for (let cut = taken.lastIndexOf("/"); cut >= 0; cut = taken.lastIndexOf("/", cut - 1)) {
        const hidden = index.targets.get(cut === 0 ? "/" : taken.slice(0, cut));
        if (hidden) return { mount: hidden, nested: false };
        if (cut === 0) break;
    }
    const below = index.above.get(taken);
    return below ? { mount: below, nested: true } : undefined;
}

/** Kubelet mounts these read-only whatever the mount says; nothing can be mounted inside them. */
const READ_ONLY_SOURCES = ["secret", "configMap", "projected", "downwardAPI"];

function acceptsNestedMounts(mount: VolumeMount, volume: Volume | undefined): boolean {
    if (mount.readOnly === true || volume === undefined) return false;
    return !READ_ONLY_SOURCES.some((source) => volume[source] !== undefined && volume[source] !== null);
}

/** Existing mounts that the injected ones would replace, hide, or be hidden by. */
function conflicts(existing: readonly VolumeMount[], index: TargetIndex, volumes: ReadonlyMap<string, Volume>): string[] {
    const found: string[] = [];
    for (const mount of existing) {
        const hit = collision(normalizeMountPath(mount.mountPath), index);
        if (hit && !(hit.nested && acceptsNestedMounts(mount, volumes.get(mount.name)))) {
            found.push(`volume ${JSON.stringify(mount.name)} at ${JSON.stringify(mount.mountPath)} collides with ${hit.mount.mountPath}`);
        }
    }
    return found;
}

const wholeLists = new WeakMap<readonly VolumeMount[], VolumeMount[]>();

/** The mounts without subPath (what ephemeral containers may have), remembered per list. */
function wholeMountsOf(mounts: readonly VolumeMount[]): VolumeMount[] {
    let whole = wholeLists.get(mounts);
    if (!whole) wholeLists.set(mounts, (whole = mounts.filter((mount) => !mount.subPath)));
    return whole;
}

export interface ContainerChanges {
    operations: JsonPatchOperation[];
    warnings: string[];
}

/**
 * Mount operations for the given container lists (only the containers `include` accepts, default
 * all). Ephemeral containers get only mounts without subPath (the API server forbids subPath
 * there); what they miss is reported as a warning.
 */
export function containerOperations(
    pod: Pod,
    lists: readonly ContainerList[],
    mounts: readonly VolumeMount[],
    include: (container: Container) => boolean = () => true,
): ContainerChanges | Denial {
    const volumes = new Map((pod.spec.volumes ?? []).map((volume) => [volume.name, volume]));
    const wholeMounts = wholeMountsOf(mounts);
    const allPaths = indexTargets(mounts);
    const wholePaths = indexTargets(wholeMounts);
    const operations: JsonPatchOperation[] = [];
    const warnings: string[] = [];
    const refused: string[] = [];
    for (const list of lists) {
        const containers: Container[] = pod.spec[list] ?? [];
        const ephemeral = list === "ephemeralContainers";
        const desired = ephemeral ? wholeMounts : mounts;
        containers.forEach((container, index) => {
            if (!include(container)) return;
            const current = container.volumeMounts ?? undefined;
            const foreign = (current ?? []).filter((mount) => !isInjectedVolumeName(mount.name));
            const clashes = foreign.length === 0 ? [] : conflicts(foreign, ephemeral ? wholePaths : allPaths, volumes);
            if (clashes.length > 0) {
                refused.push(`${list} ${JSON.stringify(container.name)}: ${clashes.slice(0, 2).join(", ")}`);
                return;
            }
            if (ephemeral && desired.length < mounts.length) {
                const missing = mounts.length - desired.length;
                warnings.push(
                    `ephemeral container ${JSON.stringify(container.name)} lacks ${missing} per-file subscription mount${missing === 1 ? "" : "s"}: Kubernetes forbids subPath in ephemeral containers`,
                );
            }
            operations.push(...listOperations(`/spec/${list}/${index}/volumeMounts`, current, desired));
        });
    }
    if (refused.length > 0) {
        return deny("MountConflict", 409, `containers already mount where subscription content goes: ${joinForMessage(refused)}`);
    }
    return { operations, warnings };
}

/** Operations that make the pod's webhook-owned volumes exactly `desired`. */
export function volumeOperations(pod: Pod, desired: readonly Volume[]): JsonPatchOperation[] {
    return listOperations("/spec/volumes", pod.spec.volumes, desired);
}

/** The mounts the webhook owns in the first container that has any (used when only ephemeral containers change). */
export function injectedMountsOf(pod: Pod): VolumeMount[] {
    for (const list of CONTAINER_LISTS) {
        if (list === "ephemeralContainers") continue;
        for (const container of pod.spec[list] ?? []) {
            const owned = (container.volumeMounts ?? []).filter((mount) => isInjectedVolumeName(mount.name));
            if (owned.length > 0) return owned;
        }
    }
    return [];
}
