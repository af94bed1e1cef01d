/**
 * What a preview would change, from the real CLI's JSON (`pulumi preview --json`: `steps[]` with
 * `op`, `urn` and `detailedDiff`, pulumi/pulumi pkg/cmd/pulumi/operations/preview.go and
 * sdk/go/common/apitype's PreviewDigest).
 */
import type { TestStack } from "./stack";
import { describe as explain } from "./stack";

export interface PreviewStep {
    readonly op: string;
    readonly urn: string;
    readonly detailedDiff?: Record<string, unknown>;
}

export function previewSteps(stack: TestStack, extra: string[] = []): PreviewStep[] {
    const result = stack.run(["preview", "--stack", stack.name, "--non-interactive", "--json", ...extra]);
    if (result.status !== 0) {
        throw new Error(`pulumi preview --json failed: ${explain(result)}`);
    }
    return (JSON.parse(result.stdout) as { steps?: PreviewStep[] }).steps ?? [];
}

/** Steps that change something, as `{op, type, name, paths}` sorted by type and name. */
export function changedSteps(steps: readonly PreviewStep[]): { op: string; type: string; name: string; paths: string[] }[] {
    return steps
        .filter((s) => !["same", "read", "refresh"].includes(s.op))
        .map((s) => {
            const parts = s.urn.split("::");
            const type = parts[2].split("$").pop() as string;
            return { op: s.op, type, name: parts[3], paths: Object.keys(s.detailedDiff ?? {}).sort() };
        })
        .sort((a, b) => `${a.type}/${a.name}`.localeCompare(`${b.type}/${b.name}`));
}
