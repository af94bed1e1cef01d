/**
 * Validates an object against a CRD version's `openAPIV3Schema`, with the value validations the
 * API server applies to custom resources: what OLM runs over every existing custom resource before
 * it replaces a CRD (operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/catalog/operator.go, `validateExistingCRs`: apiextensions-apiserver's
 * `validation.NewSchemaValidator` and `ValidateCustomResource`, kube-openapi's validator).
 *
 * Like OLM's check it covers the schema's own keywords (types, `nullable`, `required`,
 * `properties`, `additionalProperties`, `items`, `enum`, bounds, lengths, counts, `pattern`,
 * `multipleOf`, `uniqueItems`, `allOf`/`anyOf`/`oneOf`/`not`, string `format`s,
 * `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields`), and not CEL rules or
 * list-type uniqueness, which OLM does not check either. Where this file cannot decide (a pattern
 * JavaScript cannot compile, a format it does not know) it reports nothing: a missed refusal
 * leaves the API server to refuse the object's next write, while a false one would block an
 * upgrade that is safe.
 */

/** The part of a structural schema this validator reads. */
export interface JsonSchema {
    type?: string;
    nullable?: boolean;
    format?: string;
    enum?: unknown[];
    required?: string[];
    properties?: Record<string, JsonSchema>;
    additionalProperties?: boolean | JsonSchema;
    items?: JsonSchema;
    minimum?: number;
    maximum?: number;
    exclusiveMinimum?: boolean;
    exclusiveMaximum?: boolean;
    multipleOf?: number;
    minLength?: number;
    maxLength?: number;
    pattern?: string;
    minItems?: number;
    maxItems?: number;
    uniqueItems?: boolean;
    minProperties?: number;
    maxProperties?: number;
    allOf?: JsonSchema[];
    anyOf?: JsonSchema[];
    oneOf?: JsonSchema[];
    not?: JsonSchema;
    "x-kubernetes-int-or-string"?: boolean;
    "x-kubernetes-preserve-unknown-fields"?: boolean;
}

/** One violation: the field's path (`spec.replicas`, `spec.items[2]`) and what is wrong, value included. */
export interface SchemaViolation {
    readonly path: string;
    readonly message: string;
}

/** Every violation of `schema` by `value`, in field order. */
export function schemaViolations(value: unknown, schema: JsonSchema, path = ""): SchemaViolation[] {
    const out: SchemaViolation[] = [];
    check(value, schema, path, out);
    return out;
}

function check(value: unknown, schema: JsonSchema, path: string, out: SchemaViolation[]): void {
    const at = (message: string) => out.push({ path: path || "<root>", message });
    if (value === null) {
        if (!schema.nullable && schema.type !== undefined) {
            at(`null is not allowed (type ${schema.type}, not nullable)`);
        }
        return;
    }
    if (!typeMatches(value, schema)) {
        at(`${show(value)} is not of type ${schema["x-kubernetes-int-or-string"] ? "integer or string" : schema.type}`);
        return;
    }
    if (schema.enum !== undefined && !schema.enum.some((allowed) => deepEqual(allowed, value))) {
        at(`${show(value)} is not one of ${schema.enum.map((allowed) => JSON.stringify(allowed)).join(", ")}`);
    }
    if (typeof value === "number") {
        checkNumber(value, schema, at);
    } else if (typeof value === "string") {
        checkString(value, schema, at);
    } else if (Array.isArray(value)) {
        checkArray(value, schema, path, at, out);
    } else if (typeof value === "object") {
        checkObject(value as Record<string, unknown>, schema, path, at, out);
    }
    checkCombinators(value, schema, path, at, out);
}

function typeMatches(value: unknown, schema: JsonSchema): boolean {
    if (schema["x-kubernetes-int-or-string"]) {
        return typeof value === "string" || Number.isInteger(value);
    }
    switch (schema.type) {
        case undefined:
            return true;
        case "object":
            return typeof value === "object" && !Array.isArray(value);
        case "array":
            return Array.isArray(value);
        case "string":
            return typeof value === "string";
        case "integer":
            return Number.isInteger(value);
        case "number":
            return typeof value === "number";
        case "boolean":
            return typeof value === "boolean";
        default:
            return true;
    }
}

function checkNumber(value: number, schema: JsonSchema, at: (m: string) => void): void {
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
        at(`${value} is ${schema.exclusiveMinimum ? "not above" : "below"} the minimum ${schema.minimum}`);
    }
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
        at(`${value} is ${schema.exclusiveMaximum ? "not below" : "above"} the maximum ${schema.maximum}`);
    }
    if (schema.multipleOf !== undefined && schema.multipleOf > 0 && !isMultiple(value, schema.multipleOf)) {
        at(`${value} is not a multiple of ${schema.multipleOf}`);
    }
}

function isMultiple(value: number, factor: number): boolean {
    const quotient = value / factor;
    return Math.abs(quotient - Math.round(quotient)) < 1e-9;
}

function checkString(value: string, schema: JsonSchema, at: (m: string) => void): void {
    // Lengths count characters (code points), as Go's utf8.RuneCountInString does.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) {
        at(`${show(value)} is shorter than ${schema.minLength} characters`);
    }
    if (schema.maxLength !== undefined && length > schema.maxLength) {
        at(`${show(value)} is longer than ${schema.maxLength} characters`);
    }
    if (schema.pattern !== undefined) {
        const pattern = compiled(schema.pattern);
        if (pattern && !pattern.test(value)) {
            at(`${show(value)} does not match the pattern ${JSON.stringify(schema.pattern)}`);
        }
    }
    const format = schema.format === undefined ? undefined : FORMATS[schema.format];
    if (format && !format(value)) {
        at(`${show(value)} is not a valid ${schema.format}`);
    }
}

const patterns = new Map<string, RegExp | undefined>();

/** The pattern as a JavaScript RegExp (RE2 and ECMAScript agree on what CRDs use), or undefined when it does not compile. */
function compiled(pattern: string): RegExp | undefined {
    if (!patterns.has(pattern)) {
        let regexp: RegExp | undefined;
        try {
            regexp = new RegExp(pattern, "u");
        } catch {
            regexp = undefined;
        }
        patterns.set(pattern, regexp);
    }
    return patterns.get(pattern);
}

/**
 * The string formats checked, as the API server's registry defines them (kubernetes/kube-openapi
 * pkg/validation/strfmt/default.go: `uuid` is `(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?...$`, `ipv4` a
 * dotted quad that tolerates leading zeros, `byte` standard base64). The empty string counts as
 * base64 here, and date-time, hostname and the rest are not checked: no false refusals.
 */
const FORMATS: Record<string, (value: string) => boolean> = {
    byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
    ipv4: (v) => /^\d{1,3}(\.\d{1,3}){3}$/.test(v) && v.split(".").every((octet) => Number(octet) <= 255),
    uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
};

function checkArray(value: unknown[], schema: JsonSchema, path: string, at: (m: string) => void, out: SchemaViolation[]): void {
    if (schema.minItems !== undefined && value.length < schema.minItems) {
        at(`${value.length} items, fewer than the minimum ${schema.minItems}`);
    }
    if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        at(`${value.length} items, more than the maximum ${schema.maxItems}`);
    }
    if (schema.uniqueItems && value.some((item, i) => value.findIndex((other) => deepEqual(other, item)) !== i)) {
        at(`items are not unique`);
    }
    if (schema.items) {
        value.forEach((item, i) => check(item, schema.items as JsonSchema, `${path}[${i}]`, out));
    }
}

function checkObject(
    value: Record<string, unknown>,
    schema: JsonSchema,
    path: string,
    at: (m: string) => void,
    out: SchemaViolation[],
): void {
    const keys = Object.keys(value);
    for (const name of schema.required ?? []) {
        if (!(name in value)) {
            at(`required field ${JSON.stringify(name)} is missing`);
        }
    }
    if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
        at(`${keys.length} fields, fewer than the minimum ${schema.minProperties}`);
    }
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
        at(`${keys.length} fields, more than the maximum ${schema.maxProperties}`);
    }
    for (const key of keys) {
        const child = path ? `${path}.${key}` : key;
        const property = schema.properties?.[key];
        if (property) {
            check(value[key], property, child, out);
        } else if (schema.additionalProperties === false && !schema["x-kubernetes-preserve-unknown-fields"]) {
            out.push({ path: child, message: `field not declared by the schema (additionalProperties: false)` });
        } else if (typeof schema.additionalProperties === "object") {
            check(value[key], schema.additionalProperties, child, out);
        }
    }
}

function checkCombinators(value: unknown, schema: JsonSchema, path: string, at: (m: string) => void, out: SchemaViolation[]): void {
    for (const part of schema.allOf ?? []) {
        check(value, part, path, out);
    }
    const passes = (part: JsonSchema) => schemaViolations(value, part, path).length === 0;
    if (schema.anyOf && !schema.anyOf.some(passes)) {
        at(`${show(value)} matches none of the anyOf schemas`);
    }
    if (schema.oneOf && schema.oneOf.filter(passes).length !== 1) {
        at(`${show(value)} matches ${schema.oneOf.filter(passes).length} of the oneOf schemas, not exactly one`);
    }
    if (schema.not && passes(schema.not)) {
        at(`${show(value)} matches the schema under not`);
    }
}

function deepEqual(a: unknown, b: unknown): boolean {
    if (a === b) {
        return true;
    }
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
        return false;
    }
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * A value for a message, without its text: custom resources may hold credentials in any string
 * field, and these messages reach the preview's output. Numbers, booleans and null are shown.
 */
function show(value: unknown): string {
    if (typeof value === "string") {
        return `a string of ${[...value].length} character${[...value].length === 1 ? "" : "s"}`;
    }
    if (Array.isArray(value)) {
        return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
    }
    if (value !== null && typeof value === "object") {
        return "an object";
    }
    return String(value);
}
