/**
 * Validates rendered Kubernetes objects: built-in kinds against the Kubernetes OpenAPI
 * schemas (kubernetes-models), custom resources against the openAPIV3Schema of a CRD the
 * stack declares, its CEL rules (`x-kubernetes-validations`, cel-rules.ts) included. Values shown as "[secret]"/"[unknown]" are not judged: a preview does
 * not know them either.
 */
import type { ErrorObject } from "ajv";
import { type JsonSchema, type SchemaViolation, structuralValidator } from "../../components/shared/structural-schema";
import { CelProblem, celProblems } from "./cel-rules";
import { isMarker } from "./present";

type KubeObject = {
    apiVersion?: string;
    kind?: string;
    metadata?: { name?: string; namespace?: string };
    [key: string]: unknown;
};

export interface ManifestProblem {
    object: string;
    message: string;
}

export interface ValidationSummary {
    problems: ManifestProblem[];
    /** Custom resources with no CRD in the stack (their CRD comes from elsewhere), as `Kind.group`. */
    unvalidated: string[];
}

type Validator = (object: unknown) => ErrorObject[];
/** The CEL rules (`x-kubernetes-validations`) of a CRD version's schema, as problems. */
type CelValidator = (object: unknown) => CelProblem[];

function splitApiVersion(apiVersion: string): { group: string; version: string } {
    return apiVersion.includes("/")
        ? { group: apiVersion.split("/")[0], version: apiVersion.split("/")[1] }
        : { group: "", version: apiVersion };
}

export function describeObject(object: KubeObject): string {
    const ns = object.metadata?.namespace;
    return `${object.kind} ${ns ? `${ns}/` : ""}${object.metadata?.name ?? "(no name)"}`;
}

const builtInCache = new Map<string, Validator | null>();

/** The kubernetes-models validator of a built-in kind, or null when the kind is not built in. */
function builtInValidator(apiVersion: string, kind: string): Validator | null {
    const key = `${apiVersion}|${kind}`;
    if (!builtInCache.has(key)) {
        const { group, version } = splitApiVersion(apiVersion);
        const modulePath = group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
        let validator: Validator | null = null;
        try {
            const Model = require(modulePath)[kind] as new (data: unknown) => { validate(): void };
            validator = (object) => {
                try {
                    new Model(object).validate();
                    return [];
                } catch (error) {
                    const errors = (error as { errors?: ErrorObject[] }).errors;
                    if (!errors) {
                        throw error;
                    }
                    return errors;
                }
            };
        } catch (error) {
            // A group kubernetes-models does not ship is absent from its package exports.
            const code = (error as NodeJS.ErrnoException).code;
            if (code !== "MODULE_NOT_FOUND" && code !== "ERR_PACKAGE_PATH_NOT_EXPORTED") {
                throw error;
            }
        }
        builtInCache.set(key, validator);
    }
    return builtInCache.get(key) ?? null;
}

/** A CRD version's schema, as the API server validates a custom resource (unknown fields refused: see below). */
type CrdValidator = (object: unknown) => SchemaViolation[];

function crdValidators(objects: KubeObject[]): Map<string, { schema: CrdValidator; cel: CelValidator }> {
    const validators = new Map<string, { schema: CrdValidator; cel: CelValidator }>();
    for (const crd of objects) {
        if (crd.kind !== "CustomResourceDefinition" || crd.apiVersion !== "apiextensions.k8s.io/v1") {
            continue;
        }
        const spec = crd.spec as {
            group: string;
            names: { kind: string };
            versions: { name: string; schema?: { openAPIV3Schema?: JsonSchema } }[];
        };
        for (const version of spec.versions ?? []) {
            const schema = version.schema?.openAPIV3Schema;
            if (!schema) {
                continue;
            }
            // The one structural-schema validator (components/shared/structural-schema.ts); a field the
            // schema does not name is an error here: the API server would prune it, a perpetual diff.
            const validate = structuralValidator(schema, { unknownFields: "refuse", root: true });
            validators.set(`${spec.group}/${version.name}|${spec.names.kind}`, {
                schema: validate,
                cel: (object) => celProblems(schema as Record<string, unknown>, object),
            });
        }
    }
    return validators;
}

function valueAt(object: unknown, segments: readonly string[]): unknown[] {
    // Every value from the root down to the field, so a marker on any ancestor is found.
    const values: unknown[] = [object];
    let current: unknown = object;
    for (const key of segments) {
        current = current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined;
        values.push(current);
    }
    return values;
}

const pointerSegments = (pointer: string) =>
    pointer
        .split("/")
        .slice(1)
        .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
/** `spec.items[2].name` as segments. */
const pathSegments = (path: string) => (path === "<root>" ? [] : path.split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== ""));

/**
 * A CRD schema's `additionalProperties` or `additionalItems` of `true` or `false`: kubernetes-models
 * types JSONSchemaPropsOrBool as an object only, but the API server reads a boolean there too
 * (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1/marshal.go,
 * `JSONSchemaPropsOrBool.UnmarshalJSON`); stackgres-community's CRDs use `additionalProperties: true`.
 */
function schemaPropsOrBool(error: ErrorObject, value: unknown): boolean {
    return error.keyword === "type" && typeof value === "boolean" && /\/(additionalProperties|additionalItems)$/.test(error.instancePath);
}

function formatError(error: ErrorObject): string {
    const where = error.instancePath
        .split("/")
        .slice(1)
        .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
        .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
        .join("")
        .replace(/^\./, "");
    if (error.keyword === "additionalProperties") {
        const field = (error.params as { additionalProperty: string }).additionalProperty;
        return `${where ? `${where}.` : ""}${field}: is not in the schema (the API server would prune it)`;
    }
    if (error.keyword === "required") {
        const field = (error.params as { missingProperty: string }).missingProperty;
        return `${where ? `${where}.` : ""}${field}: is required`;
    }
    return `${where || "(root)"}: ${error.message}`;
}

export function validateManifests(objects: KubeObject[]): ValidationSummary {
    const crds = crdValidators(objects);
    const problems: ManifestProblem[] = [];
    const unvalidated = new Set<string>();
    for (const object of objects) {
        if (typeof object.apiVersion !== "string" || typeof object.kind !== "string") {
            problems.push({ object: describeObject(object), message: "apiVersion and kind are required" });
            continue;
        }
        const crd = crds.get(`${object.apiVersion}|${object.kind}`);
        const builtIn = builtInValidator(object.apiVersion, object.kind);
        if (!builtIn && !crd) {
            unvalidated.add(`${object.kind}.${object.apiVersion}`);
            continue;
        }
        for (const error of builtIn ? builtIn(object) : []) {
            const values = valueAt(object, pointerSegments(error.instancePath));
            if (values.some(isMarker) || schemaPropsOrBool(error, values[values.length - 1])) {
                continue;
            }
            problems.push({ object: describeObject(object), message: formatError(error) });
        }
        for (const violation of builtIn ? [] : (crd?.schema(object) ?? [])) {
            if (valueAt(object, pathSegments(violation.path)).some(isMarker)) {
                continue;
            }
            problems.push({ object: describeObject(object), message: `${violation.path}: ${violation.message}` });
        }
        for (const problem of crd?.cel(object) ?? []) {
            problems.push({ object: describeObject(object), message: `${problem.path}: ${problem.message} (x-kubernetes-validations)` });
        }
    }
    return { problems, unvalidated: [...unvalidated].sort() };
}
