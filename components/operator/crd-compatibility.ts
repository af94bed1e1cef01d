/**
 * OLM's second check before it replaces a CRD: every existing custom resource of a version the
 * cluster's CRD serves and the new manifest still serves must validate against the manifest's
 * schema for that version (operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/catalog/operator.go, `validateV1CRDCompatibility` →
 * `validateExistingCRs`, which lists each such version across all namespaces and fails with
 * "updated validation is too restrictive"). The API server does not re-validate stored objects
 * when a CRD changes, so without the check such an upgrade applies and each refused object fails
 * its next write (the operator's status updates included).
 *
 * Every version both serve is listed, an unchanged schema's too, as OLM lists them: the API server
 * validates an object against the schema of the version it is written at, so one written at another
 * version (or before that version's schema was what it is) and read through conversion was never
 * validated against this one, and its next write at this version is refused.
 */
import type { OperatorConfig } from "../config/schema";
import type { CollectionRead, CollectionRef, ObjectLister, ObjectRead } from "../shared/object-presence";
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { CrdObject } from "./bundle";
import { type JsonSchema, schemaViolations } from "../shared/structural-schema";
import type { OperatorPlan } from "./plan";

/** How many refused objects a problem names before it counts the rest. */
const NAMED_OBJECTS = 5;

/** A version to re-validate: served by the cluster's CRD and by the manifest. */
export interface RevalidatedVersion {
    readonly version: string;
    readonly schema: JsonSchema;
}

type CrdVersion = { name?: unknown; served?: unknown; schema?: { openAPIV3Schema?: JsonSchema } };

function versionsOf(crd: { spec?: unknown }): CrdVersion[] {
    const versions = (crd.spec as { versions?: unknown } | undefined)?.versions;
    return Array.isArray(versions) ? (versions as CrdVersion[]) : [];
}

/** The versions whose existing objects must be checked against the manifest: OLM's set, every version both serve. */
export function revalidatedVersions(live: Record<string, unknown>, manifest: CrdObject): RevalidatedVersion[] {
    const liveServed = new Set(versionsOf(live).flatMap((v) => (v.served === true && typeof v.name === "string" ? [v.name] : [])));
    return versionsOf(manifest).flatMap((v) => {
        const schema = v.schema?.openAPIV3Schema;
        return v.served === true && typeof v.name === "string" && liveServed.has(v.name) && schema !== undefined
            ? [{ version: v.name, schema }]
            : [];
    });
}

/** `Widget "team/name"`, as OLM names an object in its message. */
function describeObject(kind: string, object: Record<string, unknown>): string {
    const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
    return `${kind} ${JSON.stringify(metadata.namespace ? `${metadata.namespace}/${metadata.name}` : metadata.name)}`;
}

/** The problem for one CRD version's refused objects, or undefined when the schema accepts them all. */
export function tooRestrictiveProblem(
    where: { path: string; operator: string; crd: string; kind: string; version: string },
    schema: JsonSchema,
    objects: readonly Record<string, unknown>[],
): Problem | undefined {
    const refused = objects.flatMap((object) => {
        const violations = schemaViolations(object, schema);
        return violations.length === 0
            ? []
            : [`${describeObject(where.kind, object)}: ${violations.map((v) => `${v.path}: ${v.message}`).join("; ")}`];
    });
    if (refused.length === 0) {
        return undefined;
    }
    const named = refused.slice(0, NAMED_OBJECTS).join(" | ");
    const more = refused.length > NAMED_OBJECTS ? ` | and ${refused.length - NAMED_OBJECTS} more` : "";
    return {
        path: where.path,
        message: `operator ${describeValue(where.operator)}: CRD ${describeValue(where.crd)}: the bundle's schema for version ${describeValue(where.version)} refuses ${refused.length} existing custom resource${refused.length === 1 ? "" : "s"} (OLM refuses this upgrade too: "updated validation is too restrictive", pkg/controller/operators/catalog/operator.go): ${named}${more}; change those resources first, or keep a schema that accepts them`,
    };
}

/**
 * Lists each re-validated version's objects and checks them. A list that fails (a conversion
 * webhook that is down answers every list at a non-storage version with an error) is a warning:
 * the upgrade may be what repairs it.
 */
export async function existingResourceProblems(
    plans: readonly OperatorPlan[],
    operators: readonly OperatorConfig[],
    liveCrds: ReadonlyMap<string, ObjectRead>,
    list: ObjectLister,
): Promise<{ problems: Problem[]; warnings: string[] }> {
    const problems: Problem[] = [];
    const warnings: string[] = [];
    const checked = new Set<string>();
    for (const plan of plans) {
        const path = formatPath(["operators", operators.indexOf(plan.config), "csv"]);
        for (const crd of plan.crds) {
            const live = liveCrds.get(crd.name);
            if (!crd.manifest || typeof live !== "object" || checked.has(crd.name)) {
                continue;
            }
            checked.add(crd.name);
            const { group, names } = crd.manifest.spec;
            for (const { version, schema } of revalidatedVersions(live, crd.manifest)) {
                const ref: CollectionRef = { apiVersion: `${group}/${version}`, kind: names.kind, plural: names.plural };
                let objects: CollectionRead;
                try {
                    objects = await list(ref);
                } catch (error) {
                    warnings.push(
                        `${path}: operator ${describeValue(plan.config.name)}: CRD ${describeValue(crd.name)}: existing ${names.kind} objects at ${version} not checked against the new schema: ${(error as Error).message}`,
                    );
                    continue;
                }
                if (objects === "unknown") {
                    continue;
                }
                const where = { path, operator: plan.config.name, crd: crd.name, kind: names.kind, version };
                const problem = tooRestrictiveProblem(where, schema, objects);
                if (problem) {
                    problems.push(problem);
                }
            }
        }
    }
    return { problems, warnings };
}
