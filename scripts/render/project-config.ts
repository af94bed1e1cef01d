/**
 * What the Pulumi engine does with Pulumi.yaml's `config:` block before a program runs, so tests
 * and tools can apply the same rules offline. Facts from pulumi/pulumi (behaviour, not code):
 * - pkg/workspace/config.go, mergeConfig: for each declared key namespaced by the project, in
 *   sorted order, a key the stack does not set and that has neither `default` nor `value` is
 *   missing (all missing keys are reported in one error, "Stack '<stack>' is missing
 *   configuration value(s) 'a', 'b' and 'c'"); a missing key with a default gets the default; a
 *   set key of an explicitly typed declaration must match its type, else "Stack '<stack>' with
 *   configuration key '<key>' must be of type '<type>'" (the first such key fails the run).
 * - sdk/go/common/workspace/project.go, ValidateConfigValue / InferFullTypeName / Project.Validate:
 *   `string` is a string; `integer` a whole number or a string of one; `boolean` a boolean or the
 *   string "true"/"false"; `object` a map; `array` a list whose every element matches `items`
 *   (named `array<items>`); an array must declare `items`, and a default must match its type.
 */
import type { ProjectConfigItems, ProjectConfigType } from "../../components/config/reference";

export interface ProjectConfigEntry {
    type?: ProjectConfigType;
    items?: ProjectConfigItems;
    default?: unknown;
    value?: unknown;
    description?: string;
}

export interface ProjectFile {
    name: string;
    config?: Record<string, ProjectConfigEntry>;
}

function fullTypeName(type: string, items: ProjectConfigItems | undefined): string {
    return items ? `array<${fullTypeName(items.type, items.items)}>` : type;
}

/** Whether `value` (as decoded from the stack file) matches a declared type. */
export function matchesConfigType(type: string, items: ProjectConfigItems | undefined, value: unknown): boolean {
    switch (type) {
        case "string":
            return typeof value === "string";
        case "integer":
            return (typeof value === "number" && Number.isInteger(value)) || (typeof value === "string" && /^[+-]?\d+$/.test(value));
        case "boolean":
            return typeof value === "boolean" || value === "true" || value === "false";
        case "object":
            return typeof value === "object" && value !== null && !Array.isArray(value);
        default:
            return Array.isArray(value) && items !== undefined && value.every((item) => matchesConfigType(items.type, items.items, item));
    }
}

const namespacedByProject = (project: string, key: string) => !key.includes(":") || key.startsWith(`${project}:`);
const fullKey = (project: string, key: string) => (key.includes(":") ? key : `${project}:${key}`);

/** The engine's checks of the project file itself (Project.Validate), as error lines. */
export function projectFileErrors(project: ProjectFile): string[] {
    const errors: string[] = [];
    for (const [key, entry] of Object.entries(project.config ?? {})) {
        if (!namespacedByProject(project.name, key)) {
            continue;
        }
        if (entry.type === "array" && entry.items === undefined) {
            errors.push(
                `The configuration key '${key}' declares an array but does not specify the underlying type via the 'items' attribute`,
            );
        }
        if (entry.type !== undefined && entry.default !== undefined && !matchesConfigType(entry.type, entry.items, entry.default)) {
            errors.push(
                `The default value specified for configuration key '${key}' is not of the expected type '${fullTypeName(entry.type, entry.items)}'`,
            );
        }
    }
    return errors;
}

function missingKeysError(stack: string, keys: string[]): string {
    const quoted = [...keys].sort().map((k) => `'${k}'`);
    const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(", ")} and ${quoted[quoted.length - 1]}`;
    return `Stack '${stack}' is missing configuration ${keys.length === 1 ? "value" : "values"} ${list}`;
}

/**
 * The stack's config as the program receives it (`namespace:key` → decoded value, project
 * defaults applied), or the error the engine stops with before the program starts.
 */
export function applyProjectConfig(
    project: ProjectFile,
    stack: string,
    stackConfig: Record<string, unknown>,
): { ok: true; config: Record<string, unknown> } | { ok: false; error: string } {
    const config = { ...stackConfig };
    const missing: string[] = [];
    for (const key of Object.keys(project.config ?? {}).sort()) {
        const entry = (project.config ?? {})[key];
        const name = fullKey(project.name, key);
        const found = Object.prototype.hasOwnProperty.call(stackConfig, name);
        const fallback = entry.default ?? entry.value;
        if (!found && fallback === undefined) {
            if (namespacedByProject(project.name, key)) {
                missing.push(key);
            }
            continue;
        }
        if (!found) {
            config[name] = fallback;
            continue;
        }
        if (entry.type !== undefined && !matchesConfigType(entry.type, entry.items, stackConfig[name])) {
            return {
                ok: false,
                error: `Stack '${stack}' with configuration key '${key}' must be of type '${fullTypeName(entry.type, entry.items)}'`,
            };
        }
    }
    return missing.length > 0 ? { ok: false, error: missingKeysError(stack, missing) } : { ok: true, config };
}
