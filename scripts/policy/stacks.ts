/**
 * The example stacks as the packs see them: each rendered through the real program with the
 * cluster objects that go with it, and analyzed by both packs with the policy config the stack
 * passes (`npm run policy:config`). Shared by the compliance test and `npm run bench:policy`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { AWS_TAGS_POLICIES } from "../../policy-packs/aws-tags/policies";
import { K8S_RBAC_POLICIES } from "../../policy-packs/k8s-rbac/policies";
import { ClusterState } from "../render/cluster-state";
import { readConfigFile } from "../render/config-file";
import { PROJECT_ROOT, renderProgram, RenderResult } from "../render/render";
import { PackName, PACKS, policyConfigFor, stackConfigOf } from "./config";
import { PolicyEngine } from "./engine";

/** Pulumi.local.yaml and every examples/*.yaml (not the *.cluster.yaml objects files), relative to the project. */
export function exampleStacks(): string[] {
    return [
        "Pulumi.local.yaml",
        ...fs
            .readdirSync(path.join(PROJECT_ROOT, "examples"))
            .filter((f) => f.endsWith(".yaml") && !f.endsWith(".cluster.yaml"))
            .sort()
            .map((f) => `examples/${f}`),
    ];
}

/** `examples/x.cluster.yaml` beside `examples/x.yaml`, else the certificates fixture holding the example's cluster objects. */
export function clusterFileOf(stack: string): string | undefined {
    const beside = stack.replace(/\.yaml$/, ".cluster.yaml");
    const fixture = path.join("tests", "fixtures", "certificates", path.basename(beside));
    return [beside, fixture].find((f) => fs.existsSync(path.join(PROJECT_ROOT, f)));
}

/** Renders a stack file (relative to the project) with its cluster objects; `program` replaces index.ts (tests seed mistakes so). */
export function renderStack(stack: string, program?: string): Promise<RenderResult> {
    const cluster = clusterFileOf(stack);
    return renderProgram({
        config: readConfigFile(path.join(PROJECT_ROOT, stack)),
        ...(cluster ? { cluster: ClusterState.fromFile(path.join(PROJECT_ROOT, cluster)) } : {}),
        ...(program ? { program } : {}),
    });
}

const POLICIES: Record<PackName, typeof AWS_TAGS_POLICIES> = { "aws-tags": AWS_TAGS_POLICIES, "k8s-rbac": K8S_RBAC_POLICIES };

/** One engine per pack, configured as the stack configures it. */
export function enginesFor(stack: string): Record<PackName, PolicyEngine> {
    const stackConfig = stackConfigOf(path.join(PROJECT_ROOT, stack));
    if (!stackConfig.ok) {
        throw new Error(stackConfig.report);
    }
    const config = policyConfigFor(stackConfig.config);
    return Object.fromEntries(
        PACKS.map((pack) => [pack, new PolicyEngine({ name: pack, policies: POLICIES[pack], enforcementLevel: "mandatory", config: config[pack] })]),
    ) as Record<PackName, PolicyEngine>;
}
