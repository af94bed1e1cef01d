/**
 * Semantic versions and the range syntax of `olm.skipRange`, with the rules of the library OLM
 * evaluates it with (github.com/blang/semver/v4 v4.0.0, which OLM's go.mod requires; `ParseRange`
 * in range.go, `Parse` and `Compare` in semver.go; OLM calls it in
 * pkg/controller/registry/resolver/source_registry.go and drops a range that does not parse):
 *
 * - `||` separates alternatives; inside one, comparisons separated by spaces must all hold. A space
 *   right after `>`, `<` or `=` does not separate (`>= 1.0.0` is one comparison).
 * - Comparators: `>`, `>=`, `<`, `<=`, `=`/`==`/none (equal), `!=`/`!` (not equal).
 * - A last part `x` is a wildcard: `1.2.x` is `>=1.2.0 <1.3.0`, `1.x` is `>=1.0.0 <2.0.0`, and
 *   `>1.2.x` is `>=1.3.0`, `<=1.x` is `<2.0.0`.
 * - Versions are strict: `MAJOR.MINOR.PATCH`, numbers without leading zeros, then an optional
 *   `-pre.release` (numeric identifiers without leading zeros) and `+build` (ignored in
 *   comparisons); a pre-release sorts below its release.
 */

export interface SemVer {
    readonly major: number;
    readonly minor: number;
    readonly patch: number;
    readonly pre: readonly (string | number)[];
}

const NUMBER = /^(0|[1-9]\d*)$/;
const IDENTIFIER = /^[0-9A-Za-z-]+$/;

/** A strict semantic version, or an Error saying why not. */
export function parseSemVer(text: string): SemVer | Error {
    const plus = text.indexOf("+");
    const core = plus >= 0 ? text.slice(0, plus) : text;
    if (
        plus >= 0 &&
        !text
            .slice(plus + 1)
            .split(".")
            .every((b) => IDENTIFIER.test(b))
    ) {
        return new Error(`invalid build metadata in ${JSON.stringify(text)}`);
    }
    const dash = core.indexOf("-");
    const release = dash >= 0 ? core.slice(0, dash) : core;
    const parts = release.split(".");
    if (parts.length !== 3 || !parts.every((p) => NUMBER.test(p))) {
        return new Error(`${JSON.stringify(text)} is not MAJOR.MINOR.PATCH with numbers without leading zeros`);
    }
    const pre: (string | number)[] = [];
    if (dash >= 0) {
        for (const identifier of core.slice(dash + 1).split(".")) {
            if (!IDENTIFIER.test(identifier)) {
                return new Error(`invalid pre-release identifier ${JSON.stringify(identifier)} in ${JSON.stringify(text)}`);
            }
            if (/^\d+$/.test(identifier)) {
                if (!NUMBER.test(identifier)) {
                    return new Error(`numeric pre-release identifier with a leading zero in ${JSON.stringify(text)}`);
                }
                pre.push(Number(identifier));
            } else {
                pre.push(identifier);
            }
        }
    }
    return { major: Number(parts[0]), minor: Number(parts[1]), patch: Number(parts[2]), pre };
}

/** Semantic-version precedence: -1, 0 or 1. */
export function compareSemVer(a: SemVer, b: SemVer): number {
    for (const key of ["major", "minor", "patch"] as const) {
        if (a[key] !== b[key]) {
            return a[key] < b[key] ? -1 : 1;
        }
    }
    if (a.pre.length === 0 || b.pre.length === 0) {
        return a.pre.length === b.pre.length ? 0 : a.pre.length === 0 ? 1 : -1;
    }
    for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
        const [x, y] = [a.pre[i], b.pre[i]];
        if (x === y) {
            continue;
        }
        if (typeof x !== typeof y) {
            return typeof x === "number" ? -1 : 1; // numeric identifiers sort below alphanumeric ones
        }
        return x < y ? -1 : 1;
    }
    return Math.sign(a.pre.length - b.pre.length);
}

type Comparator = (order: number) => boolean;

const COMPARATORS: Record<string, Comparator> = {
    "": (o) => o === 0,
    "=": (o) => o === 0,
    "==": (o) => o === 0,
    "!": (o) => o !== 0,
    "!=": (o) => o !== 0,
    ">": (o) => o > 0,
    ">=": (o) => o >= 0,
    "<": (o) => o < 0,
    "<=": (o) => o <= 0,
};

/** A parsed range: alternatives of comparisons that must all hold. */
export type SemVerRange = readonly (readonly { op: string; version: SemVer }[])[];

/** Splits at spaces, except a space that follows `>`, `<` or `=`; spaces inside a part are removed. */
function splitParts(text: string): string[] {
    const parts: string[] = [];
    let start = 0;
    let last = "";
    for (let i = 0; i < text.length; i++) {
        if (text[i] === " " && !">=<".includes(last || "_")) {
            // Like range.go's splitAndTrim, a one-character piece is dropped.
            if (i - start >= 2) {
                parts.push(text.slice(start, i));
            }
            start = i + 1;
        } else if (text[i] !== " ") {
            last = text[i];
        }
    }
    if (text.length - start >= 2) {
        parts.push(text.slice(start));
    }
    return parts.map((p) => p.replace(/ /g, ""));
}

/** `>=1.2.0` → [">=", "1.2.0"]: the operator is everything before the first digit. */
function splitComparison(part: string): [string, string] | Error {
    const at = part.search(/\d/);
    return at < 0 ? new Error(`no version in ${JSON.stringify(part)}`) : [part.slice(0, at).trim(), part.slice(at)];
}

/** Replaces a wildcard comparison (`1.2.x`, `>1.x`) by the plain comparisons it stands for. */
function expandWildcard(part: string): string[] | Error {
    const split = splitComparison(part);
    if (split instanceof Error) {
        return split;
    }
    const [op, version] = split;
    const pieces = version.split(".");
    const kind = pieces[pieces.length - 1] === "x" ? pieces.length : 0; // 2: minor wildcard, 3: patch wildcard
    const flat = version.replace(".x.x", ".x").replace(".x", ".0");
    const base = flat.split(".").length === 2 ? `${flat}.0` : flat;
    const next = () => {
        const numbers = base.split(".");
        const index = kind === 3 ? 1 : kind === 2 ? 0 : -1;
        if (index < 0) {
            return "";
        }
        numbers[index] = String(Number(numbers[index]) + 1);
        return numbers.join(".");
    };
    switch (op) {
        case ">":
            return [`>=${next()}`];
        case ">=":
            return [`>=${base}`];
        case "<":
            return [`<${base}`];
        case "<=":
            return [`<${next()}`];
        case "":
        case "=":
        case "==":
            return [`>=${base}`, `<${next()}`];
        case "!=":
        case "!":
            return [`<${base}`, `>=${next()}`];
        default:
            // blang/semver v4.0.0 range.go `expandWildcardVersion` leaves the operator empty when it
            // does not know it, so the part becomes the bare flattened version, an equality: `x.1.2`
            // (operator `x.`) holds exactly 1.2.0 (computed by Go in tests/operator/semver-range.test.ts).
            return [base];
    }
}

/** A range in blang/semver's syntax, or an Error saying why it does not parse (OLM then ignores it). */
export function parseSemVerRange(text: string): SemVerRange | Error {
    const parts = splitParts(text);
    if (parts[0] === "||") {
        return new Error("the range starts with ||");
    }
    if (parts.length === 0 || parts[parts.length - 1] === "||") {
        return new Error("the range ends with ||");
    }
    const alternatives: string[][] = [[]];
    for (const part of parts) {
        if (part === "||") {
            alternatives.push([]);
        } else {
            alternatives[alternatives.length - 1].push(part);
        }
    }
    const range: { op: string; version: SemVer }[][] = [];
    for (const alternative of alternatives) {
        const comparisons: { op: string; version: SemVer }[] = [];
        for (const raw of alternative) {
            const expanded = raw.includes("x") ? expandWildcard(raw) : [raw];
            if (expanded instanceof Error) {
                return expanded;
            }
            for (const part of expanded) {
                const split = splitComparison(part);
                if (split instanceof Error) {
                    return split;
                }
                const [op, versionText] = split;
                const version = parseSemVer(versionText);
                if (!(op in COMPARATORS)) {
                    return new Error(`unknown comparator ${JSON.stringify(op)} in ${JSON.stringify(part)}`);
                }
                if (version instanceof Error) {
                    return version;
                }
                comparisons.push({ op, version });
            }
        }
        range.push(comparisons);
    }
    return range;
}

/** Whether `version` lies in `range`. */
export function inSemVerRange(version: SemVer, range: SemVerRange): boolean {
    return range.some((all) => all.every(({ op, version: bound }) => COMPARATORS[op](compareSemVer(version, bound))));
}
