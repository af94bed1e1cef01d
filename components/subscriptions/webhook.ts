/**
 * The subscription injection webhook's deployment (seed 000, "Subscription Injection Mutating
 * Admission Webhook"), as pure data: names, the pod template, the webhook definition and the
 * namespaces it must never see. The component wires these to the certificate issuer and the
 * AdmissionWebhook component.
 */
import type { WebhookDefinition } from "../admission-webhook/contract";
import { platformLabels } from "../shared/labels";
import { WEBHOOK_PROCESS_ENV, WEBHOOK_SERVER } from "../../webhook/api";
import { type AccessRule, KEY_RESOURCES, type KeyResource, keyReadByNameRule, keyReadRule } from "../../webhook/access";
import type { BundleDeclaration, ClusterBundleReference } from "./bundles";

export const WEBHOOK_APP = "subscription-injection-webhook";

/** Names of the objects around the webhook server; cluster-scoped ones are unique in the cluster. */
export const WEBHOOK_NAMES = {
    deployment: WEBHOOK_APP,
    serviceAccount: WEBHOOK_APP,
    clusterRole: WEBHOOK_APP,
    clusterRoleBinding: WEBHOOK_APP,
    podDisruptionBudget: WEBHOOK_APP,
    /** The `kubernetes.io/tls` Secret with the serving certificate. */
    tlsSecret: `${WEBHOOK_APP}-tls`,
    /** The ConfigMap that publishes the CA that signs the webhook's serving certificate (seed: "a ConfigMap where the service serving CA can be injected"). */
    caConfigMap: `${WEBHOOK_APP}-ca`,
    /** The Role and RoleBinding in each namespace whose Secrets/ConfigMaps the server may list. */
    keyReadRole: `${WEBHOOK_APP}-read`,
    /** The Service the AdmissionWebhook component creates: `<deployment>-service`. */
    service: `${WEBHOOK_APP}-service`,
} as const;

/** The webhook's name (fully qualified, as the API requires). */
export const WEBHOOK_NAME = "inject.subscription.openshift.io";

/** The Deployment's selector (and the Service's). */
export const WEBHOOK_MATCH_LABELS = {
    "app.kubernetes.io/name": WEBHOOK_APP,
    "app.kubernetes.io/component": "admission-webhook",
} as const;

/** Namespaces every cluster has whose pods the webhook must never block. */
const KUBERNETES_CONTROL_PLANE_NAMESPACES = ["kube-node-lease", "kube-public", "kube-system"];

/**
 * OpenShift platform namespaces the webhook's own pods, the API servers or node bring-up depend
 * on: API servers and etcd, controllers and the scheduler, the cluster network and DNS, the
 * service CA (which signs the webhook's certificate in service-ca mode), the CSI drivers (the
 * Shared Resource CSI driver mounts ClusterBundles), machine config and CSR approval for new
 * nodes, and the version operator. Listed by name because a label selector has no prefix match;
 * the label exclusions below cover the rest of the `openshift-*` namespaces.
 */
export const OPENSHIFT_CRITICAL_NAMESPACES = [
    "openshift",
    "openshift-apiserver",
    "openshift-apiserver-operator",
    "openshift-authentication",
    "openshift-authentication-operator",
    "openshift-cloud-controller-manager",
    "openshift-cloud-controller-manager-operator",
    "openshift-cluster-csi-drivers",
    "openshift-cluster-machine-approver",
    "openshift-cluster-storage-operator",
    "openshift-cluster-version",
    "openshift-config",
    "openshift-config-managed",
    "openshift-dns",
    "openshift-dns-operator",
    "openshift-etcd",
    "openshift-etcd-operator",
    "openshift-kube-apiserver",
    "openshift-kube-apiserver-operator",
    "openshift-kube-controller-manager",
    "openshift-kube-controller-manager-operator",
    "openshift-kube-scheduler",
    "openshift-kube-scheduler-operator",
    "openshift-machine-api",
    "openshift-machine-config-operator",
    "openshift-multus",
    "openshift-network-operator",
    "openshift-oauth-apiserver",
    "openshift-operator-lifecycle-manager",
    // OLM's global operator namespace: operators the webhook's dependencies come from (cert-manager,
    // Builds for OpenShift with the Shared Resource CSI driver) may run there.
    "openshift-operators",
    "openshift-ovn-kubernetes",
    "openshift-sdn",
    "openshift-service-ca",
    "openshift-service-ca-operator",
];

/**
 * Labels OpenShift's platform namespaces carry (a namespace with one of these values is excluded):
 * `openshift.io/run-level` "0"/"1" marks the control-plane namespaces that start before regular
 * admission applies; `openshift.io/cluster-monitoring: "true"` marks the namespaces the platform
 * monitoring stack owns, which OpenShift sets on its `openshift-*` namespaces and does not support
 * on user namespaces.
 */
export const OPENSHIFT_PLATFORM_NAMESPACE_LABELS: Record<string, string[]> = {
    "openshift.io/cluster-monitoring": ["true"],
    "openshift.io/run-level": ["0", "1"],
};

export interface NamespaceExclusions {
    /** Excluded by `kubernetes.io/metadata.name NotIn`. */
    names: string[];
    /** Excluded by `<label> NotIn <values>`, one expression per label. */
    labels: Record<string, string[]>;
}

/**
 * Where cert-manager runs: upstream's manifests and chart install it in `cert-manager`; the
 * cert-manager Operator for Red Hat OpenShift runs its operands there and itself in
 * `cert-manager-operator`. In cert-manager mode the webhook's serving certificate comes from it.
 */
export const CERT_MANAGER_NAMESPACES = ["cert-manager", "cert-manager-operator"];

/**
 * The namespaces the webhook never intercepts: its own, the control plane's, on OpenShift the
 * platform's, and `dependencies` (the certificate issuer's, the Shared Resource CSI driver's,
 * `subscriptions.webhook.excludedNamespaces`). With failurePolicy Fail a webhook that intercepted
 * the pods it depends on could never come back from an outage: they would wait for it.
 */
export function webhookNamespaceExclusions(
    platform: "openshift" | "kubernetes",
    ownNamespace: string,
    dependencies: readonly string[] = [],
): NamespaceExclusions {
    const names = new Set([ownNamespace, ...KUBERNETES_CONTROL_PLANE_NAMESPACES, ...dependencies]);
    if (platform === "openshift") {
        OPENSHIFT_CRITICAL_NAMESPACES.forEach((n) => names.add(n));
    }
    return { names: [...names].sort(), labels: platform === "openshift" ? OPENSHIFT_PLATFORM_NAMESPACE_LABELS : {} };
}

/**
 * The mutating webhook: pod CREATE, and UPDATE of the `pods/ephemeralcontainers` subresource
 * (how `kubectl debug` adds ephemeral containers), so ephemeral containers get the mounts too.
 * Reinvoked when a later webhook adds containers; it has no side effects.
 */
export function webhookDefinition(failurePolicy: "Fail" | "Ignore", timeoutSeconds: number): WebhookDefinition {
    return {
        name: WEBHOOK_NAME,
        type: "MutatingAdmissionWebhook",
        rules: [
            { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: "Namespaced" },
            { operations: ["UPDATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods/ephemeralcontainers"], scope: "Namespaced" },
        ],
        failurePolicy,
        matchPolicy: "Equivalent",
        sideEffects: "None",
        timeoutSeconds,
        admissionReviewVersions: ["v1"],
        reinvocationPolicy: "IfNeeded",
        path: WEBHOOK_SERVER.mutatePodsPath,
    };
}

/** A namespace of the capability's own (the webhook's, the source namespace): the restricted Pod Security profile is enforced on it. */
export function webhookNamespaceManifest(name: string) {
    return {
        apiVersion: "v1" as const,
        kind: "Namespace" as const,
        metadata: {
            name,
            labels: platformLabels("subscriptions", {
                "pod-security.kubernetes.io/enforce": "restricted",
                "pod-security.kubernetes.io/audit": "restricted",
                "pod-security.kubernetes.io/warn": "restricted",
            }),
        },
    };
}

export interface WebhookPodInputs<S, A> {
    namespace: string;
    replicas: number;
    image: S;
    /** Volumes and mounts of the serving certificate (from the certificates capability). */
    certificateVolumes: { volumes: unknown[]; volumeMounts: unknown[] };
    /** Pod template annotations that roll the pods when the certificate changes. */
    podAnnotations: A;
    /** `WEBHOOK_READ_NAMESPACES`: where its Roles let it list, `<namespace>/<secrets|configmaps>` comma-separated. */
    readNamespaces: string;
    /** `WEBHOOK_SOURCE_NAMESPACE`: where the copies ClusterBundles share are. */
    sourceNamespace: string;
}

export const RESTRICTED_CONTAINER_SECURITY = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
};

/** An HTTP(S) GET probe of a named container port. */
export function httpProbe(path: string, port: string, scheme: "HTTP" | "HTTPS", periodSeconds: number) {
    return { httpGet: { path, port, scheme }, periodSeconds, timeoutSeconds: 2, failureThreshold: 3 };
}

/**
 * The webhook's Deployment. Highly available: spread across nodes (a hard rule, tainted and
 * cordoned nodes not counted) and zones (best effort), never fewer ready pods than desired during
 * a rollout, and `system-cluster-critical` priority because with failurePolicy Fail every pod
 * creation in the cluster waits on it. Restricted Pod Security: non-root (the image sets a numeric
 * user; no fixed UID so OpenShift's restricted SCC can assign one), read-only root filesystem with
 * an emptyDir for /tmp, no privilege escalation, all capabilities dropped, RuntimeDefault seccomp.
 */
export function webhookDeploymentManifest<S, A>(inputs: WebhookPodInputs<S, A>) {
    const labels = platformLabels("subscriptions", WEBHOOK_MATCH_LABELS);
    const probe = (path: string, periodSeconds: number) => httpProbe(path, WEBHOOK_SERVER.portName, "HTTPS", periodSeconds);
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: WEBHOOK_NAMES.deployment, namespace: inputs.namespace, labels },
        spec: {
            replicas: inputs.replicas,
            selector: { matchLabels: { ...WEBHOOK_MATCH_LABELS } },
            strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
            template: {
                metadata: { labels, annotations: inputs.podAnnotations },
                spec: {
                    serviceAccountName: WEBHOOK_NAMES.serviceAccount,
                    priorityClassName: "system-cluster-critical",
                    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
                    topologySpreadConstraints: [
                        {
                            maxSkew: 1,
                            topologyKey: "kubernetes.io/hostname",
                            whenUnsatisfiable: "DoNotSchedule",
                            nodeTaintsPolicy: "Honor",
                            labelSelector: { matchLabels: { ...WEBHOOK_MATCH_LABELS } },
                        },
                        {
                            maxSkew: 1,
                            topologyKey: "topology.kubernetes.io/zone",
                            whenUnsatisfiable: "ScheduleAnyway",
                            labelSelector: { matchLabels: { ...WEBHOOK_MATCH_LABELS } },
                        },
                    ],
                    terminationGracePeriodSeconds: 30,
                    containers: [
                        {
                            name: "webhook",
                            image: inputs.image,
                            imagePullPolicy: "IfNotPresent",
                            // The server lists only where its RBAC lets it, and reads ClusterBundles' sources at their copies (webhook/config.ts).
                            env: [
                                { name: "WEBHOOK_READ_NAMESPACES", value: inputs.readNamespaces },
                                { name: "WEBHOOK_SOURCE_NAMESPACE", value: inputs.sourceNamespace },
                                // Memory the C heap keeps after a long list (webhook/api.ts WEBHOOK_PROCESS_ENV).
                                ...Object.entries(WEBHOOK_PROCESS_ENV).map(([name, value]) => ({ name, value })),
                            ],
                            ports: [{ name: WEBHOOK_SERVER.portName, containerPort: WEBHOOK_SERVER.port, protocol: "TCP" }],
                            readinessProbe: probe(WEBHOOK_SERVER.readinessPath, 5),
                            livenessProbe: { ...probe(WEBHOOK_SERVER.livenessPath, 10), initialDelaySeconds: 10 },
                            // From `npm run bench:scale` (docs/subscriptions.md, "Scale: teams' Bundles"): the
                            // request covers the RSS the server keeps at 10,000 teams' Bundles (134-139 MiB)
                            // with a third to spare, the limit more than twice the peak there (197-220 MiB),
                            // so no replica is OOM-killed at a scale a project template reaches.
                            resources: {
                                requests: { cpu: "50m", memory: "192Mi" },
                                limits: { cpu: "1", memory: "512Mi" },
                            },
                            securityContext: RESTRICTED_CONTAINER_SECURITY,
                            volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, ...inputs.certificateVolumes.volumeMounts],
                        },
                    ],
                    volumes: [{ name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } }, ...inputs.certificateVolumes.volumes],
                },
            },
        },
    };
}

/** At most one webhook pod down for voluntary disruptions; unhealthy pods may always be evicted, so drains never stick. */
export function webhookPodDisruptionBudgetManifest(namespace: string) {
    return {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: WEBHOOK_NAMES.podDisruptionBudget, namespace, labels: platformLabels("subscriptions") },
        spec: {
            maxUnavailable: 1,
            selector: { matchLabels: { ...WEBHOOK_MATCH_LABELS } },
            unhealthyPodEvictionPolicy: "AlwaysAllow",
        },
    };
}

/** One namespace the webhook may read Secrets and/or ConfigMaps in: its Role's rules, and the kinds it lists there. */
export interface WebhookReadScope {
    namespace: string;
    rules: AccessRule[];
    /** The kinds it lists namespace-wide (`WEBHOOK_READ_NAMESPACES`); the others it reads by name. */
    listed: KeyResource[];
}

/**
 * Where the webhook reads key names, and how:
 * - the source namespace, namespace-wide, for the kinds the ClusterBundles share (it holds nothing
 *   but their copies);
 * - each declared Bundle's namespace, by name: `get` on exactly the Secrets and ConfigMaps the
 *   Bundles there reference (the server reads them one by one, webhook/key-sources.ts);
 * - `subscriptions.webhook.readNamespaces`, namespace-wide for both kinds (teams' Bundles there).
 * Teams' Bundles elsewhere are read by name too: `etc-pki-entitlement` through the ClusterRole, other
 * names where the team grants `get`.
 */
export function webhookReadScopes(
    sourceNamespace: string,
    shared: readonly ClusterBundleReference[],
    bundles: readonly BundleDeclaration[],
    readNamespaces: readonly string[],
): WebhookReadScope[] {
    const listed = new Map<string, Set<KeyResource>>();
    const byName = new Map<string, Map<KeyResource, Set<string>>>();
    const list = (namespace: string, resource: KeyResource) => listed.set(namespace, (listed.get(namespace) ?? new Set()).add(resource));
    const name = (namespace: string, resource: KeyResource, object: string) => {
        const kinds = byName.get(namespace) ?? new Map<KeyResource, Set<string>>();
        kinds.set(resource, (kinds.get(resource) ?? new Set()).add(object));
        byName.set(namespace, kinds);
    };
    for (const reference of shared) list(sourceNamespace, KEY_RESOURCES[reference.kind]);
    for (const namespace of readNamespaces) {
        list(namespace, KEY_RESOURCES.Secret);
        list(namespace, KEY_RESOURCES.ConfigMap);
    }
    for (const bundle of bundles) {
        bundle.entitlements.forEach((ref) => name(bundle.namespace, KEY_RESOURCES.Secret, ref.name));
        bundle.yumRepositories.forEach((ref) => name(bundle.namespace, KEY_RESOURCES.ConfigMap, ref.name));
    }
    const order: KeyResource[] = [KEY_RESOURCES.Secret, KEY_RESOURCES.ConfigMap];
    const namespaces = [...new Set([...listed.keys(), ...byName.keys()])].sort();
    return namespaces.map((namespace) => {
        const kinds = order.filter((resource) => listed.get(namespace)?.has(resource));
        const named = order
            .filter((resource) => !kinds.includes(resource) && byName.get(namespace)?.has(resource))
            .map((resource) => keyReadByNameRule(resource, [...(byName.get(namespace)?.get(resource) ?? [])]));
        return { namespace, rules: [...(kinds.length > 0 ? [keyReadRule(kinds)] : []), ...named], listed: kinds };
    });
}

/** `WEBHOOK_READ_NAMESPACES` for these scopes: `<namespace>/<resource>` for each kind listed there. */
export function readNamespacesValue(scopes: readonly WebhookReadScope[]): string {
    return scopes.flatMap((scope) => scope.listed.map((resource) => `${scope.namespace}/${resource}`)).join(",");
}
