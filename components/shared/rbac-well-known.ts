/**
 * The RBAC objects a cluster holds before any stack runs: what a stack's binding may name, its
 * aggregationRule may select or its patch may change without declaring it. Each set is
 * generated, never written by hand (scripts/policy/well-known-rbac.ts says how):
 *
 * - Kubernetes: the bootstrap policy (`kubernetes.io/bootstrapping=rbac-defaults`) of the API
 *   server the real tier runs, read from it (rbac-well-known.kubernetes.json);
 * - OpenShift: openshift-apiserver's bootstrap policy, and cluster-kube-apiserver-operator's SCCs
 *   with their `system:openshift:scc:<name>` roles (rbac-well-known.openshift.json);
 * - OLM: the ClusterRoles OLM generates for any operator it installs (a family, not a list: their
 *   rules are whatever a CSV asks, so a selector that can match them takes anything).
 *
 * The packs judge against the union: an object named like a role of the other platform does not
 * exist there, and judging it as if it did can only report more. Pure: no Pulumi imports.
 */
import kubernetesPolicy from "./rbac-well-known.kubernetes.json";
import openshiftPolicy from "./rbac-well-known.openshift.json";
import { powerfulIdentities, PowerfulIdentities } from "./rbac-dangerous";
import { BindingObject, ClusterRoleObject, mergeObjects, RbacAuthorizer, RbacObjects, RoleObject } from "./rbac-power";
import type { LabelSelector } from "./label-selector";
import type { PolicyRule } from "./rbac";

interface WellKnownFile {
    source: string;
    clusterRoles: {
        name: string;
        labels?: Record<string, string>;
        aggregationRule?: { clusterRoleSelectors: LabelSelector[] };
        rules: Partial<PolicyRule>[];
    }[];
    roles: { namespace: string; name: string; rules: Partial<PolicyRule>[] }[];
    bindings: {
        kind: string;
        name: string;
        namespace?: string;
        roleRef: { kind: string; name: string };
        subjects: { kind: string; name: string; namespace?: string }[];
    }[];
    sccs?: { name: string; admits: string[] }[];
}

export type Platform = "kubernetes" | "openshift";

function objectsOf(file: WellKnownFile, source: string): RbacObjects {
    return {
        clusterRoles: file.clusterRoles.map((r): ClusterRoleObject => ({
            name: r.name,
            labels: r.labels ?? {},
            rules: r.rules,
            ...(r.aggregationRule ? { aggregationRule: r.aggregationRule } : {}),
            source,
        })),
        roles: file.roles.map((r): RoleObject => ({ ...r, source })),
        bindings: file.bindings.map((b): BindingObject => ({ ...b, kind: b.kind as BindingObject["kind"], source })),
    };
}

/**
 * The ClusterRoles OLM generates for an operator (clusterPermissions, promoted permissions, and
 * the per-API aggregate roles) carry its owner labels (operator-framework/operator-lifecycle-manager
 * pkg/lib/ownerutil/util.go `OwnerLabel`: olm.owner, olm.owner.namespace, olm.owner.kind) and
 * `operators.coreos.com/<package>.<namespace>` (pkg/controller/operators/decorators): values no
 * stack can know, and rules a CSV chose.
 */
export const OLM_GENERATED_ROLES: ClusterRoleObject = {
    name: "(any ClusterRole OLM generates for an operator)",
    labels: { "olm.owner.kind": "ClusterServiceVersion" },
    openLabels: ["olm.owner", "olm.owner.namespace", "operators.coreos.com/", "olm.permissions.hash"],
    rules: [
        { apiGroups: ["*"], resources: ["*"], verbs: ["*"] },
        { nonResourceURLs: ["*"], verbs: ["*"] },
    ],
    source: "OLM, for any operator it installs (rules unknown: anything a CSV asks)",
};

const KUBERNETES = objectsOf(kubernetesPolicy as unknown as WellKnownFile, "Kubernetes' bootstrap policy");
const OPENSHIFT = objectsOf(openshiftPolicy as unknown as WellKnownFile, "OpenShift's bootstrap policy");

/** SecurityContextConstraints that admit what restricted-v2 refuses, with what they admit. */
export const PRIVILEGED_SCCS: ReadonlyMap<string, readonly string[]> = new Map(
    ((openshiftPolicy as unknown as WellKnownFile).sccs ?? []).filter((s) => s.admits.length > 0).map((s) => [s.name, s.admits]),
);

export const WELL_KNOWN_SOURCES = {
    kubernetes: (kubernetesPolicy as unknown as WellKnownFile).source,
    openshift: (openshiftPolicy as unknown as WellKnownFile).source,
} as const;

/** The well-known objects of `platforms` (both by default: see above), OLM's family included. */
export function wellKnownObjects(platforms: readonly Platform[] = ["kubernetes", "openshift"]): RbacObjects {
    return mergeObjects(
        ...(platforms.includes("kubernetes") ? [KUBERNETES] : []),
        ...(platforms.includes("openshift") ? [OPENSHIFT] : []),
        { clusterRoles: [OLM_GENERATED_ROLES], roles: [], bindings: [] },
    );
}

interface Known {
    authorizer: RbacAuthorizer;
    powerful: PowerfulIdentities;
}

const known = new Map<string, Known>();
const BOTH_PLATFORMS: readonly Platform[] = ["kubernetes", "openshift"];
let bothPlatforms: Known | undefined;

/** The authorizer over the well-known objects and what they make powerful, computed once per platform set. */
export function wellKnown(platforms: readonly Platform[] = BOTH_PLATFORMS): Known {
    // The packs ask for the default set several times per role judged: that one needs no key.
    if (platforms === BOTH_PLATFORMS && bothPlatforms !== undefined) {
        return bothPlatforms;
    }
    const key = [...platforms].sort().join(",");
    let entry = known.get(key);
    if (!entry) {
        const authorizer = new RbacAuthorizer(wellKnownObjects(platforms));
        entry = {
            authorizer,
            powerful: powerfulIdentities(authorizer, platforms.includes("openshift") ? [...PRIVILEGED_SCCS.keys()] : []),
        };
        known.set(key, entry);
    }
    if (platforms === BOTH_PLATFORMS) {
        bothPlatforms = entry;
    }
    return entry;
}
