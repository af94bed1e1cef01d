import { validateStackConfig } from "../../components/config";
import { previousNamesOf } from "../../components/operator/rename";
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
