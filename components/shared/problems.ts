/**
 * One problem found in user input (stack config, a CSV, a webhook description...).
 * Problems are collected, never thrown one at a time, so that an admin sees every
 * mistake in a single run and nothing is registered while any problem remains.
 */
import { compareText } from "./order";
export interface Problem {
    /** Where the problem is, as a config path without namespace, e.g. `aws.userTags["kubernetes.io/x"]`. */
    path: string;
    /** What is wrong: names the rule and, where there is one, the offending value. */
    message: string;
}

/** The Pulumi config namespace of this project; every config problem is reported under it. */
export const CONFIG_NAMESPACE = "cluster-platform";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Formats a path the way `pulumi config set --path` accepts it:
 * identifiers joined with dots, other keys as `["key"]`, array indexes as `[n]`.
 */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
    let out = "";
    for (const segment of path) {
        if (typeof segment === "number") {
            out += `[${segment}]`;
        } else {
            const key = String(segment);
            if (IDENTIFIER.test(key)) {
                out += out === "" ? key : `.${key}`;
            } else {
                out += `[${JSON.stringify(key)}]`;
            }
        }
    }
    return out;
}

/** Renders a value for a message: short, single-line, JSON-quoted strings. */
export function describeValue(value: unknown): string {
    if (value === undefined) {
        return "nothing";
    }
    let text: string;
    try {
        text = JSON.stringify(value) ?? String(value);
    } catch {
        text = String(value);
    }
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** `cluster-platform:<path>: <message>`, the line format of every validation report. */
export function formatProblem(problem: Problem): string {
    const where = problem.path === "" ? CONFIG_NAMESPACE : `${CONFIG_NAMESPACE}:${problem.path}`;
    return `${where}: ${problem.message}`;
}

/** The whole report, one problem a line, in a stable order (by path, then message). */
export function formatReport(problems: ReadonlyArray<Problem>): string {
    const lines = sortProblems(problems).map(formatProblem);
    const noun = problems.length === 1 ? "problem" : "problems";
    return [`invalid configuration: ${problems.length} ${noun}`, ...lines.map((l) => `  - ${l}`)].join("\n");
}

export function sortProblems(problems: ReadonlyArray<Problem>): Problem[] {
    return [...problems].sort((a, b) => compareText(a.path, b.path) || compareText(a.message, b.message));
}

/** Thrown (once, with every problem) when input is invalid. Carries no Pulumi types. */
export class ValidationError extends Error {
    constructor(readonly problems: ReadonlyArray<Problem>) {
        super(formatReport(problems));
        this.name = "ValidationError";
    }
}

/** Prefixes every problem's path, for validators that work on a sub-tree. */
export function withPathPrefix(prefix: string, problems: ReadonlyArray<Problem>): Problem[] {
    return problems.map((p) => ({
        ...p,
        path: p.path === "" ? prefix : p.path.startsWith("[") ? `${prefix}${p.path}` : `${prefix}.${p.path}`,
    }));
}
