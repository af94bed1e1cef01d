/**
 * The house's import rules, checked over every TypeScript file of the repository
 * (tests/helpers/import-graph.ts, which reads imports with TypeScript's own scanner):
 * - no import cycle, type-only imports included (a type-only cycle still ties two modules'
 *   meanings together, and becomes a runtime one with the first value import);
 * - stack config (components/config/) imports only a room's `rules.ts`, the rules that room
 *   exposes to config, or components/shared/, the leaf layer, which imports nothing outside
 *   itself. So config never loads a room's planners or components, and a room's rules never
 *   need config's schema (docs/architecture.md, "Rooms and their rules").
 */
import { ROOT } from "../helpers/root";
import { ImportGraph, importCycles, importGraph, ImportRule, ruleViolations } from "../helpers/import-graph";

const HOUSE_RULES: readonly ImportRule[] = [
    {
        from: /^components\/config\//,
        allowed: [/^components\/config\//, /^components\/[^/]+\/rules\.ts$/, /^components\/shared\//],
    },
    { from: /^components\/shared\//, allowed: [/^components\/shared\//] },
];

describe("import rules", () => {
    const graph = importGraph(ROOT, ["index.ts", "components", "policy-packs", "webhook", "scripts", "tests"]);

    test("GIVEN every TypeScript file of the repository WHEN its imports are read THEN the graph holds the program, the packs, the webhook, the scripts and the tests", () => {
        expect(graph.get("index.ts")).toEqual(expect.arrayContaining(["components/composition/phases.ts"]));
        expect(graph.get("components/config/schema.ts")).toEqual(
            expect.arrayContaining(["components/operator/rules.ts", "components/shared/k8s-names.ts"]),
        );
        for (const area of ["components/", "policy-packs/", "webhook/", "scripts/", "tests/"]) {
            expect([...graph.keys()].some((file) => file.startsWith(area))).toBe(true);
        }
    });

    test("GIVEN the repository WHEN its import graph is searched THEN no file imports itself through others, type-only imports included", () => {
        expect(importCycles(graph)).toEqual([]);
    });

    test("GIVEN the repository WHEN config's and shared's imports are read THEN config imports only rooms' rules.ts and shared/, and shared imports only shared/", () => {
        expect(ruleViolations(graph, HOUSE_RULES)).toEqual([]);
    });

    test("GIVEN a graph with a type-only cycle through three files and one with a self-import WHEN searched THEN each cycle is reported once with its files", () => {
        const cyclic: ImportGraph = new Map([
            ["a.ts", ["b.ts"]],
            ["b.ts", ["c.ts", "d.ts"]],
            ["c.ts", ["a.ts"]],
            ["d.ts", []],
            ["e.ts", ["e.ts"]],
        ]);
        expect(importCycles(cyclic)).toEqual([["a.ts", "b.ts", "c.ts"], ["e.ts"]]);
        expect(
            importCycles(
                new Map([
                    ["a.ts", ["b.ts"]],
                    ["b.ts", []],
                ]),
            ),
        ).toEqual([]);
    });

    test("GIVEN config importing a room's planner and shared importing a room WHEN the house rules are applied THEN both imports are named", () => {
        const graph: ImportGraph = new Map([
            [
                "components/config/schema.ts",
                ["components/operator/rules.ts", "components/operator/pod-overrides.ts", "components/shared/problems.ts"],
            ],
            ["components/shared/problems.ts", ["components/shared/order.ts", "components/operator/plan.ts"]],
            ["components/operator/plan.ts", ["components/config/schema.ts"]],
        ]);
        expect(ruleViolations(graph, HOUSE_RULES)).toEqual([
            "components/config/schema.ts -> components/operator/pod-overrides.ts",
            "components/shared/problems.ts -> components/operator/plan.ts",
        ]);
    });
});
