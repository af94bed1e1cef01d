/**
 * The `x-kubernetes-validations` of a CRD's structural schema, evaluated as the API server does
 * on create: every rule at a schema node runs with `self` bound to the value at that node (for
 * `items` and `additionalProperties`, each element), and a rule that yields false refuses the
 * object with its `message` (kubernetes staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/
 * schema/cel/validation.go; the root node's `self` includes metadata.name and namespace). CEL is
 * evaluated by @marcbachmann/cel-js, a maintained implementation of the CEL spec.
 *
 * Not judged here, as a create is not: transition rules (they read `oldSelf`, which only an
 * update has). Not judged either: a rule the evaluator cannot evaluate (one of Kubernetes' own
 * CEL libraries: quantity, url, ip...) and a value holding "[secret]"/"[unknown]": the render
 * cannot be sure of its answer, so it gives none.
 */
import type { ParseResult } from "@marcbachmann/cel-js";
import { isMarker } from "./present";

// An ES module; Node.js 20.19+ loads it through require, jest through its transform (jest.config.js).
const cel = require("@marcbachmann/cel-js") as typeof import("@marcbachmann/cel-js");

type Schema = Record<string, unknown>;

interface Rule {
    rule: string;
    message?: string;
}

export interface CelProblem {
    /** Where the rule applies: `(root)`, `spec.items[0]`... */
    path: string;
    message: string;
}

const parsed = new Map<string, ParseResult | null>();

function compiled(rule: string): ParseResult | null {
    if (!parsed.has(rule)) {
        try {
            parsed.set(rule, cel.parse(rule));
        } catch {
            parsed.set(rule, null);
        }
    }
    return parsed.get(rule) ?? null;
}

/** JSON as CEL sees a Kubernetes object: integers are CEL ints (int64), not doubles. */
function celValue(value: unknown): unknown {
    if (typeof value === "number" && Number.isInteger(value)) {
        return BigInt(value);
    }
    if (Array.isArray(value)) {
        return value.map(celValue);
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, celValue(v)]));
    }
    return value;
}

function holdsMarker(value: unknown): boolean {
    if (isMarker(value)) {
        return true;
    }
    if (Array.isArray(value)) {
        return value.some(holdsMarker);
    }
    return value !== null && typeof value === "object" && Object.values(value).some(holdsMarker);
}

function rulesOf(schema: Schema): Rule[] {
    const rules = schema["x-kubernetes-validations"];
    return Array.isArray(rules) ? (rules as Rule[]).filter((r) => typeof r?.rule === "string") : [];
}

/** The rule's verdict on `self`: false (refused), true, or undefined (not judged). */
export function evaluateRule(rule: string, self: unknown): boolean | undefined {
    if (/\boldSelf\b/.test(rule) || holdsMarker(self)) {
        return undefined;
    }
    const expression = compiled(rule);
    if (expression === null) {
        return undefined;
    }
    try {
        const verdict: unknown = expression({ self: celValue(self) });
        return typeof verdict === "boolean" ? verdict : undefined;
    } catch {
        return undefined;
    }
}

/** Every rule of `schema` (and below it) that `value` breaks. */
export function celProblems(schema: Schema, value: unknown, at = ""): CelProblem[] {
    if (value === undefined || value === null) {
        return [];
    }
    const problems: CelProblem[] = [];
    for (const rule of rulesOf(schema)) {
        if (evaluateRule(rule.rule, value) === false) {
            problems.push({ path: at || "(root)", message: rule.message ?? `failed rule: ${rule.rule}` });
        }
    }
    const properties = schema.properties as Record<string, Schema> | undefined;
    if (properties && typeof value === "object" && !Array.isArray(value)) {
        for (const [key, child] of Object.entries(properties)) {
            problems.push(...celProblems(child, (value as Record<string, unknown>)[key], at ? `${at}.${key}` : key));
        }
    }
    const items = schema.items as Schema | undefined;
    if (items && Array.isArray(value)) {
        value.forEach((element, index) => problems.push(...celProblems(items, element, `${at}[${index}]`)));
    }
    const additional = schema.additionalProperties;
    if (additional && typeof additional === "object" && typeof value === "object" && !Array.isArray(value)) {
        for (const [key, element] of Object.entries(value as Record<string, unknown>)) {
            if (!properties || !(key in properties)) {
                problems.push(...celProblems(additional as Schema, element, at ? `${at}.${key}` : key));
            }
        }
    }
    return problems;
}
