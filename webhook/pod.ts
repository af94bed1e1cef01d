/**
 * The parts of a Pod the webhook reads and writes, and a structural check of an untrusted object
 * against them. The check copies nothing: a valid object is returned as the typed view of itself,
 * so the JSON Patch computed from it applies to exactly what the API server sent.
 */
import type { Volume, VolumeMount } from "../components/shared/pod-volumes";
import { isRecord } from "../components/shared/records";

export type { Volume, VolumeMount } from "../components/shared/pod-volumes";

export interface Container {
    name: string;
    volumeMounts?: VolumeMount[];
    [field: string]: unknown;
}

export interface PodSpec {
    containers: Container[];
    initContainers?: Container[];
    ephemeralContainers?: Container[];
    volumes?: Volume[];
    serviceAccountName?: string;
    serviceAccount?: string;
    [field: string]: unknown;
}

export interface Pod {
    metadata: {
        name?: string;
        generateName?: string;
        namespace?: string;
        annotations?: Record<string, string>;
        [field: string]: unknown;
    };
    spec: PodSpec;
    [field: string]: unknown;
}

/** The three container lists, in the order the webhook visits them (and their JSON Pointer segment). */
export const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;
export type ContainerList = (typeof CONTAINER_LISTS)[number];

export type PodReading = { ok: true; pod: Pod } | { ok: false; problem: string };

function checkContainer(container: unknown, path: string): string | undefined {
    if (!isRecord(container)) return `${path} is not an object`;
    if (typeof container.name !== "string") return `${path}.name is not a string`;
    const mounts = container.volumeMounts;
    if (mounts === undefined || mounts === null) return undefined;
    if (!Array.isArray(mounts)) return `${path}.volumeMounts is not a list`;
    for (let i = 0; i < mounts.length; i++) {
        const mount: unknown = mounts[i];
        if (!isRecord(mount)) return `${path}.volumeMounts[${i}] is not an object`;
        if (typeof mount.name !== "string" || typeof mount.mountPath !== "string") {
            return `${path}.volumeMounts[${i}] needs string name and mountPath`;
        }
        if (mount.subPath !== undefined && mount.subPath !== null && typeof mount.subPath !== "string") {
            return `${path}.volumeMounts[${i}].subPath is not a string`;
        }
    }
    return undefined;
}

function checkSpec(spec: Record<string, unknown>): string | undefined {
    if (!Array.isArray(spec.containers)) return "spec.containers is not a list";
    for (const list of CONTAINER_LISTS) {
        const containers = spec[list];
        if (containers === undefined || containers === null) continue;
        if (!Array.isArray(containers)) return `spec.${list} is not a list`;
        for (let i = 0; i < containers.length; i++) {
            const problem = checkContainer(containers[i], `spec.${list}[${i}]`);
            if (problem) return problem;
        }
    }
    const volumes = spec.volumes;
    if (volumes !== undefined && volumes !== null) {
        if (!Array.isArray(volumes)) return "spec.volumes is not a list";
        for (let i = 0; i < volumes.length; i++) {
            const volume: unknown = volumes[i];
            if (!isRecord(volume) || typeof volume.name !== "string") return `spec.volumes[${i}] needs a string name`;
        }
    }
    for (const field of ["serviceAccountName", "serviceAccount"]) {
        const value = spec[field];
        if (value !== undefined && value !== null && typeof value !== "string") return `spec.${field} is not a string`;
    }
    return undefined;
}

/** Checks the shape of an untrusted object (a request's `object`) and returns it as a Pod, or the first problem. */
export function readPod(object: unknown): PodReading {
    if (!isRecord(object)) return { ok: false, problem: "the object is not a JSON object" };
    const metadata = object.metadata;
    if (!isRecord(metadata)) return { ok: false, problem: "metadata is missing or not an object" };
    const annotations = metadata.annotations;
    if (annotations !== undefined && annotations !== null) {
        if (!isRecord(annotations)) return { ok: false, problem: "metadata.annotations is not an object" };
        for (const [key, value] of Object.entries(annotations)) {
            if (typeof value !== "string")
                return { ok: false, problem: `metadata.annotations[${JSON.stringify(key.slice(0, 100))}] is not a string` };
        }
    }
    if (!isRecord(object.spec)) return { ok: false, problem: "spec is missing or not an object" };
    const problem = checkSpec(object.spec);
    return problem ? { ok: false, problem } : { ok: true, pod: object as Pod };
}

/** The service account the pod runs as (the ServiceAccount admission plugin has set it before webhooks run). */
export function podServiceAccount(pod: Pod): string {
    return pod.spec.serviceAccountName || pod.spec.serviceAccount || "default";
}

/** A short name for messages and logs: the pod's name, or its generateName prefix. */
export function podDisplayName(pod: Pod): string {
    return pod.metadata.name || (pod.metadata.generateName ? `${pod.metadata.generateName}*` : "<unnamed>");
}

/** Names of the ephemeral containers a pod already has (those of `oldObject` in an UPDATE). */
export function ephemeralContainerNames(pod: Pod): ReadonlySet<string> {
    return new Set((pod.spec.ephemeralContainers ?? []).map((container) => container.name));
}
