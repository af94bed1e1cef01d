import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { SECTION_NAMES, SECTIONS, validateStackConfig } from "../../components/config";
import { projectConfigDeclarations } from "../../components/config/reference";
import { formatProblem } from "../../components/shared/problems";
import { applyProjectConfig, ProjectFile, projectFileErrors } from "../../scripts/render/project-config";
import { exampleStacks } from "../../scripts/policy/stacks";
import { ROOT } from "../helpers/render";

const project = (): ProjectFile => parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8"));
const stackFile = (file: string): Record<string, unknown> => parse(fs.readFileSync(path.join(ROOT, file), "utf8")).config ?? {};

/** Every stack file in the repository: the embedded local stack and each example. */
const STACK_FILES = exampleStacks();

/** The program's view of an engine-merged config: its own keys, without the namespace. */
function programSections(config: Record<string, unknown>): Record<string, unknown> {
    return Object.fromEntries(
        Object.entries(config)
            .filter(([key]) => key.startsWith("cluster-platform:"))
            .map(([key, value]) => [key.slice("cluster-platform:".length), value]),
    );
}

const MINIMAL_LIVE_STACK = { "cluster-platform:cluster": { name: "prod-east", platform: "openshift", kubeContext: "prod-east" } };

describe("Pulumi.yaml's config block under the engine's rules", () => {
    test("GIVEN Pulumi.yaml WHEN the engine validates the project file THEN every array declares items and every default matches its type", () => {
        expect(projectFileErrors(project())).toEqual([]);
    });

    test("GIVEN Pulumi.yaml THEN every key is typed, and every key but cluster has a default", () => {
        const declared = project().config ?? {};
        expect(Object.keys(declared)).toEqual(SECTION_NAMES);
        expect(
            Object.fromEntries(
                Object.entries(declared).map(([key, entry]) => [key, [entry.type, entry.items?.type, entry.default !== undefined]]),
            ),
        ).toEqual({
            cluster: ["object", undefined, false],
            certificates: ["object", undefined, true],
            caInjection: ["array", "object", true],
            subscriptions: ["object", undefined, true],
            olm: ["object", undefined, true],
            operators: ["array", "object", true],
            aws: ["object", undefined, true],
            webhookImage: ["object", undefined, true],
            reconcile: ["object", undefined, true],
        });
    });

    test.each(STACK_FILES)(
        "GIVEN %s WHEN the engine merges it with Pulumi.yaml THEN nothing is missing or mistyped and the program accepts the result",
        (file) => {
            const merged = applyProjectConfig(project(), "stack", stackFile(file));
            if (!merged.ok) {
                throw new Error(merged.error);
            }
            const result = validateStackConfig(programSections(merged.config));
            expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([]);
        },
    );

    test("GIVEN a stack that sets only cluster (live, with its context) WHEN merged THEN every other key gets its default and the program accepts it", () => {
        const merged = applyProjectConfig(project(), "prod-east", MINIMAL_LIVE_STACK);
        expect(merged.ok && Object.keys(merged.config).sort()).toEqual(SECTION_NAMES.map((k) => `cluster-platform:${k}`).sort());
        expect(merged.ok && validateStackConfig(programSections(merged.config)).ok).toBe(true);
    });

    test("GIVEN each declared default WHEN the program parses it THEN it reads exactly as leaving the key out", () => {
        for (const [key, entry] of Object.entries(projectConfigDeclarations())) {
            if (entry.default === undefined) {
                continue;
            }
            const name = key as keyof typeof SECTIONS;
            expect([key, SECTIONS[name].parse(entry.default)]).toEqual([key, SECTIONS[name].parse(undefined)]);
        }
    });

    test("GIVEN a stack without cluster WHEN merged THEN the engine stops naming the one missing key", () => {
        expect(applyProjectConfig(project(), "prod", { "cluster-platform:aws": { enabled: false } })).toEqual({
            ok: false,
            error: "Stack 'prod' is missing configuration value 'cluster'",
        });
    });

    test("GIVEN declarations without defaults (the old Pulumi.yaml) WHEN the local stack is merged THEN the engine reports every key it does not set", () => {
        const old = project();
        const config = Object.fromEntries(
            Object.entries(old.config ?? {}).map(([key, entry]) => [key, { description: entry.description }]),
        );
        expect(applyProjectConfig({ ...old, config }, "local", stackFile("Pulumi.local.yaml"))).toEqual({
            ok: false,
            error: "Stack 'local' is missing configuration values 'caInjection', 'certificates', 'olm', 'operators', 'reconcile', 'subscriptions' and 'webhookImage'",
        });
    });

    test.each([
        [
            "operators as a map",
            { "cluster-platform:operators": { name: "x" } },
            "Stack 's' with configuration key 'operators' must be of type 'array<object>'",
        ],
        [
            "caInjection with a string element",
            { "cluster-platform:caInjection": ["ConfigMap/x"] },
            "Stack 's' with configuration key 'caInjection' must be of type 'array<object>'",
        ],
        ["aws as a string", { "cluster-platform:aws": "yes" }, "Stack 's' with configuration key 'aws' must be of type 'object'"],
    ])("GIVEN %s WHEN merged THEN the engine rejects its type", (_what, extra, error) => {
        expect(applyProjectConfig(project(), "s", { ...MINIMAL_LIVE_STACK, ...extra })).toEqual({ ok: false, error });
    });
});
