/**
 * A CSV deployment turned into the Deployment OLM would create: CSV annotations on the pod
 * template (as OLM copies them, with `olm.targetNamespaces` and `olm.operatorNamespace`),
 * `revisionHistoryLimit: 1`, the serving certificate mounted where OLM mounts it, OLM's
 * environment (the cluster's proxy variables, `OPERATOR_CONDITION_NAME`) and, when AllNamespaces
 * promotion is disabled, `WATCH_NAMESPACE` set to the namespaces that have RBAC.
 * Pure; the component adds the certificate's pod-template annotations (an Output).
 */
import { CAPABILITY_LABEL, MANAGED_BY_LABEL, OPERATOR_LABEL, platformLabels } from "../shared/labels";
import { withLabelsFingerprint } from "../shared/workload-metadata";
import type { StrategyDeployment } from "./csv";
import { mergedEnv, overridesProxy, withPodOverrides } from "./pod-overrides";
import { podSelectorOf } from "./pod-selector";
import type { PodOverridesConfig } from "../config/schema";
import type { Volume, VolumeMount } from "../shared/pod-volumes";

export type { Volume, VolumeMount } from "../shared/pod-volumes";

/** OLM's pod-template annotation listing the watched namespaces ("" = all). */
export const TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces";
/** OLM's pod-template annotation naming the operator's namespace. */
export const OPERATOR_NAMESPACE_ANNOTATION = "olm.operatorNamespace";
/**
 * The stack's pod-template annotation with the CSV's `spec.version`: OLM knows the installed
 * version from its CSV object, which the stack does not create, so the running Deployment carries
 * it for the next upgrade's `olm.skipRange` (upgrade-path.ts).
 */
export const OPERATOR_VERSION_ANNOTATION = "cluster-platform.io/operator-version";
export const WATCH_NAMESPACE_ENV = "WATCH_NAMESPACE";
/** The variable OLM sets to the CSV's name on every container (pkg/controller/install/deployment.go); operator-lib reads its OperatorCondition by it. */
export const OPERATOR_CONDITION_NAME_ENV = "OPERATOR_CONDITION_NAME";
/** OLM's proxy variables, in its order (pkg/lib/proxy/envvar.go). */
export const PROXY_ENV_NAMES = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"] as const;

export interface EnvVar {
    name: string;
    value: string;
}

/** The `status` of OpenShift's `config.openshift.io/v1` Proxy `cluster` (what OLM reads: the validated values). */
export interface ProxyStatus {
    httpProxy?: string;
    httpsProxy?: string;
    noProxy?: string;
}

/**
 * OLM's proxy variables from Proxy `cluster`: its status (pkg/lib/proxy/envvar.go, `ToEnvVar`),
 * empty values dropped (pkg/controller/operators/olm/overrides/initializer.go, `dropEmptyProxyEnv`);
 * none when there is no such Proxy (pkg/lib/proxy/syncer.go, `QueryProxyConfig`: NotFound is no proxy).
 */
export function proxyEnvOf(status: ProxyStatus | undefined): EnvVar[] {
    const values = [status?.httpProxy, status?.httpsProxy, status?.noProxy];
    return PROXY_ENV_NAMES.map((name, i) => ({ name, value: typeof values[i] === "string" ? values[i] : "" })).filter(
        (e) => e.value !== "",
    );
}

/**
 * Whether a proxy variable's value may carry credentials: a proxy URL's userinfo
 * (`http://user:password@proxy:3128`, or `user:password@proxy:3128` without a scheme, which Go's
 * `http.ProxyFromEnvironment` also reads) is written before an `@`, so every value holding one is
 * kept out of plain state and previews (a value that holds one for another reason is hidden too).
 */
export function mayCarryCredentials(value: string): boolean {
    return value.includes("@");
}

/** Volumes and mounts that put a serving certificate where the operator expects it. */
export interface CertificateMount {
    volumes: Volume[];
    volumeMounts: VolumeMount[];
}

export interface DeploymentInput {
    operator: string;
    /** The CSV's metadata.name: OPERATOR_CONDITION_NAME on every container, as OLM sets it. */
    csvName: string;
    /** The CSV's spec.version, recorded on the pod template for a later upgrade's `olm.skipRange` (upgrade-path.ts). */
    csvVersion?: string;
    namespace: string;
    deployment: StrategyDeployment;
    /** The CSV's metadata.annotations, copied to the pod template as OLM does. */
    csvAnnotations: Record<string, string>;
    /** What `olm.targetNamespaces` says: the watched namespaces, [] for all. */
    watchNamespaces: readonly string[];
    /** Set WATCH_NAMESPACE on every container (promotion disabled: the rbacNamespaces). */
    overrideWatchNamespace: boolean;
    /** The serving certificate's volumes, for deployments that serve webhooks or APIServices. */
    certificate?: CertificateMount;
    /** The cluster-wide proxy variables (OpenShift's Proxy `cluster`), merged into every container as OLM merges them. */
    proxyEnv?: readonly EnvVar[];
    /** `operators[].config`: OLM's Subscription config overrides (pod-overrides.ts). */
    overrides?: PodOverridesConfig;
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
    // OLM merges the CSV's annotations over the template's (pkg/controller/install/deployment.go).
    const annotations = {
        ...templateAnnotations,
        ...input.csvAnnotations,
        [TARGET_NAMESPACES_ANNOTATION]: input.watchNamespaces.join(","),
        [OPERATOR_NAMESPACE_ANNOTATION]: input.namespace,
        ...(input.csvVersion === undefined ? {} : { [OPERATOR_VERSION_ANNOTATION]: input.csvVersion }),
    };
    const podLabels = podSelectorOf(input.deployment.name, input.deployment.spec.selector.matchLabels ?? {});
    let podSpec = source.template.spec;
    if (input.certificate) {
        podSpec = withCertificateMount(podSpec, input.certificate);
    }
    // OLM's order: the Subscription config's overrides and the proxy variables (its deployment
    // initializer, pkg/controller/operators/olm/overrides/initializer.go; an override naming a
    // proxy variable drops the cluster's), then OPERATOR_CONDITION_NAME.
    podSpec = withPodOverrides(podSpec, input.overrides);
    podSpec = withMergedEnv(podSpec, overridesProxy(input.overrides, PROXY_ENV_NAMES) ? [] : (input.proxyEnv ?? []));
    podSpec = withEnv(podSpec, OPERATOR_CONDITION_NAME_ENV, input.csvName);
    if (input.overrideWatchNamespace) {
        podSpec = withEnv(podSpec, WATCH_NAMESPACE_ENV, input.watchNamespaces.join(","));
    }
    const labels = deploymentLabels(input.operator, input.deployment.label ?? {});
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: input.deployment.name, namespace: input.namespace, labels },
        spec: {
            ...source,
            // operators[].config.replicas, when set, over the CSV's (replicas.ts).
            ...(input.overrides?.replicas === undefined ? {} : { replicas: input.overrides.replicas }),
            // OLM keeps one old ReplicaSet per deployment.
            revisionHistoryLimit: 1,
            // The CSV's selector as it is: a Deployment's selector is immutable (pod-selector.ts), so
            // the stack's label goes on the pods only, where the webhook Service selects it.
            selector: source.selector,
            template: {
                ...source.template,
                metadata: {
                    ...(source.template.metadata ?? {}),
                    labels: { ...(source.template.metadata?.labels ?? {}), ...podLabels },
                    // A label change (a rename) is a template change too (shared/workload-metadata.ts).
                    annotations: sortedRecord(withLabelsFingerprint(labels, annotations)),
                },
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
 * Merges the serving certificate's volumes into a pod spec with OLM's rules, volume by volume in
 * order (operator-framework/operator-lifecycle-manager `pkg/controller/install/certresources.go`,
 * `addCertVolumeAndVolumeMount`): a pod volume of the same name is replaced in place, else the
 * volume is appended; in each container (not init containers) the first mount that has the
 * volume's name is kept as it is, or the first mount at the same path is replaced, else the mount
 * is appended. Other volumes of the bundle stay, even when no mount uses them any more: the
 * kubelet skips unused volumes (kubernetes `pkg/kubelet/volumemanager/populator/
 * desired_state_of_world_populator.go`), so a Secret OLM would have named differently is harmless.
 */
export function withCertificateMount(spec: PodSpec, certificate: CertificateMount): PodSpec {
    let volumes = [...(spec.volumes ?? [])];
    let containers = spec.containers.map((container) => ({ ...container, volumeMounts: [...(container.volumeMounts ?? [])] }));
    for (const volume of certificate.volumes) {
        const mount = certificate.volumeMounts.find((m) => m.name === volume.name);
        const index = volumes.findIndex((v) => v.name === volume.name);
        volumes = index >= 0 ? volumes.map((v, i) => (i === index ? volume : v)) : [...volumes, volume];
        if (!mount) {
            continue;
        }
        containers = containers.map((container) => ({ ...container, volumeMounts: mergedMounts(container.volumeMounts, mount) }));
    }
    return { ...spec, volumes, containers };
}

function mergedMounts(mounts: VolumeMount[], mount: VolumeMount): VolumeMount[] {
    for (let j = 0; j < mounts.length; j++) {
        if (mounts[j].name === mount.name) {
            return mounts;
        }
        if (mounts[j].mountPath === mount.mountPath) {
            return mounts.map((m, i) => (i === j ? { ...mount } : m));
        }
    }
    return [...mounts, { ...mount }];
}

/**
 * Merges the variables into every container as OLM's InjectEnvIntoDeployment does
 * (pkg/controller/operators/olm/overrides/inject/inject.go, `mergeEnvVars`: "If any Container in
 * PodSpec already defines an env variable of the same name as any of the proxy env variables then
 * it will be overwritten"): a container's own variable of the same name takes the cluster's value
 * in its place, the others follow its own.
 */
export function withMergedEnv(spec: PodSpec, variables: readonly EnvVar[]): PodSpec {
    if (variables.length === 0) {
        return spec;
    }
    return {
        ...spec,
        containers: spec.containers.map((container) => ({
            ...container,
            env: mergedEnv(
                container.env ?? [],
                variables.map((v) => ({ ...v })),
            ),
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
    return Object.fromEntries(
        Object.keys(record)
            .sort()
            .map((k) => [k, record[k]]),
    );
}
