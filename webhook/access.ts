/**
 * What the admission server reads and does in the cluster: the single source of the least-
 * privilege RBAC its ServiceAccount gets. It watches bundles cluster-wide, asks
 * SubjectAccessReviews, and lists/watches the Secrets and ConfigMaps bundles reference (keeping
 * only key names) in exactly the namespaces bundles reference: the key-read rule goes into one
 * Role per such namespace, and into the ClusterRole only when cluster-wide read is opted into.
 */
import { BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL, SUBSCRIPTION_GROUP } from "./api";

export interface AccessRule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
}

/** What the server needs everywhere: the bundle informers and SubjectAccessReviews. */
export const WEBHOOK_CLUSTER_ACCESS_RULES: AccessRule[] = [
    // Informers only: list and watch (the server never reads one object by name).
    { apiGroups: [SUBSCRIPTION_GROUP], resources: [BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL], verbs: ["list", "watch"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** The resources the key-read rule names, by the kind a bundle references. */
export const KEY_RESOURCES = { Secret: "secrets", ConfigMap: "configmaps" } as const;

export type KeyResource = (typeof KEY_RESOURCES)[keyof typeof KEY_RESOURCES];

/** Key sets of referenced Secrets/ConfigMaps decide overlap denials; values are never kept. */
export function keyReadRule(resources: readonly KeyResource[]): AccessRule {
    return { apiGroups: [""], resources: [...resources], verbs: ["list", "watch"] };
}

/** The ClusterRole's rules: cluster-wide key read only when opted into. */
export function webhookClusterRules(readAllNamespaces: boolean): AccessRule[] {
    return readAllNamespaces ? [...WEBHOOK_CLUSTER_ACCESS_RULES, keyReadRule(["secrets", "configmaps"])] : WEBHOOK_CLUSTER_ACCESS_RULES;
}
