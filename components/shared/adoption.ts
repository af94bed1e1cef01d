/**
 * The stack's adoption rule: for every Kubernetes resource it declares, whether a create that
 * meets an object already in the cluster takes that object over or fails, decided here and not
 * left to the provider's default. The provider's rule, as of the version the lockfile pins:
 *
 * - pulumi-kubernetes 4.25.0 (pinned; the only provider the Go module proxy builds for the real
 *   tier): with server-side apply every create is an apply (provider/pkg/await/await.go,
 *   `Creation`: "we always send a PATCH request during creates with SSA enabled"), so every create
 *   upserts, whatever the provider's config; `upsertExistingObjects` is not a key it knows.
 * - From 4.29 (PR #4278, CHANGELOG "AlreadyExists error instead of silently updating") a create is
 *   a POST, which fails with AlreadyExists on an existing object, unless the provider sets
 *   `upsertExistingObjects` or the resource is a Patch (`Creation`:
 *   `ServerSideApply && (UpsertExistingObjects || IsPatchResource)`).
 * - In every version a delete is a DELETE by name with no precondition (`Deletion`), unless the
 *   resource is a Patch (then the manager's fields are relinquished) or `retainOnDelete` (the engine
 *   never calls the provider). So a resource created over an object that another resource of the
 *   same update then deletes loses that object: the hazard of a rename without aliases, which
 *   components/operator/rename.ts removes by aliasing such resources instead.
 *
 * Each resource therefore gets one of three decisions, by its type and role (`adoptionKey`):
 *
 * - `adopt`: objects that may exist before the stack declares them (CRDs kept on removal or
 *   destroy, objects OLM makes under the same names, objects several installs share): declared on
 *   the provider with `upsertExistingObjects` (`adoptionTransformation`), so they are taken over
 *   on every provider version;
 * - `patch`: Patch resources, which apply over the existing object by construction;
 * - `own`: objects only this stack makes: on 4.29+ an existing one fails the create, naming it; on
 *   4.25.0 it is taken over like the others (the provider cannot tell them apart).
 *
 * `tests/composition/adoption.test.ts` renders every capability and fails on a resource whose
 * type and role have no decision here. Pure but for the transformation's provider option.
 */
import type * as pulumi from "@pulumi/pulumi";
import { CAPABILITY_LABEL, GENERATED_BY_LABEL } from "./labels";
import { asResolvedRecord } from "./resolved-records";

export type AdoptionDecision = "adopt" | "patch" | "own";

export interface AdoptionRule {
    readonly decision: AdoptionDecision;
    /** Why, in one line (the test prints it beside each adopted resource). */
    readonly why: string;
}

const OWN = (why: string): AdoptionRule => ({ decision: "own", why });
const ADOPT = (why: string): AdoptionRule => ({ decision: "adopt", why });
const PATCH: AdoptionRule = {
    decision: "patch",
    why: "a Patch resource: applied over the existing object on every provider version, and its fields relinquished on delete",
};

/** OLM's own aggregate roles (components/operator/rbac.ts, `olmAggregateRoles`): they carry no label of the stack's. */
const OLM_AGGREGATE_ROLES = new Set(["aggregate-olm-edit", "aggregate-olm-view"]);

/** The role an RBAC object plays, from the labels the stack gives it (`generated-by`, else the capability). */
function rbacRole(object: Record<string, unknown> | undefined): string | undefined {
    const metadata = asResolvedRecord(object?.metadata);
    const labels = asResolvedRecord(metadata?.labels);
    const name = metadata?.name;
    if (typeof name === "string" && OLM_AGGREGATE_ROLES.has(name) && labels?.[CAPABILITY_LABEL] === undefined) {
        return "olm.aggregateOLMRoles";
    }
    const role = labels?.[GENERATED_BY_LABEL] ?? labels?.[CAPABILITY_LABEL];
    return typeof role === "string" ? role : undefined;
}

const OLM_NAMED =
    "named as OLM names it (pkg/controller/registry/resolver/rbac.go, operatorgroup.go, certresources.go): an operator moved from OLM finds it made already";
const RBAC_BY_ROLE: Readonly<Record<string, AdoptionRule>> = {
    "olm.aggregateOLMRoles": ADOPT("OLM's own aggregate role: every cluster running OLM has it (OpenShift's release payload too)"),
    "olm.aggregateCRDRoles": ADOPT(
        `a per-API aggregate role: OLM leaves it behind with the CRDs; several installs of one bundle share it, and the next one declares it when the first leaves; ${OLM_NAMED}`,
    ),
    "olm.servingCertificate": ADOPT(
        `a serving-certificate binding: the fixed-name ones are shared by every install of the bundle, and OLM force-applies them; ${OLM_NAMED}`,
    ),
    "csv.permissions": ADOPT(OLM_NAMED),
    "csv.permissions.targetNamespaces": ADOPT(OLM_NAMED),
    "csv.clusterPermissions": ADOPT(OLM_NAMED),
    "olm.allNamespacesPromotion": ADOPT(OLM_NAMED),
    "operators.rbacNamespaces": ADOPT(`the permissions' Role under OLM's name, copied to an rbacNamespaces namespace; ${OLM_NAMED}`),
    subscriptions: OWN("the subscription capability's roles and bindings, named by the stack"),
    reconcile: OWN("the reconcile ServiceAccount's role and bindings, named by the stack"),
};

const OWN_STACK = OWN(
    "made by the stack under a name it derives; a renamed operator install keeps its objects through aliases (components/operator/rename.ts), never by a create over them",
);

/**
 * Decisions by resource type; RBAC types decide by role. Types the program never declares are
 * not listed, so a new one fails the adoption test until it is decided here.
 */
export const ADOPTION_BY_TYPE: Readonly<Record<string, AdoptionRule | Readonly<Record<string, AdoptionRule>>>> = {
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition": ADOPT(
        "CRDs outlive their owner (retainOnDelete): a re-added or renamed operator, a second install of the bundle, `up` after `destroy` and an operator moved from OLM find them in the cluster",
    ),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": RBAC_BY_ROLE,
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": RBAC_BY_ROLE,
    "kubernetes:rbac.authorization.k8s.io/v1:Role": RBAC_BY_ROLE,
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": RBAC_BY_ROLE,
    "kubernetes:core/v1:Namespace": OWN(
        "a namespace the stack creates (createNamespace) is deleted with everything in it on removal: one that exists must be named with createNamespace false",
    ),
    "kubernetes:apps/v1:Deployment": OWN_STACK,
    "kubernetes:core/v1:ServiceAccount": OWN_STACK,
    "kubernetes:core/v1:Service": OWN_STACK,
    "kubernetes:core/v1:ConfigMap": OWN_STACK,
    "kubernetes:core/v1:Secret": OWN("a Secret the stack writes (the self-signed mode's serving certificates, subscription data)"),
    "kubernetes:policy/v1:PodDisruptionBudget": OWN_STACK,
    "kubernetes:apiregistration.k8s.io/v1:APIService": OWN(
        "an owned APIService routes a whole API group version: one that exists belongs to another operator (OLM adopts only from its replacement chain, olm/operator.go `apiServiceOwnerConflicts`); installs sharing it hand it over by alias",
    ),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration": OWN("named <namespace>.<deployment> by the stack"),
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration": OWN("named <namespace>.<deployment> by the stack"),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy": OWN("the subscription capability's policy, named by the stack"),
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding": OWN(
        "the subscription capability's policy, named by the stack",
    ),
    "kubernetes:admissionregistration.k8s.io/v1beta1:ValidatingAdmissionPolicy": OWN(
        "the subscription capability's policy, named by the stack",
    ),
    "kubernetes:admissionregistration.k8s.io/v1beta1:ValidatingAdmissionPolicyBinding": OWN(
        "the subscription capability's policy, named by the stack",
    ),
    "kubernetes:storage.k8s.io/v1:StorageClass": OWN("the aws-tags capability's tagged StorageClass, named by the stack"),
};

/** Custom resources (`kubernetes:<group>/<version>:<Kind>` of a CRD) the stack creates: its own, by kind. */
export const OWN_CUSTOM_RESOURCES: Readonly<Record<string, AdoptionRule>> = {
    OperatorCondition: OWN("OLM generates it for a CSV (and garbage-collects it with the CSV); the stack's is named after the CSV"),
    Bundle: OWN("a team's Bundle the stack declares"),
    ClusterBundle: OWN("a ClusterBundle the stack declares"),
    SharedSecret: OWN("a share the stack declares for a ClusterBundle"),
    SharedConfigMap: OWN("a share the stack declares for a ClusterBundle"),
    Stack: OWN("PKO's Stack for this stack's reconcile, named by the stack"),
    ConsoleYAMLSample: OWN("the subscription capability's console samples, named by the stack"),
};

/**
 * Whether the provider treats the resource as a Patch: its type's name is the object's kind plus
 * `Patch` (pulumi-kubernetes provider/pkg/kinds/util.go, `IsPatchResource`), so a custom resource
 * kind that ends in "Patch" is not one.
 */
export function isPatchResource(type: string, props: Record<string, unknown> | undefined): boolean {
    const kind = props?.kind;
    return typeof kind === "string" && type.slice(type.lastIndexOf(":") + 1) === `${kind}Patch`;
}

/** The resource's type and role as the table keys them: `<type>`, or `<type> <role>` for RBAC; undefined for non-Kubernetes resources. */
export function adoptionKey(type: string, props: Record<string, unknown> | undefined): string | undefined {
    if (!type.startsWith("kubernetes:") || type.startsWith("kubernetes:helm")) {
        return undefined;
    }
    if (isPatchResource(type, props)) {
        return "(every Patch resource)";
    }
    const entry = ADOPTION_BY_TYPE[type];
    if (entry !== undefined && isRoleTable(entry)) {
        return `${type} ${rbacRole(props) ?? "(no role label)"}`;
    }
    return type;
}

function isRoleTable(entry: AdoptionRule | Readonly<Record<string, AdoptionRule>>): entry is Readonly<Record<string, AdoptionRule>> {
    return !("decision" in entry);
}

/** The decision for a resource, or undefined when its type and role have none (the adoption test fails on it). */
export function adoptionOf(type: string, props: Record<string, unknown> | undefined): AdoptionRule | undefined {
    const key = adoptionKey(type, props);
    if (key === undefined) {
        return undefined;
    }
    if (isPatchResource(type, props)) {
        return PATCH;
    }
    const entry = ADOPTION_BY_TYPE[type];
    if (entry === undefined) {
        const kind = type.slice(type.lastIndexOf(":") + 1);
        return OWN_CUSTOM_RESOURCES[kind];
    }
    if (!isRoleTable(entry)) {
        return entry;
    }
    const role = rbacRole(props);
    return role === undefined ? undefined : entry[role];
}

/**
 * Declares every `adopt` resource on the adopting provider (the one with `upsertExistingObjects`),
 * whatever its component passed; registered once for the stack (components/composition/phases.ts).
 */
export function adoptionTransformation(adopting: pulumi.ProviderResource): pulumi.ResourceTransformation {
    return ({ type, props, opts }) => {
        if (adoptionOf(type, props)?.decision !== "adopt") {
            return undefined;
        }
        return { props, opts: { ...opts, provider: adopting } };
    };
}
