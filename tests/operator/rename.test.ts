import { validateStackConfig } from "../../components/config";
import { inheritedNames, InstallRecords, previousNamesOf } from "../../components/operator/rename";
import { formatProblem } from "../../components/shared/problems";
import { renderOperators, SAMPLE_CSVS } from "../helpers/operators";
import type { RenderResult } from "../../scripts/render/render";

/** Every rendered resource under `root` (its descendants), by name. */
function descendants(result: RenderResult, root: string): RenderResult["resources"] {
    const under = new Set([root]);
    const found: RenderResult["resources"] = [];
    let grew = true;
    while (grew) {
        grew = false;
        for (const resource of result.resources) {
            if (resource.parent !== null && under.has(resource.parent) && !under.has(resource.name)) {
                under.add(resource.name);
                found.push(resource);
                grew = true;
            }
        }
    }
    return found;
}

const install = (name: string, previousNames?: string[]) => ({
    name,
    ...(previousNames ? { previousNames } : {}),
    csv: SAMPLE_CSVS.widgets,
    namespace: "widget-operator",
    targetNamespaces: [],
});

describe("renaming operators[].name is an alias (Pulumi aliases)", () => {
    test("GIVEN widgets renamed to gadgets with previousNames [widgets] WHEN rendered THEN the install and every resource under it carry the alias of the name the old install gave them, and every object is as before", async () => {
        const before = await renderOperators([install("widgets")]);
        const after = await renderOperators([install("gadgets", ["widgets"])]);
        expect(before.errors).toEqual([]);
        expect(after.errors).toEqual([]);

        const root = after.resources.find((r) => r.name === "operator-gadgets");
        expect(root?.options.aliases).toEqual(["operator-widgets"]);
        // The old resources with the aliases they declare anyway (the provider's type aliases of a CRD).
        const old = new Map(descendants(before, "operator-widgets").map((r) => [`${r.type}::${r.name}`, r.options.aliases]));
        const renamed = descendants(after, "operator-gadgets");
        expect(renamed.length).toBe(old.size);
        for (const resource of renamed) {
            // Each alias is exactly one old name (written out here: "gadgets-" → "widgets-").
            expect(resource.name.startsWith("gadgets-")).toBe(true);
            const expected = `widgets-${resource.name.slice("gadgets-".length)}`;
            expect(old.has(`${resource.type}::${expected}`)).toBe(true);
            expect(resource.options.aliases).toEqual([...(old.get(`${resource.type}::${expected}`) ?? []), expected]);
        }
        // The cluster objects are the same but for the operator label: names (the webhook generation's too) do not move.
        const objectNames = (result: RenderResult) =>
            result.manifests
                .map((m) => `${m.object.kind}/${JSON.stringify(m.object.metadata && (m.object.metadata as Record<string, unknown>).name)}`)
                .sort();
        expect(objectNames(after)).toEqual(objectNames(before));
    });

    test("GIVEN no previousNames WHEN rendered THEN no resource has a rename alias (only the provider's type aliases)", async () => {
        const result = await renderOperators([install("widgets")]);
        const aliases = descendants(result, "operator-widgets").flatMap((r) => r.options.aliases);
        expect(aliases.filter((a) => !a.startsWith('{"type":'))).toEqual([]);
    });

    test.each([
        ["the install", "cluster-platform:operator:OperatorInstall", "operator-b", ["operator-a", "operator-z"]],
        ["another component's install name", "cluster-platform:operator:OperatorInstall", "operator-c", []],
        ["a child", "kubernetes:core/v1:ServiceAccount", "b-sa-b-sa", ["a-sa-b-sa", "z-sa-b-sa"]],
        ["a name without the prefix", "kubernetes:core/v1:ServiceAccount", "bsa", []],
    ])("GIVEN %s WHEN its previous names are derived for b renamed from [a, z] THEN they are exact", (_case, type, name, expected) => {
        expect(previousNamesOf(type, name, "b", ["a", "z"])).toEqual(expected);
    });

    test("GIVEN a previous name that is another operator's name or another's previous name WHEN validated THEN each is refused naming both", () => {
        const result = validateStackConfig({
            cluster: { name: "prod", platform: "kubernetes", kubeContext: "test" },
            operators: [
                { name: "a", csv: "a.yaml", namespace: "ops", previousNames: ["old", "b"] },
                { name: "b", csv: "b.yaml", namespace: "ops2", previousNames: ["old", "older", "older"] },
            ],
        });
        expect(result.ok ? [] : result.problems.map(formatProblem)).toEqual([
            'cluster-platform:operators[0].previousNames[1]: operator "a": previous name "b" is already the name of operator "b"; a previous name must belong to one install only',
            'cluster-platform:operators[1].previousNames[0]: operator "b": previous name "old" is already a previous name of operator "a"; a previous name must belong to one install only',
            'cluster-platform:operators[1].previousNames[2]: duplicate previous name "older" (already at index 1)',
            'cluster-platform:operators[1].previousNames[2]: operator "b": previous name "older" is already a previous name of operator "b"; a previous name must belong to one install only',
        ]);
    });
});

/** The rendered resources under an install, by name, with their rename aliases (the provider's type aliases left out). */
function renameAliasesOf(result: RenderResult, operator: string): Map<string, string[]> {
    return new Map(
        descendants(result, `operator-${operator}`).map((r) => [r.name, r.options.aliases.filter((a) => !a.startsWith('{"type":'))]),
    );
}

describe("a rename or hand-over without previousNames, recognised from the previous update's installs (operatorInstalls)", () => {
    const record = (namespace: string, csv: string, previousNames?: string[]) => ({
        namespace,
        csv,
        ...(previousNames ? { previousNames } : {}),
    });
    const current = (name: string, namespace: string, csv: string, previousNames?: string[]) => ({ name, namespace, csv, previousNames });

    type Inherited = Record<string, { previousNames: string[]; renames?: string; sharedFrom: string[] }>;
    test.each<[string, InstallRecords | undefined, ReturnType<typeof current>[], Inherited]>([
        ["no record (a stack's first update, or one written before the record)", undefined, [current("b", "ops", "x.v1")], {}],
        [
            "the only install gone from the namespace, renamed",
            { a: record("ops", "x.v1", ["z"]) },
            [current("b", "ops", "x.v2")],
            { b: { previousNames: ["z", "a"], renames: "a", sharedFrom: ["a"] } },
        ],
        [
            "two gone from the namespace, one of them with the new install's CSV",
            { a: record("ops", "x.v1"), c: record("ops", "y.v1") },
            [current("b", "ops", "y.v1")],
            { b: { previousNames: ["c"], renames: "c", sharedFrom: ["a", "c"] } },
        ],
        [
            "two gone from the namespace, neither with its CSV: ambiguous, no rename",
            { a: record("ops", "x.v1"), c: record("ops", "y.v1") },
            [current("b", "ops", "z.v1")],
            { b: { previousNames: [], sharedFrom: ["a", "c"] } },
        ],
        [
            "one gone, two new in its namespace: the first in config order takes it",
            { a: record("ops", "x.v1") },
            [current("b", "ops", "x.v1"), current("c", "ops", "x.v1")],
            { b: { previousNames: ["a"], renames: "a", sharedFrom: ["a"] }, c: { previousNames: [], sharedFrom: ["a"] } },
        ],
        [
            "a gone install of another namespace: shared objects only",
            { a: record("team-a", "x.v1"), b: record("team-b", "x.v1") },
            [current("b", "team-b", "x.v1")],
            { b: { previousNames: [], sharedFrom: ["a"] } },
        ],
        [
            "installs the record knows, under their name or a previous name: the names it keeps for them, never a new rename",
            { a: record("ops", "x.v1", ["w", "v"]), old: record("ops", "y.v1", ["older"]) },
            [current("b", "ops", "y.v1", ["old"]), current("a", "ops", "x.v1", ["v"])],
            { b: { previousNames: ["older"], sharedFrom: [] }, a: { previousNames: ["w"], sharedFrom: [] } },
        ],
    ])("GIVEN %s WHEN inherited names are derived THEN they are exact", (_case, previous, installs, expected) => {
        expect(Object.fromEntries(inheritedNames(previous, installs))).toEqual(expected);
    });

    test("GIVEN widgets installed and renamed to gadgets without previousNames WHEN rendered after the update that installed it THEN every resource has the aliases previousNames [widgets] gives, the webhooks keep their generation, the preview says why, and the record names the rename", async () => {
        const installed = await renderOperators([install("widgets")]);
        expect(installed.stackOutputs.operatorInstalls).toEqual({
            widgets: { namespace: "widget-operator", csv: "widget-operator.v1.2.0" },
        });
        const explicit = await renderOperators([install("gadgets", ["widgets"])]);
        const implied = await renderOperators([install("gadgets")], { render: { stackOutputs: installed.stackOutputs } });
        expect(implied.errors).toEqual([]);
        expect([...renameAliasesOf(implied, "gadgets")]).toEqual([...renameAliasesOf(explicit, "gadgets")]);
        expect(implied.resources.find((r) => r.name === "operator-gadgets")?.options.aliases).toEqual(["operator-widgets"]);
        const generation = (result: RenderResult) =>
            (result.manifests.find((m) => m.object.kind === "ConfigMap")?.object.metadata as { name?: string } | undefined)?.name;
        expect(generation(implied)).toMatch(/^widgets-webhooks-/);
        expect(generation(implied)).toBe(generation(installed));
        expect(implied.warnings).toContain(
            'operator "gadgets": taken as the rename of operator "widgets", which the previous update installed in the same namespace and this config no longer names: its resources keep that install\'s objects (aliases), and the stack remembers the name; set operators[].previousNames to say so, or remove one install in an update of its own and add the other in the next',
        );
        expect(implied.stackOutputs.operatorInstalls).toEqual({
            gadgets: { namespace: "widget-operator", csv: "widget-operator.v1.2.0", previousNames: ["widgets"] },
        });
        // The update after keeps the aliases and the generation from the record, and says nothing more.
        const after = await renderOperators([install("gadgets")], { render: { stackOutputs: implied.stackOutputs } });
        expect([...renameAliasesOf(after, "gadgets")]).toEqual([...renameAliasesOf(explicit, "gadgets")]);
        expect(generation(after)).toBe(generation(installed));
        expect(after.warnings.filter((w) => w.includes("taken as the rename"))).toEqual([]);
    });

    test("GIVEN two installs of one bundle, the first (which declares the shared CRD and roles) removed WHEN rendered THEN exactly the other's shared objects carry the first one's names as aliases", async () => {
        const backups = (name: string, namespace: string) => ({
            name,
            csv: SAMPLE_CSVS.backups,
            namespace,
            targetNamespaces: [namespace],
        });
        const both = await renderOperators([backups("backups-a", "team-a"), backups("backups-b", "team-b")]);
        const left = await renderOperators([backups("backups-b", "team-b")], { render: { stackOutputs: both.stackOutputs } });
        expect(left.errors).toEqual([]);
        const aliased = [...renameAliasesOf(left, "backups-b")].filter(([, aliases]) => aliases.length > 0);
        const declaredByA = new Set(descendants(both, "operator-backups-a").map((r) => r.name));
        const shared = descendants(both, "operator-backups-a")
            .filter(
                (r) =>
                    r.type.endsWith(":CustomResourceDefinition") || (r.type.endsWith(":ClusterRole") && r.name.includes("backups.samples")),
            )
            .map((r) => r.name.slice("backups-a-".length))
            .sort();
        expect(shared.length).toBeGreaterThan(0);
        expect(aliased.map(([name]) => name.slice("backups-b-".length)).sort()).toEqual(shared);
        for (const [name, aliases] of aliased) {
            expect(aliases).toEqual([`backups-a-${name.slice("backups-b-".length)}`]);
            expect(declaredByA.has(aliases[0])).toBe(true);
        }
        expect(left.warnings.filter((w) => w.includes("taken as the rename"))).toEqual([]);
    });
});
