import { z } from "zod";
import { describeValue, formatPath, Problem } from "../shared/problems";

/**
 * Turns zod issues into Problems whose messages name the value and the rule.
 * Schemas give custom messages for rules zod cannot phrase well (patterns, cross-field rules);
 * this covers the generic codes (types, enums, ranges, unknown keys) uniformly.
 */
export function issuesToProblems(issues: ReadonlyArray<z.core.$ZodIssue>, prefix: PropertyKey[] = []): Problem[] {
    const problems: Problem[] = [];
    for (const issue of issues) {
        const path = [...prefix, ...issue.path];
        if (issue.code === "unrecognized_keys") {
            for (const key of issue.keys) {
                problems.push({ path: formatPath([...path, key]), message: "unknown key" });
            }
            continue;
        }
        if (issue.code === "invalid_union" && issue.errors.length > 0) {
            // A union only reports that no branch matched; report the closest branch's issues instead.
            const closest = [...issue.errors].sort((a, b) => a.length - b.length)[0];
            problems.push(...issuesToProblems(closest, path));
            continue;
        }
        problems.push({ path: formatPath(path), message: messageFor(issue) });
    }
    return problems;
}

function messageFor(issue: z.core.$ZodIssue): string {
    const input = (issue as { input?: unknown }).input;
    switch (issue.code) {
        case "invalid_type":
            return input === undefined
                ? `is required (expected ${issue.expected})`
                : input === null
                  ? `expected ${issue.expected}, got null`
                  : `expected ${issue.expected}, got ${typeName(input)} ${describeValue(input)}`;
        case "invalid_value":
            return `${describeValue(input)} is not one of ${issue.values.map((v) => describeValue(v)).join(", ")}`;
        case "too_small":
            return sizeMessage(issue.origin, input, "at least", issue.minimum);
        case "too_big":
            return sizeMessage(issue.origin, input, "at most", issue.maximum);
        default:
            // Custom and pattern messages are written by the schema and already name value and rule.
            return issue.message;
    }
}

function sizeMessage(origin: string, input: unknown, bound: string, limit: number | bigint): string {
    if (origin === "string") {
        return `${describeValue(input)} has ${String(input).length} characters; must have ${bound} ${limit}`;
    }
    if (origin === "array" || origin === "set") {
        const n = Array.isArray(input) ? input.length : 0;
        return `has ${n} item${n === 1 ? "" : "s"}; must have ${bound} ${limit}`;
    }
    return `${describeValue(input)} must be ${bound} ${limit}`;
}

function typeName(value: unknown): string {
    if (value === null) {
        return "null";
    }
    return Array.isArray(value) ? "array" : typeof value;
}
