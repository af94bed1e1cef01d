/**
 * The source sync's deployment, as pure data (webhook/source-sync.ts is the server): the source
 * namespace, the service account with exactly the access `sourceSyncRules` (webhook/access.ts) names,
 * and a one-replica Deployment of the webhook's image in source-sync mode.
 */
import { type SourceObject, sourceSyncRules } from "../../webhook/access";
import { platformLabels } from "../shared/labels";
import { httpProbe, RESTRICTED_CONTAINER_SECURITY, WEBHOOK_APP, webhookNamespaceManifest } from "./webhook";

export const SOURCE_SYNC_APP = "subscription-source-sync";

export const SOURCE_SYNC_NAMES = {
    deployment: SOURCE_SYNC_APP,
    serviceAccount: SOURCE_SYNC_APP,
    /** The ClusterRole and ClusterRoleBinding (the shares, by name), and each namespace's Role and RoleBinding. */
    rbac: SOURCE_SYNC_APP,
} as const;

export const SOURCE_SYNC_MATCH_LABELS = {
    "app.kubernetes.io/name": SOURCE_SYNC_APP,
    "app.kubernetes.io/component": "source-sync",
    "app.kubernetes.io/part-of": WEBHOOK_APP,
} as const;

/** Plain HTTP of /healthz, /readyz and /metrics (webhook/config.ts SOURCE_SYNC_SETTINGS.port). */
export const SOURCE_SYNC_PORT = 8080;

/**
 * The source namespace: created by the stack, holding nothing but the copies the sync writes (no pods
 * run there; the restricted profile is enforced all the same).
 */
export const sourceNamespaceManifest = webhookNamespaceManifest;

/** The sync's ClusterRole (shares by name) and one Role per namespace (originals by name; copies by name), each with its binding. */
export function sourceSyncRbacManifests(namespace: string, sourceNamespace: string, objects: readonly SourceObject[]) {
    const labels = platformLabels("subscriptions");
    const subjects = [{ kind: "ServiceAccount", name: SOURCE_SYNC_NAMES.serviceAccount, namespace }];
    const rules = sourceSyncRules(sourceNamespace, objects);
    const cluster = rules.get("") ?? [];
    return {
        clusterRole: {
            apiVersion: "rbac.authorization.k8s.io/v1" as const,
            kind: "ClusterRole" as const,
            metadata: { name: SOURCE_SYNC_NAMES.rbac, labels },
            rules: cluster,
        },
        clusterRoleBinding: {
            apiVersion: "rbac.authorization.k8s.io/v1" as const,
            kind: "ClusterRoleBinding" as const,
            metadata: { name: SOURCE_SYNC_NAMES.rbac, labels },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: SOURCE_SYNC_NAMES.rbac },
            subjects,
        },
        roles: [...rules.entries()]
            .filter(([where]) => where !== "")
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([where, namespaceRules]) => {
                const metadata = { name: SOURCE_SYNC_NAMES.rbac, namespace: where, labels };
                return {
                    role: { apiVersion: "rbac.authorization.k8s.io/v1" as const, kind: "Role" as const, metadata, rules: namespaceRules },
                    roleBinding: {
                        apiVersion: "rbac.authorization.k8s.io/v1" as const,
                        kind: "RoleBinding" as const,
                        metadata,
                        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: SOURCE_SYNC_NAMES.rbac },
                        subjects,
                    },
                };
            }),
    };
}

export interface SourceSyncPodInputs<S> {
    namespace: string;
    sourceNamespace: string;
    image: S;
    objects: readonly SourceObject[];
}

/**
 * One replica, replaced with `Recreate`: two syncs with different object lists (a rollout) would
 * undo each other's deletes; a few seconds without one only delay a rotation (copies keep what they
 * have). Restricted Pod Security, read-only root filesystem, no service port (nothing calls it but
 * probes and a metrics scraper).
 */
export function sourceSyncDeploymentManifest<S>(inputs: SourceSyncPodInputs<S>) {
    const labels = platformLabels("subscriptions", SOURCE_SYNC_MATCH_LABELS);
    const probe = (path: string, periodSeconds: number) => httpProbe(path, "http", "HTTP", periodSeconds);
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: SOURCE_SYNC_NAMES.deployment, namespace: inputs.namespace, labels },
        spec: {
            replicas: 1,
            selector: { matchLabels: { ...SOURCE_SYNC_MATCH_LABELS } },
            strategy: { type: "Recreate" },
            template: {
                metadata: { labels },
                spec: {
                    serviceAccountName: SOURCE_SYNC_NAMES.serviceAccount,
                    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
                    terminationGracePeriodSeconds: 30,
                    containers: [
                        {
                            name: "source-sync",
                            image: inputs.image,
                            imagePullPolicy: "IfNotPresent",
                            env: [
                                { name: "SUBSCRIPTION_SERVER", value: "source-sync" },
                                { name: "SOURCE_SYNC_NAMESPACE", value: inputs.sourceNamespace },
                                { name: "SOURCE_SYNC_OBJECTS", value: JSON.stringify(inputs.objects) },
                                { name: "SOURCE_SYNC_PORT", value: String(SOURCE_SYNC_PORT) },
                            ],
                            ports: [{ name: "http", containerPort: SOURCE_SYNC_PORT, protocol: "TCP" }],
                            readinessProbe: probe("/readyz", 10),
                            livenessProbe: { ...probe("/healthz", 20), initialDelaySeconds: 10 },
                            resources: { requests: { cpu: "10m", memory: "64Mi" }, limits: { cpu: "200m", memory: "128Mi" } },
                            securityContext: RESTRICTED_CONTAINER_SECURITY,
                        },
                    ],
                },
            },
        },
    };
}
