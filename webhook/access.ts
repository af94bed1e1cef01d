/**
 * What the admission server reads and does in the cluster: the single source of the least-
 * privilege RBAC its ServiceAccount gets. It watches bundles cluster-wide, asks
 * SubjectAccessReviews, and lists/watches the Secrets and ConfigMaps bundles reference (keeping
 * only key names) in exactly the namespaces bundles reference: the key-read rule goes into one
 * Role per such namespace, and into the ClusterRole only when cluster-wide read is opted into;
 * elsewhere, by name (`teamBundleReadRule`).
 */
import { BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL, SUBSCRIPTION_GROUP } from "./api";

export interface AccessRule {
    apiGroups: string[];
    resources: string[];
    resourceNames?: string[];
    verbs: string[];
}

/**
 * The Secret name teams' Bundles conventionally reference (the seed's and the console sample's
 * `etc-pki-entitlement`): the webhook may list and watch Secrets of this name in every namespace,
 * by name only, so a team's Bundle needs no cluster admin. The server reads such an object through
 * a `metadata.name` field-selected list and watch, which the API server authorizes with the name
 * (kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), so this
 * resourceNames rule allows it (plugin/pkg/auth/authorizer/rbac/rbac.go); only key names are kept.
 * Other names: the team grants the same rule in its namespace (docs/subscriptions.md).
 */
export const TEAM_BUNDLE_SECRET_NAMES: readonly string[] = ["etc-pki-entitlement"];

export function teamBundleReadRule(): AccessRule {
    return { apiGroups: [""], resources: ["secrets"], resourceNames: [...TEAM_BUNDLE_SECRET_NAMES], verbs: ["list", "watch"] };
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

/** The ClusterRole's rules: cluster-wide key read only when opted into, else by name for teams' Bundles. */
export function webhookClusterRules(readAllNamespaces: boolean): AccessRule[] {
    return readAllNamespaces
        ? [...WEBHOOK_CLUSTER_ACCESS_RULES, keyReadRule(["secrets", "configmaps"])]
        : [...WEBHOOK_CLUSTER_ACCESS_RULES, teamBundleReadRule()];
}
