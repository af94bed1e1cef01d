/**
 * A policy's config checked against its JSON schema, every problem at once, each naming the key,
 * the value and the rule. The CLI checks a config against the schema a pack sends (gojsonschema,
 * pulumi pkg/resource/analyzer/config.go `validatePolicyConfig`), but a pack enabled from Pulumi
 * Cloud, or started by a harness, gets whatever it is sent: a string where a list belongs would
 * otherwise surface as a TypeError deep in a rule. The subset of JSON Schema the packs' knobs use:
 * type, enum, items, minItems, uniqueItems, minimum, maximum, minLength, properties, required,
 * additionalProperties: false.
 */
import type { PolicyConfigJSONSchema, PolicyConfigJSONSchemaDefinition } from "@pulumi/policy/schema";

const describe = (value: unknown): string => (value === undefined ? "undefined" : JSON.stringify(value));

function typeOf(value: unknown): string {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
    return typeof value;
}

function hasType(value: unknown, type: string): boolean {
    const actual = typeOf(value);
    return actual === type || (type === "number" && actual === "integer");
}

/** Every way `value` (at `path`, e.g. `k8s-no-broad-grants.allowedRoles`) breaks `schema`. */
export function schemaProblems(path: string, value: unknown, definition: PolicyConfigJSONSchemaDefinition): string[] {
    if (definition === true) return [];
    if (definition === false) return [`${path}: ${describe(value)} is not allowed here`];
    const schema: PolicyConfigJSONSchema = definition;
    const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length > 0 && !types.some((t) => hasType(value, t))) {
        // A list names its items' type when the schema gives one ("a list of strings"): the rule, whole.
        const itemType = typeof schema.items === "object" && !Array.isArray(schema.items) ? schema.items.type : undefined;
        const list = typeof itemType === "string" ? `a list of ${itemType}s` : "a list";
        return [
            `${path}: ${describe(value)} must be ${types.map((t) => (t === "array" ? list : t === "object" || t === "integer" ? `an ${t}` : `a ${t}`)).join(" or ")}`,
        ];
    }
    const problems: string[] = [];
    if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
        problems.push(`${path}: ${describe(value)} must be one of ${schema.enum.map(describe).join(", ")}`);
    }
    if (typeof value === "number") {
        if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${path}: ${value} must be at least ${schema.minimum}`);
        if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${path}: ${value} must be at most ${schema.maximum}`);
    }
    if (typeof value === "string" && schema.minLength !== undefined && value.length < schema.minLength) {
        problems.push(
            `${path}: ${describe(value)} must be at least ${schema.minLength} character${schema.minLength === 1 ? "" : "s"} long`,
        );
    }
    if (Array.isArray(value)) {
        if (schema.minItems !== undefined && value.length < schema.minItems)
            problems.push(`${path}: ${describe(value)} must have at least ${schema.minItems} item(s)`);
        if (schema.uniqueItems) {
            const seen = new Set<string>();
            for (const item of value) {
                const key = JSON.stringify(item);
                if (seen.has(key)) problems.push(`${path}: ${key} appears more than once; items must be unique`);
                seen.add(key);
            }
        }
        if (schema.items !== undefined && !Array.isArray(schema.items)) {
            value.forEach((item, i) =>
                problems.push(...schemaProblems(`${path}[${i}]`, item, schema.items as PolicyConfigJSONSchemaDefinition)),
            );
        }
    }
    if (typeOf(value) === "object") {
        const object = value as Record<string, unknown>;
        for (const key of schema.required ?? []) {
            if (object[key] === undefined) problems.push(`${path}.${key}: is required`);
        }
        for (const [key, item] of Object.entries(object)) {
            const property = schema.properties?.[key];
            if (property !== undefined) {
                problems.push(...schemaProblems(`${path}.${key}`, item, property));
            } else if (schema.additionalProperties === false) {
                problems.push(
                    `${path}.${key}: ${JSON.stringify(key)} is not a key here (its keys: ${Object.keys(schema.properties ?? {}).join(", ")})`,
                );
            }
        }
    }
    return problems;
}
