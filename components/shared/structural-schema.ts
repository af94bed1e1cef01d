/**
 * The one validator of "is this object valid against a CRD version's schema", as the API server
 * validates a custom resource (apiextensions.k8s.io/v1 structural schemas, kube-openapi's
 * validator), on ajv (the maintained JSON Schema validator) given the schema translated from
 * OpenAPI v3 as Kubernetes reads it:
 *
 * - `exclusiveMinimum`/`exclusiveMaximum` are booleans beside `minimum`/`maximum` (ajv's are numbers);
 * - `nullable: true` admits null; a null in an object field whose schema is not nullable is pruned
 *   before validation, as the API server prunes it (apiextensions-apiserver
 *   `structuraldefaulting.PruneNonNullableNullsWithoutDefaults`), so only a required field goes
 *   missing; elsewhere null is a type error;
 * - `x-kubernetes-int-or-string` is an integer or a string; `x-kubernetes-preserve-unknown-fields`
 *   keeps fields the schema does not name;
 * - formats are kube-openapi's (`pkg/validation/strfmt/default.go`) where a value can be wrong
 *   (`byte`, `ipv4`, `uuid`...); a format it does not know is not checked, and a pattern JavaScript
 *   cannot compile matches everything (no false refusal: never block a safe upgrade or render);
 * - CEL rules (`x-kubernetes-validations`) are not schema keywords: the render checks them apart.
 *
 * Two uses: the pre-flight's check of existing custom resources before an upgrade (OLM's
 * `validateExistingCRs`, components/operator/crd-compatibility.ts), where fields the schema does
 * not name are simply pruned by the API server (`unknownFields: "ignore"`), and the offline
 * render, where such a field is an error (`"refuse"`: a pruned field would show as a perpetual
 * diff). A string value is named by its length, never its text: any field of a custom resource may
 * hold a credential, and these messages reach the preview's output.
 *
 * The expected answers of its tests come from the API server (tests/real/structural-schema.real.ts
 * compares it with server-side dry-runs; tests/shared/structural-schema.test.ts keeps a table the
 * API server answered). Pure.
 */
import type { default as AjvClass, ErrorObject, ValidateFunction } from "ajv";

/** The part of a structural schema the API server validates with (other keywords are carried and ignored). */
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
    default?: unknown;
    "x-kubernetes-int-or-string"?: boolean;
    "x-kubernetes-preserve-unknown-fields"?: boolean;
    "x-kubernetes-embedded-resource"?: boolean;
    [keyword: string]: unknown;
}

/** One violation: the field's path (`spec.replicas`, `spec.items[2]`) and what is wrong, a string value by its length. */
export interface SchemaViolation {
    readonly path: string;
    readonly message: string;
}

export interface ValidatorOptions {
    /** `ignore`: fields the schema does not name are pruned (the API server's write); `refuse`: they are violations. @default "ignore" */
    readonly unknownFields?: "ignore" | "refuse";
    /** The schema is a CRD version's root: `apiVersion`, `kind` and `metadata` are the API server's, whatever it says. @default false */
    readonly root?: boolean;
}

export type StructuralValidator = (value: unknown) => SchemaViolation[];

/**
 * kube-openapi's string formats that can refuse a value (pkg/validation/strfmt/default.go), as
 * its regular expressions and parsers accept them. Others (date-time, hostname, email...) are
 * registered as accepting everything, as is any format the registry does not know.
 */
const FORMATS: Record<string, (value: string) => boolean> = {
    // The last quantum is required: the API server refuses "" (the real tier found it).
    byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(v),
    ipv4: isIPv4,
    uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
};

/**
 * kube-openapi's ipv4: any address Kubernetes' lenient IP parser reads whose text holds a dot. So an
 * IPv6 address ending in dotted IPv4 passes (`::ffff:1.2.3.4`), and octets may carry leading zeros
 * (`01.2.3.4`); the real tier's dry-runs found both.
 */
function isIPv4(v: string): boolean {
    return isDottedQuad(v) || isIPv6WithDottedTail(v);
}

function isDottedQuad(v: string): boolean {
    const octets = v.split(".");
    return octets.length === 4 && octets.every((octet) => /^\d+$/.test(octet) && Number(octet) <= 255);
}

/** Eight 16-bit groups, the last two as a dotted quad, `::` standing for at least one zero group. */
function isIPv6WithDottedTail(v: string): boolean {
    const halves = v.split("::");
    if (halves.length > 2) return false;
    const groups = halves.map((half) => (half === "" ? [] : half.split(":")));
    const all = groups.flat();
    const tail = all.pop();
    if (tail === undefined || !isDottedQuad(tail) || !all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
    if (groups[groups.length - 1].length === 0) return false;
    const counted = all.length + 2;
    return halves.length === 2 ? counted < 8 : counted === 8;
}

/**
 * The string formats the API server keeps in a CRD schema (apiextensions-apiserver
 * pkg/apiserver/validation/formats.go, `supportedVersionedFormats` up to 1.34; compared without
 * dashes, as there). Any other is dropped before validation.
 */
const KEPT_STRING_FORMATS: ReadonlySet<string> = new Set(
    [
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
        "quantity",
        "k8s-short-name",
        "k8s-long-name",
    ].map((f) => f.replace(/-/g, "")),
);

let instance: AjvClass | undefined;

/** ajv, loaded on first use: most runs validate nothing (the pre-flight only on an upgrade). */
function ajv(): AjvClass {
    if (!instance) {
        const Ajv = (require("ajv") as { default: typeof AjvClass }).default;
        instance = new Ajv({
            strict: false,
            allErrors: true,
            verbose: true,
            logger: false,
            validateFormats: true,
            // Most schemas are compiled to validate a handful of objects (the pre-flight, the render,
            // the catalog's thousands of CRDs): ajv's optimizer passes cost more than they save there
            // (the first 200 CRD versions of ../shared/testdata/community-bundles, by operator name,
            // compiled in one process: 3.6 s with them, 2.1 s without; same answers, the code differs only).
            code: { regExp: lenientRegExp, optimize: false },
        });
        instance.addKeyword({
            keyword: MULTIPLE_OF,
            type: "number",
            schemaType: "object",
            validate: (m: Factor, data: number) => m.inRange && kubeMultipleOf(m.factor, data),
        });
        instance.addKeyword({
            keyword: MINIMUM,
            type: "number",
            schemaType: "object",
            validate: (b: Bound, data: number) => b.inRange && kubeBound(b, data, 1),
        });
        instance.addKeyword({
            keyword: MAXIMUM,
            type: "number",
            schemaType: "object",
            validate: (b: Bound, data: number) => b.inRange && kubeBound(b, data, -1),
        });
        instance.addKeyword({
            keyword: RANGE,
            type: "number",
            schemaType: "object",
            // A fraction on an integer field is the type check's refusal; this one names the range.
            validate: (r: Range, data: number) =>
                (r.type === "integer" && !Number.isInteger(data)) || constraintInRange(data, r.type, r.format),
        });
        for (const [name, check] of Object.entries(FORMATS)) {
            instance.addFormat(name, { type: "string", validate: check });
        }
    }
    return instance;
}

/**
 * Patterns as the API server's RE2 reads them, as far as JavaScript can: with the `u` flag, else
 * without it (`\-` is an identity escape RE2 and non-unicode JavaScript accept), else a pattern
 * that matches everything (never a false refusal; RE2 accepts what JavaScript cannot compile).
 */
const lenientRegExp = Object.assign(
    (pattern: string, flags: string): RegExp => {
        for (const candidate of [flags, flags.replace("u", "")]) {
            try {
                return new RegExp(pattern, candidate);
            } catch {
                // the next candidate
            }
        }
        return new RegExp("");
    },
    { code: "new RegExp" },
);

/** ajv's keywords for kube-openapi's multipleOf, minimum and maximum (ajv's own differ on integers, below). */
const MULTIPLE_OF = "x-kube-multipleOf";
const MINIMUM = "x-kube-minimum";
const MAXIMUM = "x-kube-maximum";
/** The value itself in its format's range (numberValidator checks the value as it checks each bound). */
const RANGE = "x-kube-range";

interface Range {
    type: string;
    format: unknown;
}

/**
 * A numeric constraint and whether kube-openapi finds it in the range of the schema's type and
 * format (validate/values.go `IsValueValidAgainstRange`). When it is not (a fraction or an out-of-
 * range number on an integer schema), numberValidator.Validate keeps that error beside the check
 * it still makes, so the API server refuses every number there.
 */
interface Bound {
    limit: number;
    exclusive: boolean;
    inRange: boolean;
}

interface Factor {
    factor: number;
    inRange: boolean;
}

/**
 * `IsValueValidAgainstRange` for a number (a constraint or the value itself) of a schema of `type`
 * and `format`: an integer schema's must parse as an integer of its format, a `float` number's as a
 * float32. The API server keeps only int32 and int64 on an integer and float and double on a number
 * (apiextensions-apiserver pkg/apiserver/validation/formats.go, `StripUnsupportedFormatsPostProcessorForVersion`):
 * uint32 and uint64 check as int64. The number is parsed from Go's shortest decimal text of it, as
 * JavaScript prints it too: -2^63 reads "-9223372036854776000", past int64 (the real tier found it).
 */
function constraintInRange(value: number, type: unknown, format: unknown): boolean {
    if (type === "number") return format !== "float" || Number.isFinite(Math.fround(value));
    if (type !== "integer") return true;
    if (!Number.isInteger(value) || Math.abs(value) >= 1e21) return false;
    const bits = format === "int32" ? 31n : 63n;
    const decimal = BigInt(String(value));
    return decimal >= -(2n ** bits) && decimal < 2n ** bits;
}

/**
 * kube-openapi's `MinimumNativeType`/`MaximumNativeType` (validate/values.go): an integer value is
 * compared with the bound cut to an integer (`int64(min)`: 0 passes `minimum: 0.5`), a float with the
 * bound. `sign` 1 checks a minimum, -1 a maximum.
 */
function kubeBound(bound: Bound, data: number, sign: 1 | -1): boolean {
    const limit = Number.isInteger(data) ? Math.trunc(bound.limit) : bound.limit;
    const difference = sign * (data - limit);
    return bound.exclusive ? difference > 0 : difference >= 0;
}

/**
 * kube-openapi's multipleOf (pkg/validation/validate/values.go, `MultipleOfNativeType`): an
 * integer value is checked against the factor cut to an integer (so a factor below 1 refuses every
 * integer: "must be positive: 0"), a float as a float (`1/factor*data` for a factor below 1, else
 * `data/factor`, a JSON integer within 1e-9).
 */
function kubeMultipleOf(factor: number, data: number): boolean {
    if (Number.isInteger(data)) {
        const integerFactor = Math.trunc(factor);
        return integerFactor > 0 && data % integerFactor === 0;
    }
    if (factor <= 0) return false;
    return isJsonInteger(factor < 1 ? (1 / factor) * data : data / factor);
}

/**
 * go-openapi swag's `IsFloat64AJSONInteger` as the API server runs it (the real tier's dry-runs:
 * 1000000.0015 passes for a factor of 1, 2.9999999999 and 1e-10 do not): within ±(2^53-1), equal to
 * an integer, or above its integer part by less than 1e-9 of the two summed. A negative fraction
 * never passes (Go's conversion of it to uint64 does not truncate).
 */
function isJsonInteger(f: number): boolean {
    if (!Number.isFinite(f) || Math.abs(f) > 2 ** 53 - 1) return false;
    if (Number.isInteger(f)) return true;
    const whole = Math.trunc(f);
    if (f < 0 || whole === 0) return false;
    return (f - whole) / (f + whole) < 1e-9;
}

const compiled = new Map<string, { validate: ValidateFunction; translated: Record<string, unknown> }>();
/**
 * A render validates each CRD version once per run; a bound keeps a long-lived host from holding
 * every schema it ever saw. Large enough for the whole community catalog (1,087 CRD versions, in
 * both unknown-field modes), which validates each bundle's schemas in every install mode. ajv
 * keeps every schema it compiled (its `_cache`, keyed by the schema object) until `removeSchema`,
 * so an evicted entry is removed there too, or the bound would free nothing.
 */
const COMPILED_ENTRIES = 4096;

/** A validator for one schema (compiled once per schema text and options; least recently used evicted first). */
export function structuralValidator(schema: JsonSchema, options: ValidatorOptions = {}): StructuralValidator {
    const unknownFields = options.unknownFields ?? "ignore";
    const key = `${unknownFields}|${options.root === true}|${JSON.stringify(schema)}`;
    let entry = compiled.get(key);
    if (entry) {
        compiled.delete(key);
    } else {
        const translated = translate(schema, unknownFields, options.root === true);
        entry = { validate: ajv().compile(translated), translated };
        if (compiled.size >= COMPILED_ENTRIES) {
            const [oldest, evicted] = compiled.entries().next().value as [string, { translated: Record<string, unknown> }];
            compiled.delete(oldest);
            ajv().removeSchema(evicted.translated);
        }
    }
    compiled.set(key, entry);
    const check = entry.validate;
    const root = options.root === true;
    return (value) => {
        const pruned = prune(value, schema, unknownFields === "ignore", root);
        const violations = check(pruned) ? [] : violationsOf(check.errors ?? [], pruned);
        return violations;
    };
}

/** Every violation of `schema` by `value` (unknown fields pruned, as on a write), in field order. */
export function schemaViolations(value: unknown, schema: JsonSchema, options: ValidatorOptions = {}): SchemaViolation[] {
    return structuralValidator(schema, options)(value);
}

/** The schema as ajv (JSON Schema draft-07) reads what Kubernetes means. */
function translate(schema: JsonSchema, unknownFields: "ignore" | "refuse", root: boolean): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const intOrString = schema["x-kubernetes-int-or-string"] === true;
    // kube-openapi's type check lets an array through where the schema names a format and its type is
    // not numeric (validate/type.go: "format" with a string or slice value returns before the check),
    // but the API server first drops a format it does not support (formats.go): a string's kept
    // formats only, never a boolean's or an object's.
    const arrayThroughFormat =
        schema.type === "string" && typeof schema.format === "string" && KEPT_STRING_FORMATS.has(schema.format.replace(/-/g, ""));
    const types = intOrString ? ["integer", "string"] : schema.type ? [schema.type, ...(arrayThroughFormat ? ["array"] : [])] : [];
    if (types.length > 0) out.type = schema.nullable ? [...types, "null"] : types.length === 1 ? types[0] : types;
    for (const keyword of [
        "enum",
        "required",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
    ] as const) {
        if (schema[keyword] !== undefined) out[keyword] = schema[keyword];
    }
    // No null added to a nullable field's enum: kube-openapi's SchemaValidator runs the enum check on
    // a null too (validate/schema.go: type and common validators for nil data), so the API server
    // refuses null unless the enum lists it (the real tier's dry-run found this).
    const inRange = (value: number) => constraintInRange(value, schema.type, schema.format);
    // kube-openapi's multipleOf alone: ajv's own refuses 2 for a factor of 1.5 and 0.3 for 0.1,
    // which the API server accepts (tests/real/structural-schema.real.ts found both).
    if (typeof schema.multipleOf === "number") out[MULTIPLE_OF] = { factor: schema.multipleOf, inRange: inRange(schema.multipleOf) };
    if (typeof schema.minimum === "number")
        out[MINIMUM] = { limit: schema.minimum, exclusive: schema.exclusiveMinimum === true, inRange: inRange(schema.minimum) };
    if (typeof schema.maximum === "number")
        out[MAXIMUM] = { limit: schema.maximum, exclusive: schema.exclusiveMaximum === true, inRange: inRange(schema.maximum) };
    if (schema.type === "integer" || schema.type === "number") out[RANGE] = { type: schema.type, format: schema.format };
    if (typeof schema.pattern === "string") out.pattern = schema.pattern;
    if (typeof schema.format === "string" && FORMATS[schema.format]) out.format = schema.format;
    if (schema.properties || root) {
        const properties: Record<string, unknown> = {};
        for (const [name, child] of Object.entries(schema.properties ?? {})) properties[name] = translate(child, unknownFields, false);
        if (root) {
            // The API server validates these itself (ObjectMeta), never against the CRD's schema.
            for (const name of ["apiVersion", "kind", "metadata"]) properties[name] = {};
        }
        out.properties = properties;
    }
    if (schema.items && typeof schema.items === "object") out.items = translate(schema.items, unknownFields, false);
    if (typeof schema.additionalProperties === "object") {
        out.additionalProperties = translate(schema.additionalProperties, unknownFields, false);
    } else if (
        unknownFields === "refuse" &&
        schema.additionalProperties !== true &&
        schema["x-kubernetes-preserve-unknown-fields"] !== true &&
        (schema.properties || root || schema.type === "object")
    ) {
        out.additionalProperties = false;
    }
    for (const combinator of ["allOf", "anyOf", "oneOf"] as const) {
        const parts = schema[combinator];
        if (Array.isArray(parts)) out[combinator] = parts.map((part) => translate(part, "ignore", false));
    }
    if (schema.not && typeof schema.not === "object") out.not = translate(schema.not, "ignore", false);
    return out;
}

/**
 * The value as the API server validates it after decoding: a null in an object field or array item
 * whose schema is not nullable replaced by that schema's default, or (object fields, no default)
 * dropped; a field the schema gives a default and the object lacks set to it
 * (apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go `Default`,
 * `isNonNullableNull`; `PruneNonNullableNullsWithoutDefaults`); and, when `unknown` is true, every
 * field the schema does not name dropped (`pruning.Prune`), recursively. `x-kubernetes-preserve-
 * unknown-fields` keeps a level's unknown fields, a CRD root keeps apiVersion, kind and metadata.
 */
function prune(value: unknown, schema: JsonSchema | undefined, unknown: boolean, root = false): unknown {
    if (!schema || value === null || typeof value !== "object") return value;
    if (Array.isArray(value)) {
        const items = schema.items;
        return items && typeof items === "object"
            ? value.map((item) => prune(item === null && isDefaultedNull(items) ? items.default : item, items, unknown))
            : value;
    }
    const out: Record<string, unknown> = {};
    const additional = typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined;
    const keepsUnknown =
        !unknown ||
        schema["x-kubernetes-preserve-unknown-fields"] === true ||
        schema.additionalProperties === true ||
        additional !== undefined ||
        (!schema.properties && schema.type !== "object");
    for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        if (root && (name === "apiVersion" || name === "kind" || name === "metadata")) {
            out[name] = child;
            continue;
        }
        const childSchema = schema.properties?.[name] ?? additional;
        if (!childSchema && !keepsUnknown) continue;
        if (child === null && childSchema && childSchema.nullable !== true && childSchema.default === undefined) continue;
        out[name] = prune(
            child === null && childSchema && isDefaultedNull(childSchema) ? childSchema.default : child,
            childSchema,
            unknown,
        );
    }
    for (const [name, child] of Object.entries(schema.properties ?? {})) {
        if (child.default !== undefined && !(name in out)) {
            out[name] = prune(child.default, child, unknown);
        }
    }
    return out;
}

/** A null the API server replaces by its schema's default (`isNonNullableNull` with a default to put there). */
function isDefaultedNull(schema: JsonSchema): boolean {
    return schema.nullable !== true && schema.default !== undefined;
}

/** ajv's errors as violations: the field path, the keyword's rule, a string value by its length. */
function violationsOf(errors: readonly ErrorObject[], value: unknown): SchemaViolation[] {
    const seen = new Set<string>();
    const out: SchemaViolation[] = [];
    for (const error of errors) {
        if (error.keyword === "if") continue;
        const segments = error.instancePath
            .split("/")
            .slice(1)
            .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
        const at = valueAt(value, segments);
        let path = segments
            .map((s) => (/^\d+$/.test(s) ? `[${s}]` : `.${s}`))
            .join("")
            .replace(/^\./, "");
        const params = error.params as Record<string, unknown>;
        const outOfRange = (constraint: string) =>
            `the schema's ${constraint} is not an integer of this integer field's range, so the API server refuses every number here`;
        let message: string;
        switch (error.keyword) {
            case "type":
                message = `${show(at)} is not of type ${Array.isArray(params.type) ? (params.type as string[]).filter((t) => t !== "null").join(" or ") : String(params.type)}`;
                break;
            case "required":
                message = `required field ${JSON.stringify(params.missingProperty)} is missing`;
                break;
            case "additionalProperties":
                path = `${path ? `${path}.` : ""}${String(params.additionalProperty)}`;
                message = "is not in the schema (the API server would prune it)";
                break;
            case "enum":
                message = `${show(at)} is not one of ${((params.allowedValues as unknown[]) ?? []).map((v) => JSON.stringify(v)).join(", ")}`;
                break;
            case MINIMUM: {
                const bound = error.schema as Bound;
                message = bound.inRange
                    ? `${show(at)} is ${bound.exclusive ? "not above" : "below"} the minimum ${bound.limit}`
                    : outOfRange(`minimum ${bound.limit}`);
                break;
            }
            case MAXIMUM: {
                const bound = error.schema as Bound;
                message = bound.inRange
                    ? `${show(at)} is ${bound.exclusive ? "not below" : "above"} the maximum ${bound.limit}`
                    : outOfRange(`maximum ${bound.limit}`);
                break;
            }
            case MULTIPLE_OF: {
                const { factor, inRange } = error.schema as Factor;
                message = inRange
                    ? `${show(at)} is not a multiple of ${factor}${Number.isInteger(at) && Math.trunc(factor) <= 0 ? " (the API server checks an integer against the factor cut to an integer, 0 here: it refuses every integer)" : ""}`
                    : outOfRange(`multipleOf ${factor}`);
                break;
            }
            case RANGE: {
                const { type, format } = error.schema as Range;
                message = `${show(at)} is out of the range of ${type === "number" ? "float" : format === "int32" ? "int32" : "int64"}`;
                break;
            }
            case "minLength":
                message = `${show(at)} is shorter than ${String(params.limit)} characters`;
                break;
            case "maxLength":
                message = `${show(at)} is longer than ${String(params.limit)} characters`;
                break;
            case "pattern":
                message = `${show(at)} does not match the pattern ${JSON.stringify(params.pattern)}`;
                break;
            case "format":
                message = `${show(at)} is not a valid ${String(params.format)}`;
                break;
            case "minItems":
                message = `${show(at)}, fewer than the minimum ${String(params.limit)}`;
                break;
            case "maxItems":
                message = `${show(at)}, more than the maximum ${String(params.limit)}`;
                break;
            case "uniqueItems":
                message = "items are not unique";
                break;
            case "minProperties":
                message = `${fieldCount(at)}, fewer than the minimum ${String(params.limit)}`;
                break;
            case "maxProperties":
                message = `${fieldCount(at)}, more than the maximum ${String(params.limit)}`;
                break;
            case "anyOf":
                message = `${show(at)} matches none of the anyOf schemas`;
                break;
            case "oneOf":
                message = `${show(at)} matches ${Array.isArray(params.passingSchemas) ? (params.passingSchemas as number[]).length : 0} of the oneOf schemas, not exactly one`;
                break;
            case "not":
                message = `${show(at)} matches the schema under not`;
                break;
            default:
                message = `${show(at)} fails ${error.keyword}`;
        }
        const line = `${path || "<root>"}|${message}`;
        if (!seen.has(line)) {
            seen.add(line);
            out.push({ path: path || "<root>", message });
        }
    }
    return out;
}

function valueAt(value: unknown, segments: readonly string[]): unknown {
    let current = value;
    for (const segment of segments) {
        current = current !== null && typeof current === "object" ? (current as Record<string, unknown>)[segment] : undefined;
    }
    return current;
}

/** "1 field", "3 fields": an object's size in a message. */
function fieldCount(value: unknown): string {
    const count = Object.keys((value as object) ?? {}).length;
    return `${count} field${count === 1 ? "" : "s"}`;
}

/** A value for a message, without its text: strings by length; numbers, booleans and null as they are. */
function show(value: unknown): string {
    if (typeof value === "string") {
        const length = [...value].length;
        return `a string of ${length} character${length === 1 ? "" : "s"}`;
    }
    if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
    if (value !== null && typeof value === "object") return "an object";
    return String(value);
}
