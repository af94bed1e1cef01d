/**
 * Documentation generated from the schema, so docs/config-reference.md and
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
    const type = Array.isArray(schema.type) ? schema.type.join(" \\| ") : (schema.type ?? "any");
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

/** The config reference table of docs/config-reference.md (Markdown). */
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

/** A key's declaration in Pulumi.yaml's `config:` block, as the project-config schema allows it. */
export interface ProjectConfigDeclaration {
    type: ProjectConfigType;
    items?: ProjectConfigItems;
    default?: unknown;
    description: string;
}

/** The types Pulumi's project-config schema accepts (`simpleConfigType` in its project.json). */
export type ProjectConfigType = "string" | "integer" | "boolean" | "array" | "object";
export interface ProjectConfigItems {
    type: ProjectConfigType;
    items?: ProjectConfigItems;
}

function projectTypeOf(schema: JsonSchema, key: string): ProjectConfigType {
    const type = schema.type;
    if (type === "string" || type === "integer" || type === "boolean" || type === "array" || type === "object") {
        return type;
    }
    throw new Error(`${key}: ${JSON.stringify(type)} has no project-config type`);
}

function itemsOf(schema: JsonSchema, key: string): ProjectConfigItems | undefined {
    if (schema.type !== "array") {
        return undefined;
    }
    if (!schema.items) {
        throw new Error(`${key}: an array needs items for the project-config schema`);
    }
    const items = itemsOf(schema.items, `${key}[]`);
    return { type: projectTypeOf(schema.items, `${key}[]`), ...(items ? { items } : {}) };
}

/**
 * The `config:` block of Pulumi.yaml. The engine reads it before the program runs
 * (pulumi/pulumi pkg/workspace/config.go, mergeConfig): a key with no `default` that the stack
 * does not set is reported missing; a typed key's stack value must match its type
 * (sdk/go/common/workspace/project.go, ValidateConfigValue: `object` is a map, an `array` checks
 * each element against `items`); a missing key with a default gets the default. So every key is
 * typed, and every optional key's default is the schema's own, which parses to the same config
 * as leaving the key out. `type: object` needs CLI 3.187 (see PULUMI_CLI_VERSION_RANGE).
 */
export function projectConfigDeclarations(): Record<string, ProjectConfigDeclaration> {
    const out: Record<string, ProjectConfigDeclaration> = {};
    for (const name of SECTION_NAMES) {
        const schema = jsonSchemaOf(name);
        const items = itemsOf(schema, name);
        out[name] = {
            type: projectTypeOf(schema, name),
            ...(items ? { items } : {}),
            ...(schema.default === undefined ? {} : { default: schema.default }),
            description: schema.description ?? "",
        };
    }
    return out;
}
