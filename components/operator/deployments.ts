/**
 * A CSV deployment turned into the Deployment OLM would create: CSV annotations on the pod
 * template (as OLM copies them, with `olm.targetNamespaces` and `olm.operatorNamespace`),
 * `revisionHistoryLimit: 1`, the serving certificate mounted where OLM mounts it, and, when
 * AllNamespaces promotion is disabled, `WATCH_NAMESPACE` set to the namespaces that have RBAC.
 * Pure; the component adds the certificate's pod-template annotations (an Output).
 */
import { CAPABILITY_LABEL, MANAGED_BY_LABEL, OPERATOR_LABEL, platformLabels } from "../shared/labels";
import type { StrategyDeployment } from "./csv";

/** OLM's pod-template annotation listing the watched namespaces ("" = all). */
export const TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces";
/** OLM's pod-template annotation naming the operator's namespace. */
export const OPERATOR_NAMESPACE_ANNOTATION = "olm.operatorNamespace";
export const WATCH_NAMESPACE_ENV = "WATCH_NAMESPACE";

export interface Volume {
    name: string;
    [key: string]: unknown;
}

export interface VolumeMount {
    name: string;
    mountPath: string;
    [key: string]: unknown;
}

/** Volumes and mounts that put a serving certificate where the operator expects it. */
export interface CertificateMount {
    volumes: Volume[];
    volumeMounts: VolumeMount[];
}

export interface DeploymentInput {
    operator: string;
    namespace: string;
    deployment: StrategyDeployment;
    /** The CSV's metadata.annotations, copied to the pod template as OLM does. */
    csvAnnotations: Record<string, string>;
    /** What `olm.targetNamespaces` says: the watched namespaces, [] for all. */
    watchNamespaces: readonly string[];
    /** Set WATCH_NAMESPACE on every container (promotion disabled: the rbacNamespaces). */
    overrideWatchNamespace: boolean;
    /** The serving certificate's volumes, for deployments that serve webhooks. */
    certificate?: CertificateMount;
}

export interface DeploymentObject {
    apiVersion: "apps/v1";
    kind: "Deployment";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    spec: Record<string, unknown> & { template: PodTemplate };
}

interface PodTemplate {
    metadata: { labels?: Record<string, string>; annotations: Record<string, string>; [key: string]: unknown };
    spec: PodSpec;
}

interface Container {
    name: string;
    env?: { name: string; [key: string]: unknown }[];
    volumeMounts?: VolumeMount[];
    [key: string]: unknown;
}

interface PodSpec {
    containers: Container[];
    volumes?: Volume[];
    [key: string]: unknown;
}

/**
 * A deep copy of parsed manifest data (plain JSON values). Not `structuredClone`: under a VM
 * context (jest) it returns arrays of another realm, which Pulumi's serializer, checking
 * `instanceof Array`, would send as objects keyed "0", "1"...
 */
export function plainCopy<T>(value: T): T {
    return JSON.parse(JSON.stringify(value)) as T;
}

/** The Deployment for one CSV deployment entry. */
export function deploymentFor(input: DeploymentInput): DeploymentObject {
    const source = plainCopy(input.deployment.spec) as unknown as DeploymentObject["spec"];
    const templateAnnotations = source.template.metadata?.annotations ?? {};
    const annotations = {
        ...input.csvAnnotations,
        ...templateAnnotations,
        [TARGET_NAMESPACES_ANNOTATION]: input.watchNamespaces.join(","),
        [OPERATOR_NAMESPACE_ANNOTATION]: input.namespace,
    };
    let podSpec = source.template.spec;
    if (input.certificate) {
        podSpec = withCertificateMount(podSpec, input.certificate);
    }
    if (input.overrideWatchNamespace) {
        podSpec = withEnv(podSpec, WATCH_NAMESPACE_ENV, input.watchNamespaces.join(","));
    }
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: {
            name: input.deployment.name,
            namespace: input.namespace,
            labels: deploymentLabels(input.operator, input.deployment.label ?? {}),
        },
        spec: {
            ...source,
            // OLM keeps one old ReplicaSet per deployment.
            revisionHistoryLimit: 1,
            template: {
                ...source.template,
                metadata: { ...(source.template.metadata ?? {}), annotations: sortedRecord(annotations) },
                spec: podSpec,
            },
        },
    };
}

/**
 * The CSV's deployment labels (as OLM sets them) with this stack's: the stack manages the object
 * (managed-by, capability, operator), but a `part-of` the bundle sets names the product and stays.
 */
export function deploymentLabels(operator: string, csvLabels: Record<string, string>): Record<string, string> {
    const platform = platformLabels("operator", { [OPERATOR_LABEL]: operator });
    return {
        ...platform,
        ...csvLabels,
        [MANAGED_BY_LABEL]: platform[MANAGED_BY_LABEL],
        [CAPABILITY_LABEL]: platform[CAPABILITY_LABEL],
        [OPERATOR_LABEL]: operator,
    };
}

/**
 * Mounts the serving certificate in every container, replacing what the bundle ships for it:
 * volumes with the same names, mounts at the same paths, and volumes only used by such mounts
 * (bundles often reference a Secret OLM would have made under another name).
 */
export function withCertificateMount(spec: PodSpec, certificate: CertificateMount): PodSpec {
    const names = new Set(certificate.volumes.map((v) => v.name));
    const paths = new Set(certificate.volumeMounts.map((m) => m.mountPath));
    const replaced = new Set(names);
    for (const container of spec.containers) {
        for (const mount of container.volumeMounts ?? []) {
            if (paths.has(mount.mountPath)) {
                replaced.add(mount.name);
            }
        }
    }
    // A replaced volume stays if some other mount (at another path) still uses it.
    for (const container of [...spec.containers, ...((spec.initContainers as Container[] | undefined) ?? [])]) {
        for (const mount of container.volumeMounts ?? []) {
            if (replaced.has(mount.name) && !names.has(mount.name) && !paths.has(mount.mountPath)) {
                replaced.delete(mount.name);
            }
        }
    }
    return {
        ...spec,
        volumes: [...(spec.volumes ?? []).filter((v) => !replaced.has(v.name)), ...certificate.volumes],
        containers: spec.containers.map((container) => ({
            ...container,
            volumeMounts: [
                ...(container.volumeMounts ?? []).filter((m) => !paths.has(m.mountPath) && !replaced.has(m.name)),
                ...certificate.volumeMounts,
            ],
        })),
    };
}

/** Sets an environment variable on every container, replacing one of the same name (OLM's Subscription config env). */
export function withEnv(spec: PodSpec, name: string, value: string): PodSpec {
    return {
        ...spec,
        containers: spec.containers.map((container) => {
            const env = [...(container.env ?? [])];
            const index = env.findIndex((e) => e.name === name);
            const entry = { name, value };
            if (index >= 0) {
                env[index] = entry;
            } else {
                env.push(entry);
            }
            return { ...container, env };
        }),
    };
}

function sortedRecord(record: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.keys(record).sort().map((k) => [k, record[k]]));
}
