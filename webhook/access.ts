/**
 * What the admission server reads and does in the cluster: the single source of the least-
 * privilege RBAC its ServiceAccount gets. It watches bundles and the Secrets and ConfigMaps they
 * reference (keeping only key names), and asks SubjectAccessReviews for ClusterBundle access.
 */
import { BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL, SUBSCRIPTION_GROUP } from "./api";

export interface AccessRule {
    apiGroups: string[];
    resources: string[];
    verbs: string[];
}

export const WEBHOOK_ACCESS_RULES: AccessRule[] = [
    // Informers only: list and watch (the server never reads one object by name).
    { apiGroups: [SUBSCRIPTION_GROUP], resources: [BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL], verbs: ["list", "watch"] },
    // Key sets of referenced Secrets/ConfigMaps decide overlap denials; values are never kept.
    { apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["list", "watch"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];
