/**
 * Mutation points of one TypeScript source: the small, plausible mistakes a change could make
 * (a flipped comparison, `&&` for `||`, a dropped negation, a condition forced true or false,
 * an off-by-one bound). Pure: text in, mutants out, each a single replacement of a source range,
 * so the sampler (`sample.ts`) can apply one, run the tests that cover the file, and restore it.
 */
import * as ts from "typescript";

export interface Mutant {
    /** Repository-relative path of the mutated file. */
    file: string;
    /** 1-based line of the replaced range's start, for the report. */
    line: number;
    /** Replaced range, as offsets into the original text. */
    start: number;
    end: number;
    /** The original text of the range and what replaces it. */
    original: string;
    replacement: string;
    /** What the mutant does, e.g. `=== → !==`. */
    description: string;
}

/** Operators swapped for their likeliest wrong neighbour. */
const OPERATOR_SWAPS: ReadonlyMap<ts.SyntaxKind, string> = new Map([
    [ts.SyntaxKind.EqualsEqualsEqualsToken, "!=="],
    [ts.SyntaxKind.ExclamationEqualsEqualsToken, "==="],
    [ts.SyntaxKind.LessThanToken, "<="],
    [ts.SyntaxKind.LessThanEqualsToken, "<"],
    [ts.SyntaxKind.GreaterThanToken, ">="],
    [ts.SyntaxKind.GreaterThanEqualsToken, ">"],
    [ts.SyntaxKind.AmpersandAmpersandToken, "||"],
    [ts.SyntaxKind.BarBarToken, "&&"],
    [ts.SyntaxKind.QuestionQuestionToken, "&&"],
]);

/** Conditions of `if`, `while` and `?:`: forced so the branch always or never runs. */
function conditionOf(node: ts.Node): ts.Expression | undefined {
    if (ts.isIfStatement(node) || ts.isWhileStatement(node)) {
        return node.expression;
    }
    if (ts.isConditionalExpression(node)) {
        return node.condition;
    }
    return undefined;
}

export function mutationPoints(file: string, text: string): Mutant[] {
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const mutants: Mutant[] = [];
    const add = (start: number, end: number, replacement: string, description: string) => {
        const line = source.getLineAndCharacterOfPosition(start).line + 1;
        mutants.push({ file, line, start, end, original: text.slice(start, end), replacement, description });
    };
    const visit = (node: ts.Node) => {
        if (ts.isBinaryExpression(node)) {
            const swap = OPERATOR_SWAPS.get(node.operatorToken.kind);
            if (swap !== undefined) {
                const token = node.operatorToken;
                add(token.getStart(source), token.getEnd(), swap, `${token.getText(source)} → ${swap}`);
            }
        }
        if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.ExclamationToken) {
            add(node.getStart(source), node.operand.getStart(source), "", "drop !");
        }
        if (node.kind === ts.SyntaxKind.TrueKeyword) {
            add(node.getStart(source), node.getEnd(), "false", "true → false");
        }
        if (node.kind === ts.SyntaxKind.FalseKeyword) {
            add(node.getStart(source), node.getEnd(), "true", "false → true");
        }
        const condition = conditionOf(node);
        if (condition !== undefined) {
            const start = condition.getStart(source);
            const end = condition.getEnd();
            add(start, end, "(true)", "condition → true");
            add(start, end, "(false)", "condition → false");
        }
        ts.forEachChild(node, visit);
    };
    visit(source);
    return mutants.sort((a, b) => a.start - b.start || a.description.localeCompare(b.description));
}

/** `text` with `mutant` applied. */
export function applyMutant(text: string, mutant: Mutant): string {
    if (text.slice(mutant.start, mutant.end) !== mutant.original) {
        throw new Error(`${mutant.file}:${mutant.line}: the source changed since the mutant was computed`);
    }
    return text.slice(0, mutant.start) + mutant.replacement + text.slice(mutant.end);
}

/** A deterministic sample of `count` mutants (mulberry32 from `seed`), in source order. */
export function sampleMutants(mutants: readonly Mutant[], count: number, seed: number): Mutant[] {
    let state = seed >>> 0;
    const next = () => {
        state = (state + 0x6d2b79f5) >>> 0;
        let t = state;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pool = [...mutants];
    for (let i = pool.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return pool
        .slice(0, Math.min(count, pool.length))
        .sort((a, b) => a.file.localeCompare(b.file) || a.start - b.start || a.description.localeCompare(b.description));
}
