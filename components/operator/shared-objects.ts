/**
 * One operator installed in several namespaces (OwnNamespace or SingleNamespace installs per
 * team, each with its OperatorGroup, as OLM allows): the installs share the objects of their
 * bundle that the cluster holds once. OLM makes or force-applies each of them under one name,
 * whichever CSV comes first or last (operator-framework/operator-lifecycle-manager):
 *
 * - the owned CRDs and the per-API aggregate ClusterRoles (pkg/controller/operators/olm/
 *   operatorgroup.go, `ensureClusterRolesForCSV`, which updates the existing role of that name);
 * - the serving-certificate bindings of a webhook or APIService backend, the ClusterRoleBinding
 *   `<service>-system:auth-delegator` and the RoleBinding `kube-system/<service>-auth-reader`
 *   (pkg/controller/install/certresources.go, `installCertRequirementsForDeployment`, which
 *   applies them with force, so the last install's ServiceAccount replaces the others');
 * - the owned APIServices `<version>.<group>` (pkg/controller/install/apiservice.go), which route
 *   a group version to one Service;
 * - the bundle's own cluster-scoped objects (ClusterRoles, PriorityClasses, console kinds...), which
 *   OLM's `ExecutePlan` creates or updates under one name (pkg/controller/operators/catalog/operator.go).
 *
 * Here each is declared once, by the first install in config order: a binding with every
 * install's ServiceAccount as its subjects (so no install loses its grant), an APIService served by
 * that install's Service (any install's pods serve the same API). The same name with different
 * content (two bundle versions) is refused: one cluster holds one object per name. When the
 * declaring install leaves, the next one declares the object, aliased to the leaver's resource
 * (rename.ts), so it is updated in place. Pure.
 */
import type { OperatorConfig } from "../config/schema";
import { canonicalJson } from "../shared/canonical-json";
import { GENERATED_BY_LABEL, OPERATOR_LABEL } from "../shared/labels";
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { ApiServicePlan } from "./apiservices";
import { bundleObjectKey, BundleObjectPlan, OLM_OWNER_LABELS } from "./bundle-objects";
import { GENERATED_BY, KUBE_SYSTEM, objectKey, RbacObject, Subject } from "./rbac";

/**
 * The parts of an install's plan (plan.ts `OperatorPlan`) that sharing reads and rewrites. The
 * functions are generic over it, so this module does not import plan.ts, which imports it.
 */
export interface ShareablePlan {
    config: OperatorConfig;
    crds: readonly { name: string; manifest?: unknown; sharedFrom?: string }[];
    rbac: readonly RbacObject[];
    bundleObjects: readonly BundleObjectPlan[];
    deployments: readonly { apiServices?: ApiServicePlan[] }[];
    shared: SharedObjects;
}

export interface SharedObjects {
    /** Keys of objects this install declares for others too. */
    declared: string[];
    /** Keys of objects another install declares for this one, with that install's name. */
    fromOthers: Record<string, string>;
}

/** A per-API aggregate role: the same for every install of one bundle, but for the operator label. */
function isShareableRole(object: RbacObject): boolean {
    return object.kind === "ClusterRole" && object.metadata.labels?.[GENERATED_BY_LABEL] === GENERATED_BY.aggregateCRDRoles;
}

/** OLM's fixed-name serving-certificate bindings: the cluster-scoped one and the one in kube-system. */
function isShareableBinding(object: RbacObject): boolean {
    return (
        object.metadata.labels?.[GENERATED_BY_LABEL] === GENERATED_BY.servingCertificate &&
        (object.kind === "ClusterRoleBinding" || (object.kind === "RoleBinding" && object.metadata.namespace === KUBE_SYSTEM))
    );
}

function apiServiceKey(plan: ApiServicePlan): string {
    return `APIService ${plan.name}`;
}

/** The RBAC object without what each install has of its own: its operator label and a binding's subjects. */
function withoutOwnParts(object: RbacObject): unknown {
    const labels = { ...(object.metadata.labels ?? {}) };
    delete labels[OPERATOR_LABEL];
    const { subjects: _subjects, ...rest } = object as RbacObject & { subjects?: Subject[] };
    return { ...rest, metadata: { ...object.metadata, labels } };
}

/** Every object this install declares that other installs may share, with the content they must agree on. */
function shareable(plan: ShareablePlan): Map<string, string> {
    const objects = new Map<string, string>();
    for (const crd of plan.crds.filter((c) => c.manifest)) {
        objects.set(`CustomResourceDefinition ${crd.name}`, canonicalJson(crd.manifest ?? null));
    }
    for (const object of plan.rbac.filter((o) => isShareableRole(o) || isShareableBinding(o))) {
        objects.set(objectKey(object), canonicalJson(withoutOwnParts(object)));
    }
    // The bundle's cluster-scoped objects (ClusterRoles, PriorityClasses, console objects...): OLM updates the one object.
    for (const object of plan.bundleObjects.filter((o) => !o.namespace)) {
        const manifest = object.manifest as { metadata: { labels?: Record<string, string> } };
        const labels = { ...(manifest.metadata.labels ?? {}) };
        delete labels[OPERATOR_LABEL];
        delete labels[OLM_OWNER_LABELS.namespace]; // a cluster-scoped bundle object names the installing namespace
        objects.set(bundleObjectKey(object), canonicalJson({ ...manifest, metadata: { ...manifest.metadata, labels } }));
    }
    for (const apiService of plan.deployments.flatMap((d) => d.apiServices ?? [])) {
        const { service, ...rest } = apiService;
        objects.set(apiServiceKey(apiService), canonicalJson({ ...rest, service: { name: service.name, port: service.port } }));
    }
    return objects;
}

/** The objects (`Kind namespace/name`) this install declares that other installs of its bundle may share. */
export function shareableKeys(plan: ShareablePlan): string[] {
    return [...shareable(plan).keys()];
}

/** A subject once, in first-seen order. */
function distinctSubjects(subjects: readonly Subject[]): Subject[] {
    const seen = new Set<string>();
    return subjects.filter((s) => {
        const key = `${s.kind}/${s.namespace}/${s.name}`;
        return seen.has(key) ? false : (seen.add(key), true);
    });
}

export function shareClusterObjects<P extends ShareablePlan>(
    plans: readonly P[],
    operators: readonly OperatorConfig[],
): { plans: P[]; problems: Problem[] } {
    const first = new Map<string, { plan: P; content: string }>();
    const problems: Problem[] = [];
    const declared = new Map<string, string[]>();
    const fromOthers = new Map<string, Record<string, string>>();
    // A shared binding's subjects: every install's, the declaring one's first.
    const subjects = new Map<string, Subject[]>();
    const subjectsOf = (plan: P, key: string): Subject[] =>
        (plan.rbac.find((o) => objectKey(o) === key) as (RbacObject & { subjects?: Subject[] }) | undefined)?.subjects ?? [];
    for (const plan of plans) {
        for (const [key, content] of shareable(plan)) {
            const owner = first.get(key);
            if (!owner) {
                first.set(key, { plan, content });
                continue;
            }
            if (owner.content !== content) {
                problems.push({
                    path: formatPath(["operators", operators.indexOf(plan.config), "csv"]),
                    message: `operator ${describeValue(plan.config.name)}: ${key} differs from the one operator ${describeValue(owner.plan.config.name)} (operators[${operators.indexOf(owner.plan.config)}]) installs from ${describeValue(owner.plan.config.csv)}: installs of one operator in several namespaces share their cluster-scoped objects, so they must use the same bundle version`,
                });
                continue;
            }
            declared.set(owner.plan.config.name, [...(declared.get(owner.plan.config.name) ?? []), key]);
            fromOthers.set(plan.config.name, { ...(fromOthers.get(plan.config.name) ?? {}), [key]: owner.plan.config.name });
            subjects.set(key, [...(subjects.get(key) ?? subjectsOf(owner.plan, key)), ...subjectsOf(plan, key)]);
        }
    }
    return {
        problems,
        plans: plans.map((plan) => {
            const others = fromOthers.get(plan.config.name) ?? {};
            return {
                ...plan,
                crds: plan.crds.map((c) =>
                    others[`CustomResourceDefinition ${c.name}`]
                        ? { ...c, manifest: undefined, sharedFrom: others[`CustomResourceDefinition ${c.name}`] }
                        : c,
                ),
                rbac: plan.rbac
                    .filter((o) => others[objectKey(o)] === undefined)
                    .map((o) => {
                        const merged = subjects.get(objectKey(o));
                        return merged && "subjects" in o ? { ...o, subjects: distinctSubjects(merged) } : o;
                    }),
                bundleObjects: plan.bundleObjects.filter((o) => others[bundleObjectKey(o)] === undefined),
                deployments: plan.deployments.map((d) =>
                    d.apiServices === undefined
                        ? d
                        : { ...d, apiServices: d.apiServices.filter((a) => others[apiServiceKey(a)] === undefined) },
                ),
                shared: { declared: [...new Set(declared.get(plan.config.name) ?? [])].sort(), fromOthers: others },
            };
        }),
    };
}
