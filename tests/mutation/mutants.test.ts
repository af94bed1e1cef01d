import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { applyMutant, mutationPoints, sampleMutants } from "../../scripts/mutation/mutants";
import { tsxCommand } from "../helpers/tsx";

describe("mutation points", () => {
    it("GIVEN a rule with a comparison, a conjunction, a negation and a condition WHEN mutated THEN each gets its plausible mistakes", () => {
        const source =
            "export function ok(a: number, b: boolean) {\n    if (a > 1 && !b) {\n        return true;\n    }\n    return false;\n}\n";

        const mutants = mutationPoints("rules.ts", source);

        expect(mutants.map((m) => [m.line, m.description, applyMutant(source, m).split("\n")[m.line - 1].trim()])).toEqual([
            [2, "condition → false", "if ((false)) {"],
            [2, "condition → true", "if ((true)) {"],
            [2, "> → >=", "if (a >= 1 && !b) {"],
            [2, "&& → ||", "if (a > 1 || !b) {"],
            [2, "drop !", "if (a > 1 && b) {"],
            [3, "true → false", "return false;"],
            [5, "false → true", "return true;"],
        ]);
    });

    it("GIVEN a source that changed since the mutants were computed WHEN a mutant is applied THEN it refuses, naming the place", () => {
        const [mutant] = mutationPoints("rules.ts", "const x = a === b;\n");

        expect(() => applyMutant("const x = a !== b;\n", mutant)).toThrow("rules.ts:1: the source changed since the mutant was computed");
    });

    it("GIVEN the same seed WHEN sampled twice THEN the same mutants come back in source order, and never more than asked", () => {
        const mutants = mutationPoints("rules.ts", "const a = x === 1 || y < 2 || !z || w >= 3;\n");

        const first = sampleMutants(mutants, 3, 7);

        expect(first).toEqual(sampleMutants(mutants, 3, 7));
        expect(first).toHaveLength(3);
        expect(first.map((m) => m.start)).toEqual([...first.map((m) => m.start)].sort((a, b) => a - b));
        expect(sampleMutants(mutants, 100, 7)).toHaveLength(mutants.length);
    });
});

describe("npm run mutation -- --help", () => {
    it("GIVEN --help WHEN the runner starts THEN it prints its usage, naming every option, and exits 0 without running a mutant", () => {
        const root = path.resolve(__dirname, "..", "..");
        const run = spawnSync(...tsxCommand("scripts/mutation/sample.ts", ["--help"]), { cwd: root, encoding: "utf8" });
        expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
        expect(run.stdout.split("\n")[0]).toBe(
            "usage: npm run mutation -- [--files a.ts,b.ts] [--tests t1,t2] [--count N] [--seed S] [--timeout SECONDS]",
        );
        for (const option of ["--files", "--tests", "--count", "--seed", "--timeout", "--help"]) {
            expect(run.stdout).toContain(`  ${option} `);
        }
        expect(run.stdout).not.toContain("candidates:");
    });
});
