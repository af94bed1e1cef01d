/**
 * What OLM checks before it replaces an operator's CRDs, checked here before anything is
 * registered, against the CRDs in the cluster (read whole: a CRD holds no secret).
 *
 * A new manifest must keep every version the cluster's CRD lists in `status.storedVersions`:
 * objects stored at a dropped version could no longer be read, and the API server refuses such a
 * CRD anyway, but only during `up`, after other objects of the install were already changed.
 * OLM refuses the upgrade the same way (operator-framework/operator-lifecycle-manager
 * pkg/lib/crd/storage.go, `SafeStorageVersionUpgrade`, called by
 * pkg/controller/operators/catalog/operator.go before it updates a CRD).
 *
 * Existing custom resources are checked against the new schema too, as OLM checks them
 * (crd-compatibility.ts).
 */
import type { OperatorConfig } from "../config/schema";
import type { ObjectLister, ObjectRead, ObjectReader } from "../shared/object-presence";
import type { ObjectRef } from "../shared/object-refs";
import { describeValue, formatPath, Problem } from "../shared/problems";
import { existingResourceProblems } from "./crd-compatibility";
import type { OperatorPlan } from "./plan";
import { type InstalledCsv, installedCsvOf, upgradeableVerdict, upgradeEdgeVerdict } from "./upgrade-path";

const CRD_REF = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions" };

/** The CRDs the plans install from manifests, each once. */
function plannedCrds(plans: readonly OperatorPlan[]): { plan: OperatorPlan; name: string; versions: string[] }[] {
    return plans.flatMap((plan) =>
        plan.crds.flatMap((crd) =>
            crd.manifest ? [{ plan, name: crd.name, versions: crd.manifest.spec.versions.map((v) => v.name) }] : [],
        ),
    );
}

/** `status.storedVersions` of a CRD as read (empty when absent or not yet known). */
export function storedVersionsOf(read: ObjectRead): string[] {
    if (typeof read !== "object") {
        return [];
    }
    const status = read.status as { storedVersions?: unknown } | undefined;
    return Array.isArray(status?.storedVersions) ? status.storedVersions.filter((v): v is string => typeof v === "string") : [];
}

/** One problem per stored version a planned manifest drops, naming operator, CRD and version. */
export function storedVersionProblems(
    plans: readonly OperatorPlan[],
    operators: readonly OperatorConfig[],
    existing: ReadonlyMap<string, ObjectRead>,
): Problem[] {
    const problems: Problem[] = [];
    for (const { plan, name, versions } of plannedCrds(plans)) {
        for (const stored of storedVersionsOf(existing.get(name) ?? "unknown")) {
            if (!versions.includes(stored)) {
                problems.push({
                    path: formatPath(["operators", operators.indexOf(plan.config), "csv"]),
                    message: `operator ${describeValue(plan.config.name)}: CRD ${describeValue(name)}: the bundle's manifest drops version ${describeValue(stored)}, which the cluster's CRD lists in status.storedVersions, so objects stored at it could no longer be read (OLM refuses this upgrade too: pkg/lib/crd/storage.go); keep the version, or migrate every object to a kept version and remove ${describeValue(stored)} from status.storedVersions first`,
                });
            }
        }
    }
    return problems;
}

/**
 * Reads the planned CRDs, each install's running Deployment and its OperatorCondition from the
 * cluster, and checks them: stored versions (above), existing custom resources against changed
 * schemas (crd-compatibility.ts), then OLM's upgrade edges and `Upgradeable` (upgrade-path.ts).
 * Nothing is asked when there is nothing to check.
 */
export async function upgradeProblems(
    plans: readonly OperatorPlan[],
    operators: readonly OperatorConfig[],
    read: ObjectReader,
    list: ObjectLister,
): Promise<{ problems: Problem[]; warnings: string[] }> {
    const names = [...new Set(plannedCrds(plans).map((c) => c.name))];
    // Every Deployment of the bundle: a new version may add or rename one, so its first may not
    // run yet while another does.
    const deploymentRefs: ObjectRef[] = plans.flatMap((plan) =>
        plan.deployments.map((deployment) => ({
            apiVersion: "apps/v1",
            kind: "Deployment",
            plural: "deployments",
            namespace: plan.config.namespace,
            name: deployment.name,
        })),
    );
    const refs: ObjectRef[] = [...names.map((name) => ({ ...CRD_REF, name })), ...deploymentRefs];
    if (refs.length === 0) {
        return { problems: [], warnings: [] };
    }
    const objects = await read(refs);
    const liveCrds = new Map(names.map((name, i) => [name, objects[i]]));
    const problems = storedVersionProblems(plans, operators, liveCrds);
    const existing = await existingResourceProblems(plans, operators, liveCrds, list);
    problems.push(...existing.problems);
    const warnings: string[] = [...existing.warnings];
    let next = names.length;
    const upgrades = plans.flatMap((plan) => {
        const reads = objects.slice(next, (next += plan.deployments.length));
        return installedCsvsOf(reads)
            .filter((installed) => installed.name !== plan.edges.csvName)
            .map((installed) => ({ plan, installed }));
    });
    const conditions =
        upgrades.length > 0
            ? await read(upgrades.map(({ plan, installed }) => operatorConditionRef(plan.config.namespace, installed.name)))
            : [];
    upgrades.forEach(({ plan, installed }, i) => {
        const where = formatPath(["operators", operators.indexOf(plan.config), "csv"]);
        for (const verdict of [upgradeEdgeVerdict(installed, plan.edges), upgradeableVerdict(conditions[i])]) {
            if (!verdict.ok) {
                problems.push({ path: where, message: `operator ${describeValue(plan.config.name)}: ${verdict.message}` });
            } else if (verdict.warning) {
                warnings.push(`${where}: operator ${describeValue(plan.config.name)}: ${verdict.warning}`);
            }
        }
    });
    return { problems, warnings };
}

/**
 * The CSVs the bundle's running Deployments were installed from, each once (with its version where
 * any of them records it): usually one, more after an interrupted upgrade, and each is a CSV the
 * new one must be able to replace.
 */
export function installedCsvsOf(deployments: readonly ObjectRead[]): InstalledCsv[] {
    const byName = new Map<string, InstalledCsv>();
    for (const installed of deployments.map(installedCsvOf)) {
        if (installed !== undefined && byName.get(installed.name)?.version === undefined) {
            byName.set(installed.name, installed);
        }
    }
    return [...byName.values()];
}

/** OLM's OperatorCondition of a CSV: named after it, in the operator's namespace (404 where the API is not served). */
function operatorConditionRef(namespace: string, csvName: string): ObjectRef {
    return { apiVersion: "operators.coreos.com/v2", kind: "OperatorCondition", plural: "operatorconditions", namespace, name: csvName };
}
