/**
 * Validates rendered Kubernetes objects: built-in kinds against the Kubernetes OpenAPI
 * schemas (kubernetes-models), custom resources against the openAPIV3Schema of a CRD the
 * stack declares, its CEL rules (`x-kubernetes-validations`, cel-rules.ts) included. Values shown as "[secret]"/"[unknown]" are not judged: a preview does
 * not know them either.
 */
import Ajv, { ErrorObject, ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
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

/**
 * A CRD schema as the API server applies it: fields a structural schema does not declare are
 * pruned on write, so here they are errors (a pruned field would show as a perpetual diff).
 */
function prunedSchema(schema: Record<string, unknown>, root: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = { ...schema };
    if (out.properties && typeof out.properties === "object") {
        const properties: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(out.properties as Record<string, Record<string, unknown>>)) {
            properties[k] = prunedSchema(v, false);
        }
        if (root) {
            properties.apiVersion ??= { type: "string" };
            properties.kind ??= { type: "string" };
            properties.metadata = { type: "object" };
        }
        out.properties = properties;
        if (out.additionalProperties === undefined && out["x-kubernetes-preserve-unknown-fields"] !== true) {
            out.additionalProperties = false;
        }
    }
    if (out.items && typeof out.items === "object") {
        out.items = prunedSchema(out.items as Record<string, unknown>, false);
    }
    if (out.additionalProperties && typeof out.additionalProperties === "object") {
        out.additionalProperties = prunedSchema(out.additionalProperties as Record<string, unknown>, false);
    }
    return out;
}

function crdValidators(objects: KubeObject[]): Map<string, { schema: Validator; cel: CelValidator }> {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const validators = new Map<string, { schema: Validator; cel: CelValidator }>();
    for (const crd of objects) {
        if (crd.kind !== "CustomResourceDefinition" || crd.apiVersion !== "apiextensions.k8s.io/v1") {
            continue;
        }
        const spec = crd.spec as {
            group: string;
            names: { kind: string };
            versions: { name: string; schema?: { openAPIV3Schema?: Record<string, unknown> } }[];
        };
        for (const version of spec.versions ?? []) {
            const schema = version.schema?.openAPIV3Schema;
            if (!schema) {
                continue;
            }
            const validate: ValidateFunction = ajv.compile(prunedSchema(schema, true));
            validators.set(`${spec.group}/${version.name}|${spec.names.kind}`, {
                schema: (object) => (validate(object) ? [] : [...(validate.errors ?? [])]),
                cel: (object) => celProblems(schema, object),
            });
        }
    }
    return validators;
}

function valueAt(object: unknown, pointer: string): unknown[] {
    // Every value from the root down to the pointer, so a marker on any ancestor is found.
    const values: unknown[] = [object];
    let current: unknown = object;
    for (const raw of pointer.split("/").slice(1)) {
        const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
        current = current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined;
        values.push(current);
    }
    return values;
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
        const validator = builtInValidator(object.apiVersion, object.kind) ?? crd?.schema;
        if (!validator) {
            unvalidated.add(`${object.kind}.${object.apiVersion}`);
            continue;
        }
        for (const error of validator(object)) {
            if (valueAt(object, error.instancePath).some(isMarker)) {
                continue;
            }
            problems.push({ object: describeObject(object), message: formatError(error) });
        }
        for (const problem of crd?.cel(object) ?? []) {
            problems.push({ object: describeObject(object), message: `${problem.path}: ${problem.message} (x-kubernetes-validations)` });
        }
    }
    return { problems, unvalidated: [...unvalidated].sort() };
}
