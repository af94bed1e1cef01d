/**
 * The RBAC an operator install gets, derived purely from its CSV, its targetNamespaces and the
 * OLM toggles (seed 003). With every toggle off the objects carry OLM's rules and aggregation
 * labels, under OLM's own names (`<csv>-<hash>`, `<csv>-<serviceAccount>-<hash>`: the SHA-224
 * hash OLM has used since commit 658a6a60d, reproduced in names.ts `olmRbacName` and checked against
 * Go running OLM's code). See docs/rbac-toggles.md.
 * Ownership labels differ on purpose: OLM's `olm.owner*` labels would make a running OLM garbage-collect these objects (it deletes
 * ClusterRoles whose owner CSV does not exist), so each object carries this stack's labels and
 * a `cluster-platform.io/generated-by` label naming the CSV field or toggle that produced it.
 *
 * No Pulumi imports: the k8s-rbac policy pack derives the same sets to judge a stack.
 */
import { GENERATED_BY_LABEL, OPERATOR_LABEL, platformLabels } from "../shared/labels";
import { aggregationLabel } from "../shared/rbac";
import type { PolicyRule } from "../shared/rbac";
import type { Permission } from "./csv";
import { fnv64a, goJsonString, olmRbacName, permissionGoJson } from "./names";

export const RBAC_API_VERSION = "rbac.authorization.k8s.io/v1";
const RBAC_GROUP = "rbac.authorization.k8s.io";

/** The three OLM toggles of seed 003 (`olm.*` in stack config). */
export interface OlmToggles {
    disableOLMAggregateCRDRoles: boolean;
    disableAggregateCRDRoles: boolean;
    disableAllNamespacePermissionPromotion: boolean;
}

/**
 * Values of the generated-by label: the CSV field or the toggle that produced an object.
 * Policy and `pulumi preview` readers use them to tell why an object exists.
 */
export const GENERATED_BY = {
    /** `spec.install.spec.permissions`: Role/RoleBinding in the operator's namespace. */
    permissions: "csv.permissions",
    /** `permissions` copied into each target namespace (Single/MultiNamespace installs). */
    targetNamespaces: "csv.permissions.targetNamespaces",
    /** `spec.install.spec.clusterPermissions`: ClusterRole/ClusterRoleBinding. */
    clusterPermissions: "csv.clusterPermissions",
    /** AllNamespaces promotion of `permissions`; governed by olm.disableAllNamespacePermissionPromotion. */
    allNamespacesPromotion: "olm.allNamespacesPromotion",
    /** `permissions` in `operators[].rbacNamespaces` when promotion is disabled. */
    rbacNamespaces: "operators.rbacNamespaces",
    /** Per-CRD and per-APIService aggregate roles; governed by olm.disableAggregateCRDRoles. */
    aggregateCRDRoles: "olm.aggregateCRDRoles",
    /** aggregate-olm-edit and aggregate-olm-view; governed by olm.disableOLMAggregateCRDRoles. */
    olmAggregateRoles: "olm.aggregateOLMRoles",
    /** What OLM grants the ServiceAccount of a deployment it serves a certificate for (webhooks, APIServices). */
    servingCertificate: "olm.servingCertificate",
} as const;

export type GeneratedBy = (typeof GENERATED_BY)[keyof typeof GENERATED_BY];

/** Which toggle governs each generated-by value (undefined: produced by the CSV alone). */
export const GOVERNING_TOGGLE: Record<GeneratedBy, keyof OlmToggles | undefined> = {
    [GENERATED_BY.permissions]: undefined,
    [GENERATED_BY.targetNamespaces]: undefined,
    [GENERATED_BY.clusterPermissions]: undefined,
    [GENERATED_BY.allNamespacesPromotion]: "disableAllNamespacePermissionPromotion",
    [GENERATED_BY.rbacNamespaces]: "disableAllNamespacePermissionPromotion",
    [GENERATED_BY.aggregateCRDRoles]: "disableAggregateCRDRoles",
    [GENERATED_BY.olmAggregateRoles]: "disableOLMAggregateCRDRoles",
    [GENERATED_BY.servingCertificate]: undefined,
};

export interface ObjectMeta {
    name: string;
    namespace?: string;
    labels: Record<string, string>;
}

interface RoleOf<K extends "Role" | "ClusterRole"> {
    apiVersion: typeof RBAC_API_VERSION;
    kind: K;
    metadata: ObjectMeta;
    rules: PolicyRule[];
}

export type RoleObject = RoleOf<"Role"> | RoleOf<"ClusterRole">;

export interface Subject {
    kind: "ServiceAccount";
    name: string;
    namespace: string;
}

interface BindingOf<K extends "RoleBinding" | "ClusterRoleBinding", R extends "Role" | "ClusterRole"> {
    apiVersion: typeof RBAC_API_VERSION;
    kind: K;
    metadata: ObjectMeta;
    roleRef: { apiGroup: typeof RBAC_GROUP; kind: R; name: string };
    subjects: Subject[];
}

export type BindingObject = BindingOf<"RoleBinding", "Role"> | BindingOf<"ClusterRoleBinding", "ClusterRole">;

export type RbacObject = RoleObject | BindingObject;

/** An owned API (a CRD version or an APIService) the per-API aggregate roles cover. */
export interface OwnedApi {
    /** CRD name (`<plural>.<group>`) or, for an APIService, the plural resource name. */
    name: string;
    group: string;
    plural: string;
    version: string;
    kind: string;
    /** CRDs get a fourth role, `-crdview`; APIServices do not. */
    source: "CustomResourceDefinition" | "APIService";
}

export interface OperatorRbacInput {
    /** Operator install name (`operators[].name`), for labels. */
    operator: string;
    /** The CSV's `metadata.name` (OLM's name base). */
    csvName: string;
    /** The operator's namespace (where its ServiceAccounts live). */
    namespace: string;
    /** `operators[].targetNamespaces`; `[]` is AllNamespaces. */
    targetNamespaces: readonly string[];
    /** `operators[].rbacNamespaces`, used when AllNamespaces promotion is disabled. */
    rbacNamespaces?: readonly string[];
    permissions: readonly Permission[];
    clusterPermissions: readonly Permission[];
    ownedApis: readonly OwnedApi[];
    toggles: OlmToggles;
}

export const VIEW_VERBS = ["get", "list", "watch"];
const VERBS_FOR_SUFFIX = {
    admin: ["*"],
    edit: ["create", "update", "patch", "delete"],
    view: VIEW_VERBS,
} as const;
type AggregationSuffix = keyof typeof VERBS_FOR_SUFFIX;

/** The rule OLM adds to promoted permissions so an AllNamespaces operator can list namespaces. */
export const NAMESPACE_VIEW_RULE: PolicyRule = { verbs: VIEW_VERBS, apiGroups: [""], resources: ["namespaces"] };

function labels(generatedBy: GeneratedBy, operator?: string, extra: Record<string, string> = {}): Record<string, string> {
    return platformLabels("olm-rbac", {
        [GENERATED_BY_LABEL]: generatedBy,
        ...(operator === undefined ? {} : { [OPERATOR_LABEL]: operator }),
        ...extra,
    });
}

/** OLM treats a permission without a service account as the namespace's `default` one. */
export function serviceAccountOf(permission: Permission): string {
    return permission.serviceAccountName === "" ? "default" : permission.serviceAccountName;
}

/**
 * OLM's Role name for a `permissions` entry (`rbac.go`, `RBACForClusterServiceVersion`):
 * `<csv>-<serviceAccountName>-<hash of {name: csv, permission}>`, the service account name as the
 * CSV writes it.
 */
export function roleNameFor(csvName: string, permission: Permission): string {
    const encoded = `{"name":${goJsonString(csvName)},"permission":${permissionGoJson(permission)}}`;
    return olmRbacName(`${csvName}-${permission.serviceAccountName}`, encoded);
}

/** OLM's ClusterRole name for a `clusterPermissions` entry: `<csv>-<hash of {name: csv, namespace, permission}>`. */
export function clusterRoleNameFor(csvName: string, namespace: string, permission: Permission): string {
    const encoded = `{"name":${goJsonString(csvName)},"namespace":${goJsonString(namespace)},"permission":${permissionGoJson(permission)}}`;
    return olmRbacName(csvName, encoded);
}

function role<K extends "Role" | "ClusterRole">(kind: K, metadata: ObjectMeta, rules: PolicyRule[]): RoleOf<K> {
    return { apiVersion: RBAC_API_VERSION, kind, metadata, rules };
}

function binding<K extends "RoleBinding" | "ClusterRoleBinding", R extends "Role" | "ClusterRole">(
    kind: K,
    metadata: ObjectMeta,
    roleKind: R,
    serviceAccount: string,
    namespace: string,
): BindingOf<K, R> {
    return {
        apiVersion: RBAC_API_VERSION,
        kind,
        metadata,
        roleRef: { apiGroup: RBAC_GROUP, kind: roleKind, name: metadata.name },
        subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    };
}

/** Role + RoleBinding for one permission in one namespace. */
function namespacedPair(input: OperatorRbacInput, permission: Permission, namespace: string, generatedBy: GeneratedBy): RbacObject[] {
    const name = roleNameFor(input.csvName, permission);
    const meta = { name, namespace, labels: labels(generatedBy, input.operator) };
    return [
        role("Role", meta, permission.rules),
        binding("RoleBinding", { ...meta, labels: { ...meta.labels } }, "Role", serviceAccountOf(permission), input.namespace),
    ];
}

/** ClusterRole + ClusterRoleBinding. */
function clusterPair(
    input: OperatorRbacInput,
    name: string,
    rules: PolicyRule[],
    serviceAccount: string,
    generatedBy: GeneratedBy,
): RbacObject[] {
    const meta = { name, labels: labels(generatedBy, input.operator) };
    return [
        role("ClusterRole", meta, rules),
        binding("ClusterRoleBinding", { ...meta, labels: { ...meta.labels } }, "ClusterRole", serviceAccount, input.namespace),
    ];
}

/** Whether this install promotes `permissions` to cluster scope (AllNamespaces, toggle off). */
export function promotesPermissions(targetNamespaces: readonly string[], toggles: OlmToggles): boolean {
    return targetNamespaces.length === 0 && !toggles.disableAllNamespacePermissionPromotion;
}

/**
 * The namespaces the operator watches (`WATCH_NAMESPACE`, `olm.targetNamespaces`): the target
 * namespaces, `[]` for AllNamespaces, or exactly `rbacNamespaces` when promotion is disabled.
 */
export function watchNamespaces(input: Pick<OperatorRbacInput, "targetNamespaces" | "rbacNamespaces" | "toggles">): string[] {
    if (input.targetNamespaces.length === 0 && input.toggles.disableAllNamespacePermissionPromotion) {
        return [...(input.rbacNamespaces ?? [])];
    }
    return [...input.targetNamespaces];
}

/**
 * Every Role, RoleBinding, ClusterRole and ClusterRoleBinding of one operator install, in a
 * stable order: CSV permissions, their copies (target namespaces, promotion or rbacNamespaces),
 * clusterPermissions, then the per-API aggregate roles. Objects with the same kind, namespace
 * and name are declared once (OLM names them by content, so they are equal).
 */
export function deriveOperatorRbac(input: OperatorRbacInput): RbacObject[] {
    const objects: RbacObject[] = [];
    const allNamespaces = input.targetNamespaces.length === 0;

    for (const permission of input.permissions) {
        objects.push(...namespacedPair(input, permission, input.namespace, GENERATED_BY.permissions));
    }
    if (allNamespaces && !input.toggles.disableAllNamespacePermissionPromotion) {
        for (const permission of input.permissions) {
            const name = roleNameFor(input.csvName, permission);
            objects.push(
                ...clusterPair(
                    input,
                    name,
                    [...permission.rules, NAMESPACE_VIEW_RULE],
                    serviceAccountOf(permission),
                    GENERATED_BY.allNamespacesPromotion,
                ),
            );
        }
    } else {
        const [copies, generatedBy] = allNamespaces
            ? [input.rbacNamespaces ?? [], GENERATED_BY.rbacNamespaces]
            : [input.targetNamespaces, GENERATED_BY.targetNamespaces];
        for (const namespace of copies) {
            if (namespace === input.namespace) {
                continue; // OLM's ensureTenantRBAC skips the operator's own namespace
            }
            for (const permission of input.permissions) {
                objects.push(...namespacedPair(input, permission, namespace, generatedBy));
            }
        }
    }
    for (const permission of input.clusterPermissions) {
        const name = clusterRoleNameFor(input.csvName, input.namespace, permission);
        objects.push(...clusterPair(input, name, permission.rules, serviceAccountOf(permission), GENERATED_BY.clusterPermissions));
    }
    if (!input.toggles.disableAggregateCRDRoles) {
        for (const api of input.ownedApis) {
            objects.push(...aggregateRolesFor(api, input.operator));
        }
    }
    return dedupe(objects);
}

/** The prefix of OLM's per-API aggregation labels (`…/aggregate-to-<hash>-<admin|edit|view>`). */
export const OPERATOR_GROUP_AGGREGATION_PREFIX = "olm.opgroup.permissions/aggregate-to-";

/** OLM's label that lets OperatorGroup roles aggregate an API: fnv64a of `Kind.version.group`. */
export function operatorGroupAggregationLabel(api: Pick<OwnedApi, "kind" | "version" | "group">, suffix: AggregationSuffix): string {
    const hash = fnv64a([api.kind, api.version, api.group].join(".")).toString(16);
    return `${OPERATOR_GROUP_AGGREGATION_PREFIX}${hash}-${suffix}`;
}

/**
 * OLM's `ensureClusterRolesForCSV` for one owned API: `<name>-<version>-admin|edit|view`, and for
 * CRDs `-crdview` (get on that one CRD), each aggregated to the matching default role.
 */
export function aggregateRolesFor(api: OwnedApi, operator?: string): RoleOf<"ClusterRole">[] {
    const prefix = `${api.name}-${api.version}-`;
    const aggregation = (suffix: AggregationSuffix) =>
        labels(GENERATED_BY.aggregateCRDRoles, operator, {
            [aggregationLabel(suffix)]: "true",
            [operatorGroupAggregationLabel(api, suffix)]: "true",
        });
    const roles = (Object.keys(VERBS_FOR_SUFFIX) as AggregationSuffix[]).map((suffix) =>
        role("ClusterRole", { name: prefix + suffix, labels: aggregation(suffix) }, [
            { verbs: [...VERBS_FOR_SUFFIX[suffix]], apiGroups: [api.group], resources: [api.plural] },
        ]),
    );
    if (api.source === "CustomResourceDefinition") {
        roles.push(
            role("ClusterRole", { name: `${prefix}crdview`, labels: aggregation("view") }, [
                {
                    verbs: ["get"],
                    apiGroups: ["apiextensions.k8s.io"],
                    resources: ["customresourcedefinitions"],
                    resourceNames: [api.name],
                },
            ]),
        );
    }
    return roles;
}

/**
 * OLM's aggregate-olm-edit and aggregate-olm-view (OLM's quickstart manifests), unless toggled off.
 * They are OLM's (or, on OpenShift, the cluster-version operator's) objects, adopted: they carry
 * OLM's aggregation labels only, none of this stack's, and the stack never deletes them
 * (`retainOnDelete` where they are declared). The toggle policy recognises them by name.
 */
export function olmAggregateRoles(toggles: Pick<OlmToggles, "disableOLMAggregateCRDRoles">): RoleOf<"ClusterRole">[] {
    if (toggles.disableOLMAggregateCRDRoles) {
        return [];
    }
    const aggregateTo = (...roles: string[]) => Object.fromEntries(roles.map((r) => [aggregationLabel(r), "true"]));
    const olmResources = ["clusterserviceversions", "catalogsources", "installplans", "subscriptions"];
    return [
        role("ClusterRole", { name: "aggregate-olm-edit", labels: aggregateTo("admin", "edit") }, [
            { apiGroups: ["operators.coreos.com"], resources: ["subscriptions"], verbs: ["create", "update", "patch", "delete"] },
            { apiGroups: ["operators.coreos.com"], resources: olmResources, verbs: ["delete"] },
        ]),
        role("ClusterRole", { name: "aggregate-olm-view", labels: aggregateTo("admin", "edit", "view") }, [
            { apiGroups: ["operators.coreos.com"], resources: [...olmResources, "operatorgroups"], verbs: VIEW_VERBS },
            { apiGroups: ["packages.operators.coreos.com"], resources: ["packagemanifests", "packagemanifests/icon"], verbs: VIEW_VERBS },
        ]),
    ];
}

/**
 * What each toggle, once set, rules out: the objects generated for the reason it disables. (The
 * `operators.rbacNamespaces` copies are governed by disableAllNamespacePermissionPromotion too,
 * but exist because it is set.)
 */
export const DISABLED_BY: Readonly<Record<keyof OlmToggles, GeneratedBy>> = {
    disableAllNamespacePermissionPromotion: GENERATED_BY.allNamespacesPromotion,
    disableAggregateCRDRoles: GENERATED_BY.aggregateCRDRoles,
    disableOLMAggregateCRDRoles: GENERATED_BY.olmAggregateRoles,
};

/** OLM's own names for its aggregate roles (aggregate-olm-edit, aggregate-olm-view). */
export const OLM_AGGREGATE_ROLE_NAMES: readonly string[] = olmAggregateRoles({ disableOLMAggregateCRDRoles: false }).map(
    (r) => r.metadata.name,
);

/** A ClusterRole or ClusterRoleBinding as the toggle rule reads it. */
export interface ClusterRbacRef {
    kind: string;
    name: string;
    labels: Readonly<Record<string, string>>;
}

/** The set toggle an object breaks, and how the object was recognised. */
export interface ToggleBreach {
    toggle: keyof OlmToggles;
    recognisedBy: string;
}

/**
 * The set toggle a cluster-scoped RBAC object must not exist under (seed 003), or undefined: an
 * object whose generated-by label names what the toggle disables; for disableOLMAggregateCRDRoles
 * also a ClusterRole with OLM's own name for those roles; for disableAggregateCRDRoles also one
 * carrying OLM's per-API aggregation label, whoever declared it.
 */
export function toggleBreach(object: ClusterRbacRef, toggles: OlmToggles): ToggleBreach | undefined {
    if (object.kind !== "ClusterRole" && object.kind !== "ClusterRoleBinding") {
        return undefined;
    }
    const generatedBy = object.labels[GENERATED_BY_LABEL];
    for (const toggle of Object.keys(DISABLED_BY) as (keyof OlmToggles)[]) {
        if (toggles[toggle] && generatedBy === DISABLED_BY[toggle]) {
            return { toggle, recognisedBy: `its label ${GENERATED_BY_LABEL}=${generatedBy}` };
        }
    }
    if (object.kind !== "ClusterRole") {
        return undefined;
    }
    if (toggles.disableOLMAggregateCRDRoles && OLM_AGGREGATE_ROLE_NAMES.includes(object.name)) {
        return {
            toggle: "disableOLMAggregateCRDRoles",
            recognisedBy: `OLM's name for its aggregate roles (${OLM_AGGREGATE_ROLE_NAMES.join(", ")})`,
        };
    }
    const perApi = Object.keys(object.labels).find((key) => key.startsWith(OPERATOR_GROUP_AGGREGATION_PREFIX));
    if (toggles.disableAggregateCRDRoles && perApi !== undefined) {
        return { toggle: "disableAggregateCRDRoles", recognisedBy: `OLM's per-API aggregation label ${perApi}` };
    }
    return undefined;
}

/** The namespace of OLM's auth-reader RoleBinding (`KubeSystem` in OLM). */
export const KUBE_SYSTEM = "kube-system";

/** A Service the install fronts a deployment with, and who runs that deployment. */
export interface ServedCertificate {
    /** `<deployment>-service`. */
    serviceName: string;
    /** `<service>-cert`, the serving Secret. */
    secretName: string;
    /** The operator's namespace (Service, Secret, ServiceAccount). */
    namespace: string;
    /** The deployment's `serviceAccountName`, or `default` as OLM defaults it. */
    serviceAccount: string;
}

/** OLM's ClusterRoleBinding name for a served certificate (`AuthDelegatorClusterRoleBindingName`). */
export function authDelegatorBindingName(serviceName: string): string {
    return `${serviceName}-system:auth-delegator`;
}

/** OLM's kube-system RoleBinding name for a served certificate (`AuthReaderRoleBindingName`). */
export function authReaderBindingName(serviceName: string): string {
    return `${serviceName}-auth-reader`;
}

/**
 * What OLM grants with every serving certificate it makes (operator-framework/
 * operator-lifecycle-manager `pkg/controller/install/certresources.go`,
 * `installCertRequirementsForDeployment`): a Role and RoleBinding `<secret>` to get that one
 * Secret, the ClusterRoleBinding `<service>-system:auth-delegator` to `system:auth-delegator`
 * (so the server can delegate authentication and authorization, as aggregated API servers do)
 * and the RoleBinding `kube-system/<service>-auth-reader` to
 * `extension-apiserver-authentication-reader` (to read the client CA). Subjects are the
 * deployment's ServiceAccount in the operator's namespace.
 */
export function servingCertificateRbac(served: ServedCertificate, operator: string): RbacObject[] {
    const meta = (name: string, namespace?: string): ObjectMeta => ({
        name,
        ...(namespace === undefined ? {} : { namespace }),
        labels: labels(GENERATED_BY.servingCertificate, operator),
    });
    const subjects: Subject[] = [{ kind: "ServiceAccount", name: served.serviceAccount, namespace: served.namespace }];
    return [
        role("Role", meta(served.secretName, served.namespace), [
            { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: [served.secretName] },
        ]),
        {
            apiVersion: RBAC_API_VERSION,
            kind: "RoleBinding",
            metadata: meta(served.secretName, served.namespace),
            roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: served.secretName },
            subjects,
        },
        {
            apiVersion: RBAC_API_VERSION,
            kind: "ClusterRoleBinding",
            metadata: meta(authDelegatorBindingName(served.serviceName)),
            roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: "system:auth-delegator" },
            subjects,
        },
        {
            apiVersion: RBAC_API_VERSION,
            kind: "RoleBinding",
            metadata: meta(authReaderBindingName(served.serviceName), KUBE_SYSTEM),
            roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: "extension-apiserver-authentication-reader" },
            subjects,
        },
    ];
}

/** `Kind namespace/name`, the identity of an object in a cluster. */
export function objectKey(object: { kind: string; metadata: { name: string; namespace?: string } }): string {
    return `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`;
}

function dedupe(objects: RbacObject[]): RbacObject[] {
    const seen = new Set<string>();
    return objects.filter((o) => {
        const key = objectKey(o);
        if (seen.has(key)) {
            return false;
        }
        seen.add(key);
        return true;
    });
}
