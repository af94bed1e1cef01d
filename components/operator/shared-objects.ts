/**
 * One operator installed in several namespaces (OwnNamespace or SingleNamespace installs per
 * team, each with its OperatorGroup, as OLM allows): the installs share the cluster-scoped
 * objects of their bundle, the owned CRDs and the per-API aggregate ClusterRoles (OLM makes
 * those once per API: operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/olm/operatorgroup.go, `ensureClusterRolesForCSV`, which updates the
 * existing role of that name). Identical objects are declared once, by the first install in
 * config order; the same name with different content (two bundle versions) is refused: one
 * cluster holds one CRD and one role per name. Pure.
 */
import type { OperatorConfig } from "../config/schema";
import { canonicalJson } from "../shared/canonical-json";
import { OPERATOR_LABEL } from "../shared/labels";
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { OperatorPlan } from "./plan";
import { GENERATED_BY, objectKey, RbacObject } from "./rbac";

export interface SharedObjects {
    /** Keys of objects this install declares for others too (kept on its removal). */
    declared: string[];
    /** Keys of objects another install declares for this one, with that install's name. */
    fromOthers: Record<string, string>;
}

/** A per-API aggregate role: the same for every install of one bundle, but for the operator label. */
function isShareableRole(object: RbacObject): boolean {
    return object.kind === "ClusterRole" && object.metadata.labels?.["cluster-platform.io/generated-by"] === GENERATED_BY.aggregateCRDRoles;
}

/** The content two installs must agree on: the CRD manifest, or the role without the install's own label. */
function contentOf(plan: OperatorPlan, key: string): string {
    const crd = plan.crds.find((c) => `CustomResourceDefinition ${c.name}` === key);
    if (crd) {
        return canonicalJson(crd.manifest ?? null);
    }
    const role = plan.rbac.find((o) => objectKey(o) === key) as RbacObject;
    const labels = { ...(role.metadata.labels ?? {}) };
    delete labels[OPERATOR_LABEL];
    return canonicalJson({ ...role, metadata: { ...role.metadata, labels } });
}

/** The objects (`Kind namespace/name`) this install declares that other installs of its bundle may share. */
export function shareableKeys(plan: OperatorPlan): string[] {
    return [
        ...plan.crds.filter((c) => c.manifest).map((c) => `CustomResourceDefinition ${c.name}`),
        ...plan.rbac.filter(isShareableRole).map(objectKey),
    ];
}

export function shareClusterObjects(
    plans: readonly OperatorPlan[],
    operators: readonly OperatorConfig[],
): { plans: OperatorPlan[]; problems: Problem[] } {
    const first = new Map<string, OperatorPlan>();
    const problems: Problem[] = [];
    const declared = new Map<string, string[]>();
    const fromOthers = new Map<string, Record<string, string>>();
    for (const plan of plans) {
        for (const key of shareableKeys(plan)) {
            const owner = first.get(key);
            if (!owner) {
                first.set(key, plan);
                continue;
            }
            if (contentOf(owner, key) !== contentOf(plan, key)) {
                problems.push({
                    path: formatPath(["operators", operators.indexOf(plan.config), "csv"]),
                    message: `operator ${describeValue(plan.config.name)}: ${key} differs from the one operator ${describeValue(owner.config.name)} (operators[${operators.indexOf(owner.config)}]) installs from ${describeValue(owner.config.csv)}: installs of one operator in several namespaces share their cluster-scoped objects, so they must use the same bundle version`,
                });
                continue;
            }
            declared.set(owner.config.name, [...(declared.get(owner.config.name) ?? []), key]);
            fromOthers.set(plan.config.name, { ...(fromOthers.get(plan.config.name) ?? {}), [key]: owner.config.name });
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
                rbac: plan.rbac.filter((o) => others[objectKey(o)] === undefined),
                shared: { declared: [...new Set(declared.get(plan.config.name) ?? [])].sort(), fromOthers: others },
            };
        }),
    };
}
