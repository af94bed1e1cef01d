/**
 * The rules for declared bundles (seed 000), as pure functions: the config schema runs them, so
 * every problem is reported before anything is registered, and each message names the bundle.
 * Each rule lives here once; the schema only places the issues at their paths.
 */
import {
    clusterBundleRoleName,
    clusterBundleShareName,
    DEFAULT_SOURCE_NAMESPACE,
    SHARED_RESOURCE_GROUP,
    SHARED_SECRET_PLURAL,
    type ShareRole,
} from "../../webhook/api";
import {
    DNS1123_LABEL_RULE,
    DNS1123_SUBDOMAIN_RULE,
    isDns1123Label,
    isDns1123Subdomain,
    isPlatformNamespace,
    PLATFORM_NAMESPACE_PREFIXES,
} from "../shared/k8s-names";
import { describeValue } from "../shared/problems";
import {
    AGGREGATE_TO_LABEL_PREFIX,
    aggregationLabel,
    DEFAULT_AGGREGATION_ROLES,
    PolicyRule,
    ruleGrantsUnrestricted,
    ruleReachesResource,
} from "../shared/rbac";

/** `subscriptions.sourceNamespace` when it is not given (webhook/api.ts: where the copies of shared objects live). */
export { DEFAULT_SOURCE_NAMESPACE };

/**
 * What becomes of the shares an update no longer declares (a ClusterBundle or a reference removed or
 * renamed): kept while a running pod mounts them (the seed: running pods are not impacted), or
 * deleted at once (running pods that mount them lose those files; the preview says which).
 */
export const REMOVED_SHARES_POLICIES = ["keepWhileInUse", "deleteAtOnce"] as const;
export type RemovedSharesPolicy = (typeof REMOVED_SHARES_POLICIES)[number];

/** Roles a ClusterBundle may aggregate to without being listed in `allowedAggregationRoles`: admin, edit, view. */
export { aggregationLabel, DEFAULT_AGGREGATION_ROLES };
/** A label name (the part after the prefix's `/`) has at most 63 characters. */
export const MAX_AGGREGATION_ROLE_LENGTH = 63 - AGGREGATE_TO_LABEL_PREFIX.slice(AGGREGATE_TO_LABEL_PREFIX.indexOf("/") + 1).length;
/** Longest ClusterBundle name whose ClusterRole `<name>-subscription-bundle` is still a valid name. */
export const MAX_CLUSTER_BUNDLE_NAME_LENGTH = 253 - clusterBundleRoleName("").length;

/**
 * The Shared Resource CSI driver reserves share names that start with `openshift`: its validating
 * webhook refuses to create such a SharedSecret/SharedConfigMap, and its node server refuses to
 * mount one, unless the name is listed in its RESERVED_SHARED_*_NAMES for exactly that object
 * (openshift/csi-driver-shared-resource pkg/config/namewatcher.go `startsWithOpenShift`,
 * pkg/webhook/csidriver/csidriver.go, pkg/csidriver/nodeserver.go). Those reservations are the
 * platform's own (`openshift-etc-pki-entitlement`), so this program never generates such a name.
 */
export const DRIVER_RESERVED_SHARE_PREFIX = "openshift";

/** Whether the Shared Resource CSI driver would refuse a share of this name (see DRIVER_RESERVED_SHARE_PREFIX). */
export function driverRefusesShareName(share: string): boolean {
    return share.startsWith(DRIVER_RESERVED_SHARE_PREFIX);
}

/**
 * Where the Shared Resource CSI driver's node DaemonSet runs, by how it was installed. From
 * OpenShift 4.18 the Builds for OpenShift operator installs it (csi-driver-shared-resource
 * README.md, "How To Use" step 3: service account `csi-driver-shared-resource` in the operator's
 * namespace, `openshift-builds` by default); OpenShift 4.10-4.17 ship it as Tech Preview, deployed
 * by openshift/csi-driver-shared-resource-operator (assets/node.yaml: service account
 * `csi-driver-shared-resource-plugin` in `openshift-cluster-csi-drivers`, the namespace
 * pkg/client/client.go calls DefaultNamespace).
 */
export const DRIVER_SERVICE_ACCOUNTS = {
    buildsForOpenShift: { name: "csi-driver-shared-resource", namespace: "openshift-builds" },
    techPreview: { name: "csi-driver-shared-resource-plugin", namespace: "openshift-cluster-csi-drivers" },
} as const;

/** What a share of each list exposes; part of the share's name. */
export const SHARE_ROLES: Record<"entitlements" | "yumRepositories", ShareRole> = {
    entitlements: "entitlement",
    yumRepositories: "yum-repo",
};

/** Which list of a bundle a reference comes from: entitlement Secrets or yum repository ConfigMaps. */
export type BundleSource = "entitlements" | "yumRepositories";

export interface RefInput {
    name: string;
    namespace?: string;
}

export interface ClusterBundleInput {
    name: string;
    entitlements: RefInput[];
    yumRepositories: RefInput[];
    aggregateToClusterRoles: string[];
}

export interface BundleInput {
    name: string;
    namespace: string;
    entitlements: RefInput[];
    yumRepositories: RefInput[];
}

/** A problem at `path` (relative to the object the rule judged). */
export interface RuleIssue {
    path: (string | number)[];
    message: string;
}

const SOURCES: readonly BundleSource[] = ["entitlements", "yumRepositories"];
const WHAT: Record<BundleSource, string> = { entitlements: "entitlement Secret", yumRepositories: "yum repository ConfigMap" };

export function describeClusterBundle(name: string): string {
    return `ClusterBundle ${describeValue(name)}`;
}

export function describeBundle(bundle: { namespace: string; name: string }): string {
    return `Bundle ${describeValue(`${bundle.namespace}/${bundle.name}`)}`;
}

function refText(ref: RefInput): string {
    return describeValue(ref.namespace === undefined ? ref.name : `${ref.namespace}/${ref.name}`);
}

/** Checks shared by both kinds: the bundle's name, a non-empty entitlements list, each reference's names, no repeats. */
function commonIssues(
    who: string,
    bundle: { name: string; entitlements: RefInput[]; yumRepositories: RefInput[] },
    defaultNamespace: string | undefined,
): RuleIssue[] {
    const issues: RuleIssue[] = [];
    if (!isDns1123Subdomain(bundle.name)) {
        issues.push({ path: ["name"], message: `${who}: the name ${DNS1123_SUBDOMAIN_RULE}` });
    }
    if (bundle.entitlements.length === 0) {
        issues.push({
            path: ["entitlements"],
            message: `${who}: entitlements is empty; a bundle must reference at least one entitlement Secret`,
        });
    }
    for (const source of SOURCES) {
        const seen = new Map<string, number>();
        bundle[source].forEach((ref, index) => {
            if (!isDns1123Subdomain(ref.name)) {
                issues.push({
                    path: [source, index, "name"],
                    message: `${who}: ${WHAT[source]} name ${describeValue(ref.name)} ${DNS1123_SUBDOMAIN_RULE}`,
                });
            }
            // A Bundle's reference may only repeat the bundle's namespace: bundleIssues judges it.
            if (defaultNamespace === undefined && ref.namespace !== undefined && !isDns1123Label(ref.namespace)) {
                issues.push({
                    path: [source, index, "namespace"],
                    message: `${who}: ${WHAT[source]} namespace ${describeValue(ref.namespace)} ${DNS1123_LABEL_RULE}`,
                });
            }
            const key = `${ref.namespace ?? defaultNamespace}/${ref.name}`;
            const first = seen.get(key);
            if (first !== undefined) {
                issues.push({
                    path: [source, index],
                    message: `${who}: ${WHAT[source]} ${refText(ref)} is listed twice (already at index ${first})`,
                });
            } else {
                seen.set(key, index);
            }
        });
    }
    return issues;
}

/** The rules of one ClusterBundle on its own (names, lengths of what it generates, its roles' spelling). */
export function clusterBundleIssues(bundle: ClusterBundleInput): RuleIssue[] {
    const who = describeClusterBundle(bundle.name);
    const issues = commonIssues(who, bundle, undefined);
    if (bundle.name.length > MAX_CLUSTER_BUNDLE_NAME_LENGTH) {
        issues.push({
            path: ["name"],
            message: `${who}: the name has ${bundle.name.length} characters; must have at most ${MAX_CLUSTER_BUNDLE_NAME_LENGTH} so that its ClusterRole "<name>${clusterBundleRoleName("")}" is a valid name`,
        });
    }
    if (driverRefusesShareName(bundle.name)) {
        issues.push({
            path: ["name"],
            message: `${who}: the name starts with "${DRIVER_RESERVED_SHARE_PREFIX}"; the Shared Resource CSI driver refuses shares whose names start with "${DRIVER_RESERVED_SHARE_PREFIX}" (reserved for the platform), and every share of a ClusterBundle is named "<name>-..."`,
        });
    } else {
        // Share names start with the bundle's name today; checked one by one so a change of the
        // naming scheme cannot generate a name the driver refuses.
        for (const source of SOURCES) {
            bundle[source].forEach((ref, index) => {
                const share = clusterBundleShareName(bundle.name, SHARE_ROLES[source], { name: ref.name, namespace: ref.namespace ?? "" });
                if (driverRefusesShareName(share)) {
                    issues.push({
                        path: [source, index],
                        message: `${who}: its share ${describeValue(share)} starts with "${DRIVER_RESERVED_SHARE_PREFIX}"; the Shared Resource CSI driver refuses such shares`,
                    });
                }
            });
        }
    }
    const seenRoles = new Map<string, number>();
    bundle.aggregateToClusterRoles.forEach((role, index) => {
        const path = ["aggregateToClusterRoles", index];
        if (!isDns1123Subdomain(role)) {
            issues.push({ path, message: `${who}: role ${describeValue(role)} ${DNS1123_SUBDOMAIN_RULE}` });
        } else if (role.length > MAX_AGGREGATION_ROLE_LENGTH) {
            issues.push({
                path,
                message: `${who}: role ${describeValue(role)} has ${role.length} characters; must have at most ${MAX_AGGREGATION_ROLE_LENGTH} so that the label "${AGGREGATE_TO_LABEL_PREFIX}<role>" is a valid label name`,
            });
        }
        const first = seenRoles.get(role);
        if (first !== undefined) {
            issues.push({ path, message: `${who}: role ${describeValue(role)} is listed twice (already at index ${first})` });
        } else {
            seenRoles.set(role, index);
        }
    });
    return issues;
}

/**
 * The rules of one namespaced Bundle. A Bundle is namespace-local (seed 000): the webhook mounts
 * its Secrets and ConfigMaps as a projected volume, and a projected volume can only reference
 * objects in the pod's namespace. So a reference may omit `namespace` (it is the bundle's) and
 * may not name another one; sharing across namespaces is what ClusterBundles are for.
 */
export function bundleIssues(bundle: BundleInput): RuleIssue[] {
    const who = describeBundle(bundle);
    const issues = commonIssues(who, bundle, bundle.namespace);
    if (!isDns1123Label(bundle.namespace)) {
        issues.push({ path: ["namespace"], message: `${who}: the namespace ${DNS1123_LABEL_RULE}` });
    }
    for (const source of SOURCES) {
        bundle[source].forEach((ref, index) => {
            if (ref.namespace !== undefined && ref.namespace !== bundle.namespace) {
                issues.push({
                    path: [source, index, "namespace"],
                    message: `${who}: ${describeValue(ref.namespace)} differs from the bundle's namespace; a Bundle may only reference objects in its own namespace (use a ClusterBundle to share across namespaces)`,
                });
            }
        });
    }
    return issues;
}

/**
 * Roles a ClusterBundle aggregates to must be admin, edit, view or listed in
 * `allowedAggregationRoles`: aggregating into any other role widens who can mount entitlements.
 * Roles that fail their own spelling rule are left to it (one mistake, one problem).
 */
export function aggregationRoleIssues(clusterBundles: ClusterBundleInput[], allowedAggregationRoles: string[]): RuleIssue[] {
    const allowed = new Set<string>([...DEFAULT_AGGREGATION_ROLES, ...allowedAggregationRoles]);
    const issues: RuleIssue[] = [];
    clusterBundles.forEach((bundle, i) =>
        bundle.aggregateToClusterRoles.forEach((role, j) => {
            if (isDns1123Subdomain(role) && !allowed.has(role)) {
                issues.push({
                    path: ["clusterBundles", i, "aggregateToClusterRoles", j],
                    message: `${describeClusterBundle(bundle.name)}: role ${describeValue(role)} is not admin, edit or view; list it in subscriptions.allowedAggregationRoles to allow it`,
                });
            }
        }),
    );
    return issues;
}

/** One rule of an aggregated ClusterRole that grants what such a role must not. */
export interface AggregatedRoleProblem {
    /** Index in the role's `rules`. */
    index: number;
    message: string;
}

/**
 * What a ClusterRole aggregated into admin, edit or view (or another role ClusterBundles may
 * aggregate to) must not grant. ClusterBundles share entitlements through such roles (seed 000),
 * so the role grants nothing on Secrets (every holder of the role would read the entitlement keys
 * in every namespace it reaches) and `use` on SharedSecrets only by resourceNames (a role that
 * may use every share mounts every bundle's keys, not its own).
 */
export function aggregatedRoleProblems(rules: readonly Partial<PolicyRule>[]): AggregatedRoleProblem[] {
    const problems: AggregatedRoleProblem[] = [];
    rules.forEach((rule, index) => {
        if (ruleReachesResource(rule, "", "secrets")) {
            problems.push({
                index,
                message: `grants ${describeValue(rule.verbs ?? [])} on Secrets (apiGroups ${describeValue(rule.apiGroups ?? [])}, resources ${describeValue(rule.resources ?? [])}); a role aggregated into a default role must grant nothing on Secrets`,
            });
        }
        if (ruleGrantsUnrestricted(rule, { group: SHARED_RESOURCE_GROUP, resource: SHARED_SECRET_PLURAL, verb: "use" })) {
            problems.push({
                index,
                message: `grants "use" on every SharedSecret (${SHARED_SECRET_PLURAL}.${SHARED_RESOURCE_GROUP} without resourceNames); name the shares the role may use`,
            });
        }
    });
    return problems;
}

/** What the source-namespace rules judge: the capability's namespaces and the references into them. */
export interface SourceNamespaceInput {
    sourceNamespace: string;
    /** `subscriptions.namespace`: the webhook's, holding its serving key. */
    namespace: string;
    driverNamespace: string;
    clusterBundles: ClusterBundleInput[];
    bundles: BundleInput[];
    readNamespaces: string[];
    readAllNamespaces: boolean;
}

/**
 * No component gains read of a Secret it does not share (issue 37). The Shared Resource CSI driver
 * lists and watches every Secret and ConfigMap of the namespace its shares point at (its refresh
 * informer: openshift/csi-driver-shared-resource pkg/controller/controller.go), so shares point only
 * at copies in the source namespace, which must therefore hold nothing else: not a platform namespace
 * (kube*, openshift*: the platform keeps credentials there, such as the control plane's client keys in
 * openshift-config-managed), not the webhook's (its serving key), not the driver's, not one a Bundle
 * is declared in. A ClusterBundle may not share an object of the source namespace (copies are made
 * there, not read from there) or of the webhook's namespace. The webhook lists namespace-wide only
 * where an admin says, never in a platform namespace and never cluster-wide.
 */
export function sourceNamespaceIssues(input: SourceNamespaceInput): RuleIssue[] {
    const issues: RuleIssue[] = [];
    const source = describeValue(input.sourceNamespace);
    const sharing = input.clusterBundles.map((bundle) => describeClusterBundle(bundle.name));
    const pointAt = sharing.length > 0 ? `; the shares of ${sharing.join(", ")} would point there` : "";
    const holdsOnlyCopies =
        "the Shared Resource CSI driver lists and watches every Secret and ConfigMap of the namespace its shares point at, so the source namespace must hold nothing but the copies of shared objects";
    if (isPlatformNamespace(input.sourceNamespace)) {
        issues.push({
            path: ["sourceNamespace"],
            message: `${source} is a platform namespace (${PLATFORM_NAMESPACE_PREFIXES.map((prefix) => `${prefix}*`).join(", ")}) and cannot be the source namespace: ${holdsOnlyCopies}, and the platform keeps credentials in its namespaces (the control plane's client keys in openshift-config-managed)${pointAt}; name a namespace of the stack's own`,
        });
    }
    const others: [string, string][] = [
        [input.namespace, "the webhook's namespace (subscriptions.namespace), which holds its serving key"],
        [input.driverNamespace, "the Shared Resource CSI driver's namespace"],
    ];
    for (const [namespace, what] of others) {
        if (namespace === input.sourceNamespace)
            issues.push({ path: ["sourceNamespace"], message: `${source} is ${what}: ${holdsOnlyCopies}; name a namespace of its own` });
    }
    input.bundles.forEach((bundle, index) => {
        if (bundle.namespace === input.sourceNamespace)
            issues.push({
                path: ["bundles", index, "namespace"],
                message: `${describeBundle(bundle)}: ${source} is the source namespace; ${holdsOnlyCopies}, and would read this Bundle's Secrets; declare the Bundle in a namespace of its own`,
            });
    });
    input.clusterBundles.forEach((bundle, index) => {
        for (const source of SOURCES) {
            bundle[source].forEach((ref, j) => {
                const path = ["clusterBundles", index, source, j, "namespace"];
                const who = describeClusterBundle(bundle.name);
                if (ref.namespace === input.sourceNamespace)
                    issues.push({
                        path,
                        message: `${who}: ${WHAT[source]} ${refText(ref)} is in the source namespace, where the stack writes the copies it shares; reference the original where it lives`,
                    });
                else if (ref.namespace === input.namespace)
                    issues.push({
                        path,
                        message: `${who}: ${WHAT[source]} ${refText(ref)} is in the webhook's namespace (subscriptions.namespace), which holds its serving key; no share may expose it`,
                    });
            });
        }
    });
    input.readNamespaces.forEach((namespace, index) => {
        if (isPlatformNamespace(namespace))
            issues.push({
                path: ["webhook", "readNamespaces", index],
                message: `${describeValue(namespace)} is a platform namespace (${PLATFORM_NAMESPACE_PREFIXES.map((prefix) => `${prefix}*`).join(", ")}); the webhook never lists every Secret of one (it reads the objects bundles reference there by name)`,
            });
    });
    if (input.readAllNamespaces) {
        issues.push({
            path: ["webhook", "readAllNamespaces"],
            message:
                "true would let the webhook list every Secret of every namespace, the platform's included; it reads teams' Bundles by name instead (etc-pki-entitlement everywhere, other names where the team grants get: docs/subscriptions.md, \"Teams' own Bundles\"); remove it, or list namespaces in subscriptions.webhook.readNamespaces",
        });
    }
    return issues;
}
