/**
 * The objects a CSV Deployment's pods need before they can start: the ServiceAccount they run as,
 * the Secrets and ConfigMaps their volumes (projected sources included), `env` and `envFrom` read
 * unless marked `optional`, image pull Secrets (the pod's and its ServiceAccount's), claims,
 * PriorityClass and RuntimeClass. A pod whose object is missing never starts (the kubelet waits
 * on a volume or env source; admission refuses a pod with a missing ServiceAccount, PriorityClass
 * or RuntimeClass), so `up` would wait out the Deployment's await and declare nothing after it.
 * The plan resolves each against the bundle's objects and the stack's own; the pre-flight asks
 * the cluster about the rest (components/composition/preflight.ts). Pure.
 */
import type { ObjectRef } from "../shared/object-presence";
import { formatPath } from "../shared/problems";

export interface PodReference {
    ref: ObjectRef;
    /** Where the Deployment names it, inside its spec (`template.spec.volumes[0].secret.secretName`). */
    field: string;
}

type Json = Record<string, unknown>;

const REFS = {
    Secret: { apiVersion: "v1", plural: "secrets", namespaced: true },
    ConfigMap: { apiVersion: "v1", plural: "configmaps", namespaced: true },
    ServiceAccount: { apiVersion: "v1", plural: "serviceaccounts", namespaced: true },
    PersistentVolumeClaim: { apiVersion: "v1", plural: "persistentvolumeclaims", namespaced: true },
    PriorityClass: { apiVersion: "scheduling.k8s.io/v1", plural: "priorityclasses", namespaced: false },
    RuntimeClass: { apiVersion: "node.k8s.io/v1", plural: "runtimeclasses", namespaced: false },
} as const;

export type ReferencedKind = keyof typeof REFS;

/**
 * The PriorityClasses every cluster has: the API server creates them at start and recreates them
 * when deleted (kubernetes pkg/apis/scheduling/types.go `SystemClusterCritical`,
 * `SystemNodeCritical`; pkg/registry/scheduling/rest/storage_scheduling.go `AddSystemPriorityClasses`),
 * so a pod naming one never waits on it.
 */
export const SYSTEM_PRIORITY_CLASSES: ReadonlySet<string> = new Set(["system-cluster-critical", "system-node-critical"]);

function refOf(kind: ReferencedKind, name: string, namespace: string): ObjectRef {
    const { apiVersion, plural, namespaced } = REFS[kind];
    return { apiVersion, kind, plural, name, ...(namespaced ? { namespace } : {}) };
}

const record = (value: unknown): Json | undefined =>
    value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * Every object the Deployment's pod template needs, required ones only. Give it the template as
 * OLM deploys it (a served deployment with OLM's certificate volumes merged in). A volume no
 * container mounts is not needed: the kubelet skips volumes that no container, init container or
 * ephemeral container mounts or uses as a device (kubernetes `pkg/kubelet/volumemanager/populator/
 * desired_state_of_world_populator.go`, `processPodVolumes`), as a bundle volume whose mount OLM's
 * certificate mount replaced becomes.
 */
export function podReferences(deploymentSpec: Json, namespace: string): PodReference[] {
    const refs: PodReference[] = [];
    const add = (kind: ReferencedKind, name: unknown, path: PropertyKey[]) => {
        const n = text(name);
        if (n) refs.push({ ref: refOf(kind, n, namespace), field: formatPath(path) });
    };
    const pod = record(record(deploymentSpec.template)?.spec) ?? {};
    const base = ["template", "spec"];
    add("ServiceAccount", text(pod.serviceAccountName) ?? text(pod.serviceAccount) ?? "default", [
        ...base,
        text(pod.serviceAccountName) ? "serviceAccountName" : text(pod.serviceAccount) ? "serviceAccount" : "serviceAccountName",
    ]);
    list(pod.imagePullSecrets).forEach((s, i) => add("Secret", record(s)?.name, [...base, "imagePullSecrets", i, "name"]));
    if (!SYSTEM_PRIORITY_CLASSES.has(text(pod.priorityClassName) ?? "")) {
        add("PriorityClass", pod.priorityClassName, [...base, "priorityClassName"]);
    }
    add("RuntimeClass", pod.runtimeClassName, [...base, "runtimeClassName"]);
    const used = new Set(
        (["initContainers", "containers", "ephemeralContainers"] as const).flatMap((group) =>
            list(pod[group]).flatMap((c) =>
                [...list(record(c)?.volumeMounts), ...list(record(c)?.volumeDevices)].map((m) => record(m)?.name),
            ),
        ),
    );
    list(pod.volumes).forEach((v, i) => {
        const volume = record(v) ?? {};
        if (typeof volume.name !== "string" || !used.has(volume.name)) return;
        const at = [...base, "volumes", i];
        const secret = record(volume.secret);
        if (secret && secret.optional !== true) add("Secret", secret.secretName, [...at, "secret", "secretName"]);
        const configMap = record(volume.configMap);
        if (configMap && configMap.optional !== true) add("ConfigMap", configMap.name, [...at, "configMap", "name"]);
        const claim = record(volume.persistentVolumeClaim);
        if (claim) add("PersistentVolumeClaim", claim.claimName, [...at, "persistentVolumeClaim", "claimName"]);
        const csi = record(volume.csi);
        if (csi) add("Secret", record(csi.nodePublishSecretRef)?.name, [...at, "csi", "nodePublishSecretRef", "name"]);
        list(record(volume.projected)?.sources).forEach((s, j) => {
            const source = record(s) ?? {};
            const projectedSecret = record(source.secret);
            if (projectedSecret && projectedSecret.optional !== true)
                add("Secret", projectedSecret.name, [...at, "projected", "sources", j, "secret", "name"]);
            const projectedConfigMap = record(source.configMap);
            if (projectedConfigMap && projectedConfigMap.optional !== true) {
                add("ConfigMap", projectedConfigMap.name, [...at, "projected", "sources", j, "configMap", "name"]);
            }
        });
    });
    for (const group of ["initContainers", "containers"] as const) {
        list(pod[group]).forEach((c, i) => {
            const container = record(c) ?? {};
            const at = [...base, group, i];
            list(container.env).forEach((e, j) => {
                const from = record(record(e)?.valueFrom);
                const secretKey = record(from?.secretKeyRef);
                if (secretKey && secretKey.optional !== true)
                    add("Secret", secretKey.name, [...at, "env", j, "valueFrom", "secretKeyRef", "name"]);
                const configMapKey = record(from?.configMapKeyRef);
                if (configMapKey && configMapKey.optional !== true)
                    add("ConfigMap", configMapKey.name, [...at, "env", j, "valueFrom", "configMapKeyRef", "name"]);
            });
            list(container.envFrom).forEach((e, j) => {
                const source = record(e) ?? {};
                const secretRef = record(source.secretRef);
                if (secretRef && secretRef.optional !== true) add("Secret", secretRef.name, [...at, "envFrom", j, "secretRef", "name"]);
                const configMapRef = record(source.configMapRef);
                if (configMapRef && configMapRef.optional !== true)
                    add("ConfigMap", configMapRef.name, [...at, "envFrom", j, "configMapRef", "name"]);
            });
        });
    }
    return refs;
}

/** The image pull Secrets a ServiceAccount object lists (the kubelet pulls with them for pods that run as it). */
export function serviceAccountPullSecrets(serviceAccount: Json, namespace: string): PodReference[] {
    return list(serviceAccount.imagePullSecrets).flatMap((s, i) => {
        const name = text(record(s)?.name);
        return name ? [{ ref: refOf("Secret", name, namespace), field: formatPath(["imagePullSecrets", i, "name"]) }] : [];
    });
}

/** `Kind namespace/name` or `Kind name`, the key the plan's provided objects are listed by. */
export function referenceKey(ref: ObjectRef): string {
    return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}
