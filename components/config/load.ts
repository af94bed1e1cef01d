import { CONFIG_NAMESPACE, Problem, sortProblems } from "../shared/problems";
import { issuesToProblems } from "./messages";
import { crossSectionRules } from "./rules";
import { SECTION_INPUTS, SECTION_NAMES, SECTIONS, SectionName, StackConfig } from "./schema";

export type ValidationResult =
    { ok: true; config: StackConfig; warnings: string[] } | { ok: false; problems: Problem[]; warnings: string[] };

/**
 * Validates the whole stack config at once. `raw` maps top-level keys (without namespace)
 * to their values as the engine delivers them (already JSON-decoded). Every problem in every
 * section is reported; a valid result carries the typed config with all defaults applied.
 */
export function validateStackConfig(raw: Record<string, unknown>): ValidationResult {
    const problems: Problem[] = [];
    const warnings: string[] = [];
    const parsed: Partial<Record<SectionName, unknown>> = {};

    for (const key of Object.keys(raw).sort()) {
        if (!(SECTION_NAMES as string[]).includes(key)) {
            problems.push({ path: key, message: `unknown key (known keys: ${SECTION_NAMES.join(", ")})` });
        }
    }
    for (const name of SECTION_NAMES) {
        const input = SECTION_INPUTS[name]?.(raw[name]) ?? { value: raw[name], warnings: [] };
        warnings.push(...input.warnings);
        const result = SECTIONS[name].safeParse(input.value, { reportInput: true });
        if (result.success) {
            parsed[name] = result.data;
        } else {
            problems.push(...issuesToProblems(result.error.issues, [name]));
        }
    }
    const rules = crossSectionRules(parsed as Partial<StackConfig>);
    problems.push(...rules.problems);
    warnings.push(...rules.warnings);

    if (problems.length > 0) {
        return { ok: false, problems: sortProblems(problems), warnings };
    }
    return { ok: true, config: parsed as StackConfig, warnings };
}

/**
 * Picks this project's keys out of a flat Pulumi config map (`cluster-platform:aws` → `aws`)
 * and decodes their values: the engine passes objects and lists as JSON text, strings as-is.
 */
export function sectionsFromPulumiConfig(all: Record<string, string>): Record<string, unknown> {
    const raw: Record<string, unknown> = {};
    const prefix = `${CONFIG_NAMESPACE}:`;
    for (const [key, text] of Object.entries(all)) {
        if (!key.startsWith(prefix)) {
            continue;
        }
        raw[key.slice(prefix.length)] = decodeConfigValue(text);
    }
    return raw;
}

function decodeConfigValue(text: string): unknown {
    try {
        return JSON.parse(text);
    } catch {
        return text;
    }
}
