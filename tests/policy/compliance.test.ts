import * as path from "node:path";
import { PackName, PACKS } from "../../scripts/policy/config";
import { AnalysisResult, engineResourcesFromRender } from "../../scripts/policy/engine";
import { enginesFor, exampleStacks, renderStack } from "../../scripts/policy/stacks";
import { RenderResult } from "../../scripts/render/render";

/** Both packs over a rendered stack, each configured as the stack configures it. */
function analyzeWithBothPacks(stack: string, result: RenderResult): Record<PackName, AnalysisResult> {
    const engines = enginesFor(stack);
    const resources = engineResourcesFromRender(result.resources);
    return Object.fromEntries(PACKS.map((pack) => [pack, engines[pack].analyzeAll(resources)])) as Record<PackName, AnalysisResult>;
}

const summary = (result: AnalysisResult) => result.diagnostics.map((d) => `${d.enforcementLevel} ${d.policyName} ${d.urn ?? ""}: ${d.violation}`);

describe("whole-program compliance: every example stack through the real program and both packs", () => {
    test.each(exampleStacks())("GIVEN %s rendered with its cluster objects WHEN every resource goes through aws-tags and k8s-rbac THEN no policy reports anything", async (stack) => {
        const result = await renderStack(stack);
        expect(result.errors).toEqual([]);
        const analysis = analyzeWithBothPacks(stack, result);
        expect(summary(analysis["aws-tags"])).toEqual([]);
        expect(summary(analysis["k8s-rbac"])).toEqual([]);
    });
});

describe("the reverse: seeded mistakes in the real program are caught", () => {
    const stack = "examples/openshift-aws.yaml";
    let analysis: Record<PackName, AnalysisResult>;
    beforeAll(async () => {
        const result = await renderStack(stack, path.join(__dirname, "fixtures", "seeded-program"));
        expect(result.errors).toEqual([]);
        analysis = analyzeWithBothPacks(stack, result);
    });

    test("GIVEN an S3 bucket created by a test component outside the tagging components WHEN analyzed THEN it lacks the stack's user tags and is listed as untagged", () => {
        expect(summary(analysis["aws-tags"])).toEqual([
            'mandatory aws-required-tags urn:pulumi:render::cluster-platform::test:seeded:UntaggedLogs$aws:s3/bucket:Bucket::seeded-logs-bucket: aws:s3/bucket:Bucket "seeded-logs-bucket" lacks the required tags "adminContact", "costCenter", "red-hat-managed" (it carries no tags)',
            'mandatory aws-untagged-resources : 1 taggable AWS resource carries no tags: aws:s3/bucket:Bucket "seeded-logs-bucket"',
        ]);
    });
});
