/** verify's output: a table a person reads in seconds, or JSON for CI; and its exit code. Pure. */
import type { Row } from "./checks";

const MARK = { passed: "ok", failed: "FAIL", "not checked": "n/a" } as const;

export function summary(rows: readonly Row[]): { passed: number; failed: number; notChecked: number } {
    return {
        passed: rows.filter((r) => r.result === "passed").length,
        failed: rows.filter((r) => r.result === "failed").length,
        notChecked: rows.filter((r) => r.result === "not checked").length,
    };
}

/** Failures first, then what could not be checked, then the passes; columns padded to their widest cell. */
export function formatTable(stack: string, context: string, rows: readonly Row[]): string {
    const order = { failed: 0, "not checked": 1, passed: 2 } as const;
    const sorted = [...rows].sort((a, b) => order[a.result] - order[b.result]);
    const cells = sorted.map((r) => [MARK[r.result], r.check, r.object, r.why]);
    const header = ["RESULT", "CHECK", "OBJECT", "WHY"];
    const widths = [0, 1, 2].map((i) => Math.max(header[i].length, ...cells.map((c) => c[i].length)));
    const line = (c: string[]) => [0, 1, 2].map((i) => c[i].padEnd(widths[i])).join("  ") + "  " + c[3];
    const s = summary(rows);
    return [
        `verify: stack ${stack}, kube context ${context}`,
        line(header),
        ...cells.map(line),
        `${s.passed} passed, ${s.failed} failed, ${s.notChecked} not checked${s.notChecked > 0 ? " (not checked is not passed: see docs/operations.md, Verify)" : ""}`,
    ].join("\n");
}

export function toJson(stack: string, context: string, rows: readonly Row[]): string {
    return JSON.stringify({ stack, context, summary: summary(rows), checks: rows }, null, 2);
}

/** 1 when any check failed; "not checked" alone does not fail the run (it is reported as such). */
export function exitCode(rows: readonly Row[]): number {
    return rows.some((r) => r.result === "failed") ? 1 : 0;
}
