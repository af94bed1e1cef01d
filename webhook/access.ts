/**
 * What the subscription servers read and do in the cluster: the single source of the least-
 * privilege RBAC their ServiceAccounts get, from which the stack renders its ClusterRoles and Roles.
 *
 * - The admission server watches bundles cluster-wide, asks SubjectAccessReviews, and reads the key
 *   names of the Secrets/ConfigMaps bundles reference: namespace-wide only in the source namespace
 *   (which holds nothing but the copies ClusterBundles share) and where an admin opts in, never in a
 *   platform namespace; by name everywhere else (webhook/key-sources.ts).
 * - The source sync reads each original a ClusterBundle shares by name only, writes its copy in the
 *   source namespace by name only, and reads the shares that own the copies (webhook/source-sync.ts).
 */
import {
    BUNDLE_PLURAL,
    CLUSTER_BUNDLE_PLURAL,
    type ObjectReference,
    SHARED_CONFIG_MAP_PLURAL,
    SHARED_RESOURCE_GROUP,
    SHARED_SECRET_PLURAL,
    SUBSCRIPTION_GROUP,
    sourceCopyName,
} from "./api";

export interface AccessRule {
    apiGroups: string[];
    resources: string[];
    resourceNames?: string[];
    verbs: string[];
}

/**
 * The Secret name teams' Bundles conventionally reference (the seed's and the console sample's
 * `etc-pki-entitlement`): the webhook may read Secrets of this name in every namespace, by name only,
 * so a team's Bundle needs no cluster admin. It lists and watches them with one informer selected by
 * `metadata.name`, which the API server authorizes with the name (kubernetes
 * staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go), so this resourceNames rule
 * allows it (plugin/pkg/auth/authorizer/rbac/rbac.go); `get` serves the read by name when that
 * informer is refused. Only key names are kept. Other names: the team grants `get` in its namespace
 * (docs/subscriptions.md, "Teams' own Bundles").
 */
export const TEAM_BUNDLE_SECRET_NAMES: readonly string[] = ["etc-pki-entitlement"];

export function teamBundleReadRule(): AccessRule {
    return { apiGroups: [""], resources: ["secrets"], resourceNames: [...TEAM_BUNDLE_SECRET_NAMES], verbs: ["get", "list", "watch"] };
}

/** What the admission server needs everywhere: the bundle informers and SubjectAccessReviews. */
export const WEBHOOK_CLUSTER_ACCESS_RULES: AccessRule[] = [
    // Informers only: list and watch (the server never reads one bundle by name).
    { apiGroups: [SUBSCRIPTION_GROUP], resources: [BUNDLE_PLURAL, CLUSTER_BUNDLE_PLURAL], verbs: ["list", "watch"] },
    { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
];

/** The admission server's ClusterRole: bundles, reviews, and the conventional Secret name by name. */
export function webhookClusterRules(): AccessRule[] {
    return [...WEBHOOK_CLUSTER_ACCESS_RULES, teamBundleReadRule()];
}

/** The resources the key-read rules name, by the kind a bundle references. */
export const KEY_RESOURCES = { Secret: "secrets", ConfigMap: "configmaps" } as const;

export type KeyResource = (typeof KEY_RESOURCES)[keyof typeof KEY_RESOURCES];

/** Namespace-wide key read (the source namespace, namespaces an admin lists): list and watch of the kinds. */
export function keyReadRule(resources: readonly KeyResource[]): AccessRule {
    return { apiGroups: [""], resources: [...resources], verbs: ["list", "watch"] };
}

/** Key read of exactly these objects of one kind (declared Bundles' Secrets and ConfigMaps): `get` by name. */
export function keyReadByNameRule(resource: KeyResource, names: readonly string[]): AccessRule {
    return { apiGroups: [""], resources: [resource], resourceNames: [...new Set(names)].sort(), verbs: ["get"] };
}

/** One object a ClusterBundle shares, which the source sync copies into the source namespace. */
export interface SourceObject {
    kind: keyof typeof KEY_RESOURCES;
    namespace: string;
    name: string;
    /** The shares whose `secretRef`/`configMapRef` is the copy: its owners (the copy goes with the last of them). */
    shares: string[];
}

/** The share resource that exposes each kind. */
export const SHARE_OF_KIND = { Secret: SHARED_SECRET_PLURAL, ConfigMap: SHARED_CONFIG_MAP_PLURAL } as const;

/** The source sync's access, as rules per namespace (`""` for the ClusterRole). */
export function sourceSyncRules(sourceNamespace: string, objects: readonly SourceObject[]): Map<string, AccessRule[]> {
    const rules = new Map<string, AccessRule[]>();
    const add = (namespace: string, rule: AccessRule) => rules.set(namespace, [...(rules.get(namespace) ?? []), rule]);
    const byKind = (kind: SourceObject["kind"]) => objects.filter((object) => object.kind === kind);
    for (const kind of ["Secret", "ConfigMap"] as const) {
        const ofKind = byKind(kind);
        if (ofKind.length === 0) continue;
        const resource = KEY_RESOURCES[kind];
        // The shares, by name: the copy's ownerReferences need their uids.
        add("", {
            apiGroups: [SHARED_RESOURCE_GROUP],
            resources: [SHARE_OF_KIND[kind]],
            resourceNames: [...new Set(ofKind.flatMap((object) => object.shares))].sort(),
            verbs: ["get"],
        });
        // Each original by name: one list and watch selected by metadata.name (the name is the request's).
        for (const namespace of [...new Set(ofKind.map((object) => object.namespace))].sort()) {
            const names = ofKind.filter((object) => object.namespace === namespace).map((object) => object.name);
            add(namespace, {
                apiGroups: [""],
                resources: [resource],
                resourceNames: [...new Set(names)].sort(),
                verbs: ["get", "list", "watch"],
            });
        }
        // Each copy by name: a server-side apply creates it (the create is authorized with its name,
        // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go `createAuthorizerAttributes`).
        add(sourceNamespace, {
            apiGroups: [""],
            resources: [resource],
            resourceNames: [...new Set(ofKind.map((object) => sourceCopyName(object as Required<ObjectReference>)))].sort(),
            verbs: ["get", "create", "patch", "delete"],
        });
    }
    return rules;
}
