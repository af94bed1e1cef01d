/**
 * A CSV's `spec.nativeAPIs` as OLM checks them before it installs anything: each is a
 * GroupVersionKind the operator needs from the cluster itself (Routes, Deployments, CronJobs), and
 * OLM asks discovery for that group version (`ServerResourcesForGroupVersion`, of
 * `metav1.GroupVersion{Group, Version}.String()`) and looks for the kind among its resources
 * (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, `requirementStatus` and
 * `isGVKRegistered`). One missing, or a group version discovery cannot answer, leaves the CSV
 * Pending with RequirementsNotMet ("Native API does not exist"), and OLM creates none of its
 * objects. The pre-flight refuses such an install the same way, before anything is registered.
 *
 * Pure but for the discovery it is given.
 */
import { formatPath, Problem } from "../shared/problems";
import { groupVersionOf, type ServedKinds } from "../shared/discovery";

/** One entry of `spec.nativeAPIs` (metav1.GroupVersionKind: a missing field decodes as ""). */
export interface NativeApi {
    group: string;
    version: string;
    kind: string;
}

/**
 * The native APIs of a CSV that the cluster does not serve, as `isGVKRegistered` finds them. With no
 * version there is no group version to ask: `metav1.GroupVersion.String()` is "" for the core group
 * (an error in client-go's discovery) and "apps/" for a named one (no such path), so not served. A
 * group version the discovery does not list serves no kind. Each group version is asked once.
 */
export async function missingNativeApis(apis: readonly NativeApi[], served: ServedKinds): Promise<NativeApi[]> {
    const asked = new Map<string, Promise<ReadonlyMap<string, unknown> | undefined>>();
    const missing: NativeApi[] = [];
    for (const api of apis) {
        if (api.version === "") {
            missing.push(api);
            continue;
        }
        const groupVersion = groupVersionOf(api.group, api.version);
        if (!asked.has(groupVersion)) asked.set(groupVersion, served(groupVersion));
        const kinds = await asked.get(groupVersion)!;
        if (!kinds?.has(api.kind)) missing.push(api);
    }
    return missing;
}

/** How apimachinery prints a GroupVersionKind (`schema.GroupVersionKind.String()`: "/v1, Kind=Pod" for the core group). */
export function describeNativeApi(api: NativeApi): string {
    return `${api.group}/${api.version}, Kind=${api.kind}`;
}

/**
 * The pre-flight's check: each install whose CSV names native APIs the cluster does not serve, as
 * one problem on its `operators[i].csv` naming them all. Discovery is asked only when some CSV names one.
 */
export async function nativeApiProblems(
    plans: readonly { config: { name: string; csv: string }; nativeApis: readonly NativeApi[] }[],
    operators: readonly { name: string }[],
    served: ServedKinds,
): Promise<Problem[]> {
    const problems: Problem[] = [];
    for (const plan of plans.filter((p) => p.nativeApis.length > 0)) {
        const missing = await missingNativeApis(plan.nativeApis, served);
        if (missing.length === 0) continue;
        const index = operators.findIndex((o) => o.name === plan.config.name);
        problems.push({
            path: formatPath(["operators", index, "csv"]),
            message: `${JSON.stringify(plan.config.csv)} spec.nativeAPIs: this cluster does not serve ${missing.map(describeNativeApi).join("; ")}, and OLM leaves this CSV Pending, RequirementsNotMet: "Native API does not exist" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, requirementStatus); install the operator on a cluster that serves them, or install what serves them first`,
        });
    }
    return problems;
}
