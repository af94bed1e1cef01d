import { exampleStacks } from "../../scripts/policy/stacks";
import { renderFile, resourceNamed } from "../helpers/render";

const STACKS = exampleStacks();

describe("the whole program under mocks, for each example stack", () => {
    test.each(STACKS)("GIVEN %s WHEN rendered THEN it succeeds with no errors and no unnamed objects", async (file) => {
        const result = await renderFile(file);
        expect(result.problems).toEqual([]);
        expect(result.errors).toEqual([]);
        expect(result.ok).toBe(true);
    });

    test("GIVEN the local stack WHEN rendered THEN the Kubernetes provider renders to ./out/local and AWS is off", async () => {
        const result = await renderFile("Pulumi.local.yaml");
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes").inputs).toEqual({
            enableServerSideApply: "true",
            renderYamlToDirectory: "out/local",
        });
        expect(result.resources.filter((r) => r.type.startsWith("aws:") || r.type === "pulumi:providers:aws")).toEqual([]);
        expect(result.stackOutputs).toEqual({ clusterName: "local", platform: "kubernetes", clusterAccess: "render-to-directory" });
    });
});
