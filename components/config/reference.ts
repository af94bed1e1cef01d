/**
 * Documentation generated from the schema, so the README's config reference and
 * `Pulumi.yaml`'s `config:` block can never drift from what the program accepts.
 */
import { z } from "zod";
import { CONFIG_NAMESPACE } from "../shared/problems";
import { SECTION_NAMES, SECTIONS } from "./schema";

interface JsonSchema {
    type?: string | string[];
    description?: string;
    default?: unknown;
    enum?: unknown[];
    properties?: Record<string, JsonSchema>;
    required?: string[];
    items?: JsonSchema;
    additionalProperties?: JsonSchema | boolean;
    anyOf?: JsonSchema[];
    minimum?: number;
    maximum?: number;
}

export interface ReferenceRow {
    key: string;
    type: string;
    required: boolean;
    default?: string;
    description: string;
}

function jsonSchemaOf(name: keyof typeof SECTIONS): JsonSchema {
    return z.toJSONSchema(SECTIONS[name], { io: "input", unrepresentable: "any" }) as JsonSchema;
}

function typeOf(schema: JsonSchema): string {
    if (schema.enum) {
        return schema.enum.map((v) => JSON.stringify(v)).join(" \\| ");
    }
    if (schema.anyOf) {
        return schema.anyOf.map(typeOf).join(" \\| ");
    }
    const type = Array.isArray(schema.type) ? schema.type.join(" \\| ") : schema.type ?? "any";
    if (type === "array" && schema.items) {
        return `list of ${typeOf(schema.items)}`;
    }
    if (type === "integer" && schema.minimum !== undefined && schema.maximum !== undefined && schema.maximum < 1e6) {
        return `integer ${schema.minimum}-${schema.maximum}`;
    }
    if (type === "object" && schema.additionalProperties && typeof schema.additionalProperties === "object") {
        return `map of ${typeOf(schema.additionalProperties)}`;
    }
    return type;
}

function walk(key: string, schema: JsonSchema, required: boolean, rows: ReferenceRow[]): void {
    rows.push({
        key,
        type: typeOf(schema),
        required,
        default: schema.default === undefined ? undefined : JSON.stringify(schema.default),
        description: schema.description ?? "",
    });
    const objectSchema = schema.type === "array" && schema.items ? schema.items : schema;
    const prefix = schema.type === "array" ? `${key}[]` : key;
    for (const [child, childSchema] of Object.entries(objectSchema.properties ?? {})) {
        walk(`${prefix}.${child}`, childSchema, (objectSchema.required ?? []).includes(child), rows);
    }
}

/** Every key and nested field, depth-first in declaration order. */
export function configReferenceRows(): ReferenceRow[] {
    const rows: ReferenceRow[] = [];
    for (const name of SECTION_NAMES) {
        walk(`${CONFIG_NAMESPACE}:${name}`, jsonSchemaOf(name), name === "cluster", rows);
    }
    return rows;
}

/** The README's config reference table (Markdown). */
export function configReferenceMarkdown(): string {
    const escape = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");
    const lines = ["| key | type | required | default | description |", "| --- | --- | --- | --- | --- |"];
    for (const row of configReferenceRows()) {
        lines.push(
            `| \`${row.key}\` | ${row.type} | ${row.required ? "yes" : "no"} | ${row.default ? `\`${escape(row.default)}\`` : ""} | ${escape(row.description)} |`,
        );
    }
    return lines.join("\n");
}

/**
 * The `config:` block of Pulumi.yaml. Pulumi's project-config schema types a key only as
 * string, integer, boolean or an array of those; every key here is an object or a list of
 * objects, so each is declared with its description alone and typed by the schema above.
 */
export function projectConfigDeclarations(): Record<string, { description: string }> {
    const out: Record<string, { description: string }> = {};
    for (const name of SECTION_NAMES) {
        out[name] = { description: jsonSchemaOf(name).description ?? "" };
    }
    return out;
}
