/**
 * The objects a CSV Deployment's pods need before they can start: the ServiceAccount they run as,
 * the Secrets and ConfigMaps their volumes (projected sources included), `env` and `envFrom` read
 * unless marked `optional`, claims, PriorityClass and RuntimeClass. A pod whose object is missing
 * never starts (the kubelet waits on a volume or env source: ContainerCreating or
 * CreateContainerConfigError; admission refuses a pod with a missing ServiceAccount, PriorityClass
 * or RuntimeClass), so `up` would wait out the Deployment's await and declare nothing after it.
 * Image pull Secrets (the pod's and its ServiceAccount's) are listed apart: a missing one does not
 * stop the pod (see `pullOnly`).
 *
 * Who provides a reference in a real install, besides the bundle and the stack (plan.ts):
 * - every namespace: ServiceAccount `default` and ConfigMap `kube-root-ca.crt` (Kubernetes'
 *   controllers, `EVERY_NAMESPACE`); on OpenShift also ConfigMap `openshift-service-ca.crt`;
 * - OpenShift's service-ca: the Secret a bundle Service names in its serving-cert annotation
 *   (`servingCertSecrets`), on OpenShift only;
 * - the operator itself: an object another Deployment of the same CSV may create at start
 *   (`operatorCreators`), as HyperConverged's operator creates the PriorityClass its operands use.
 * The pre-flight asks the cluster about the rest (components/composition/preflight.ts). Pure.
 */
import type { ObjectRef, RequiredObject } from "../shared/object-refs";
import { formatPath } from "../shared/problems";

export interface PodReference {
    ref: ObjectRef;
    /** Where the Deployment names it, inside its spec (`template.spec.volumes[0].secret.secretName`). */
    field: string;
    /**
     * An image pull Secret: the pod starts without it. The kubelet pulls with the Secrets it finds,
     * records `FailedToRetrieveImagePullSecret` for the others and pulls all the same, with the
     * node's own credentials or none (kubernetes pkg/kubelet/kubelet_pods.go, `getPullSecretsForPod`);
     * only an image the node cannot pull then fails, which no object check can tell.
     */
    pullOnly?: true;
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
    const add = (kind: ReferencedKind, name: unknown, path: PropertyKey[], pullOnly?: true) => {
        const n = text(name);
        if (n) refs.push({ ref: refOf(kind, n, namespace), field: formatPath(path), ...(pullOnly ? { pullOnly } : {}) });
    };
    const pod = record(record(deploymentSpec.template)?.spec) ?? {};
    const base = ["template", "spec"];
    add("ServiceAccount", text(pod.serviceAccountName) ?? text(pod.serviceAccount) ?? "default", [
        ...base,
        text(pod.serviceAccountName) ? "serviceAccountName" : text(pod.serviceAccount) ? "serviceAccount" : "serviceAccountName",
    ]);
    list(pod.imagePullSecrets).forEach((s, i) => add("Secret", record(s)?.name, [...base, "imagePullSecrets", i, "name"], true));
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
        return name
            ? [{ ref: refOf("Secret", name, namespace), field: formatPath(["imagePullSecrets", i, "name"]), pullOnly: true as const }]
            : [];
    });
}

/** `Kind namespace/name` or `Kind name`, the key the plan's provided objects are listed by. */
export function referenceKey(ref: ObjectRef): string {
    return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}

/**
 * The objects every namespace gets from the cluster itself, soon after the namespace is created:
 * - ServiceAccount `default`: kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go
 *   (`DefaultServiceAccountsControllerOptions`); until it exists the ReplicaSet controller retries
 *   the pod the ServiceAccount admission plugin refused.
 * - ConfigMap `kube-root-ca.crt`: kubernetes pkg/controller/certificates/rootcacertpublisher/publisher.go
 *   (`RootCACertConfigMapName`), in every namespace since 1.21; the kubelet's volume wait covers the gap.
 * - ConfigMap `openshift-service-ca.crt`, OpenShift only: openshift/kubernetes
 *   openshift-kube-controller-manager/servicecacertpublisher/publisher.go (`ServiceCACertConfigMapName`).
 */
export const EVERY_NAMESPACE = {
    kubernetes: ["ServiceAccount default", "ConfigMap kube-root-ca.crt"],
    openshift: ["ConfigMap openshift-service-ca.crt"],
} as const;

/** Whether every namespace of every cluster has it (the platform's own ones are `openShiftProvides`). */
export function inEveryNamespace(ref: ObjectRef): boolean {
    return ref.namespace !== undefined && (EVERY_NAMESPACE.kubernetes as readonly string[]).includes(`${ref.kind} ${ref.name}`);
}

/** Whether only OpenShift puts it in every namespace, and by what, for the message. */
export function inEveryOpenShiftNamespace(ref: ObjectRef): string | undefined {
    return ref.namespace !== undefined && (EVERY_NAMESPACE.openshift as readonly string[]).includes(`${ref.kind} ${ref.name}`)
        ? "OpenShift's service CA publisher creates it in every namespace (openshift/kubernetes openshift-kube-controller-manager/servicecacertpublisher/publisher.go)"
        : undefined;
}

/**
 * The annotations by which a Service asks OpenShift's service-ca for a serving certificate: its
 * controller creates a `kubernetes.io/tls` Secret of that name in the Service's namespace, the
 * beta annotation taking precedence over the alpha one (openshift/service-ca-operator
 * pkg/controller/api/api.go `ServingCertSecretAnnotation`, `AlphaServingCertSecretAnnotation`;
 * pkg/controller/servingcert/controller/secret_creating_controller.go). Only OpenShift runs it.
 */
export const SERVING_CERT_ANNOTATIONS = [
    "service.beta.openshift.io/serving-cert-secret-name",
    "service.alpha.openshift.io/serving-cert-secret-name",
] as const;

/** Secret name -> the Service whose serving-cert annotation makes service-ca create it, over the bundle's Services. */
export function servingCertSecrets(services: readonly Json[]): Map<string, string> {
    const secrets = new Map<string, string>();
    for (const service of services) {
        const metadata = record(service.metadata) ?? {};
        const annotations = record(metadata.annotations) ?? {};
        const secret = SERVING_CERT_ANNOTATIONS.map((a) => text(annotations[a])).find((s) => s !== undefined);
        const name = text(metadata.name);
        if (secret && name && !secrets.has(secret)) secrets.set(secret, name);
    }
    return secrets;
}

/** A CSV Deployment as `operatorCreators` needs it: its name and the ServiceAccount its pods run as. */
export interface CsvDeploymentIdentity {
    name: string;
    serviceAccount: string;
}

/** A CSV permission entry: the ServiceAccount, its rules, and whether it is cluster-wide (`clusterPermissions`). */
export interface CsvGrant {
    serviceAccount: string;
    cluster: boolean;
    rules: readonly { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }[];
}

/**
 * The other Deployments of the same CSV whose pods may create `ref`: their ServiceAccount is
 * granted `create` on its resource by the CSV's permissions (cluster-wide for a cluster-scoped
 * kind), without `resourceNames` (RBAC cannot restrict a create by name: the name is not part of
 * a create request's attributes: Kubernetes' RBAC docs, "Referring to resources"). Such an operator creates the object at start, and the pod needing it waits
 * (ContainerCreating, or the ReplicaSet retrying admission) until it exists; e.g. HyperConverged's
 * operator creates `kubevirt-cluster-critical` for virt-operator's pods, "as OLM is not able to
 * create it" (kubevirt/hyperconverged-cluster-operator cmd/hyperconverged-cluster-operator/main.go,
 * `createPriorityClass`). The Deployment needing it cannot create it for itself.
 */
export function operatorCreators(
    ref: ObjectRef,
    needing: string,
    deployments: readonly CsvDeploymentIdentity[],
    grants: readonly CsvGrant[],
): string[] {
    const group = ref.apiVersion.includes("/") ? ref.apiVersion.split("/")[0] : "";
    const has = (values: readonly string[] | undefined, value: string) => (values ?? []).some((v) => v === "*" || v === value);
    const mayCreate = (serviceAccount: string) =>
        grants.some(
            (grant) =>
                grant.serviceAccount === serviceAccount &&
                (grant.cluster || ref.namespace !== undefined) &&
                grant.rules.some(
                    (rule) =>
                        has(rule.apiGroups, group) &&
                        has(rule.resources, ref.plural) &&
                        has(rule.verbs, "create") &&
                        (rule.resourceNames ?? []).length === 0,
                ),
        );
    return deployments.filter((d) => d.name !== needing && mayCreate(d.serviceAccount)).map((d) => d.name);
}

/** An object a Deployment's pods need that the cluster must hold; on OpenShift the platform may provide it. */
export interface PodRequirement extends RequiredObject {
    /** Set when OpenShift creates it by itself (what does, for the message): required on Kubernetes only. */
    openShiftProvides?: string;
}

/** The requirements the pre-flight asks the cluster about on `platform` (OpenShift provides its own). */
export function requiredOn(platform: string, requirements: readonly PodRequirement[]): PodRequirement[] {
    return requirements.filter((r) => !(platform === "openshift" && r.openShiftProvides));
}
