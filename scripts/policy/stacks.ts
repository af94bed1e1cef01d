/**
 * The example stacks as the packs see them: each rendered through the real program with the
 * cluster objects that go with it, and analyzed by both packs, each run as the CLI runs it (its
 * analyzer process), with the policy config the stack passes (`npm run policy:config`). Shared by
 * the compliance tests and `npm run bench:policy`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";
import { ClusterState } from "../render/cluster-state";
import { FlatConfig, readConfigFile } from "../render/config-file";
import { PROJECT_ROOT, renderProgram, RenderResult } from "../render/render";
import { PackName, PACKS, policyConfigFor } from "./config";
import { AnalysisResult, analyzeAll, engineResourcesFromRender, PackConfig, RunningPack, startPack } from "./analyzer";

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

/** The stack file's config (relative to the project), as the engine would hand it to the program. */
export function stackFileConfig(stack: string): FlatConfig {
    return readConfigFile(path.join(PROJECT_ROOT, stack));
}

/**
 * Renders a stack file (relative to the project) with its cluster objects. `config` replaces the
 * file's config (tests vary it) and `program` replaces index.ts (tests seed mistakes so).
 */
export function renderStack(stack: string, options: { config?: FlatConfig; program?: string } = {}): Promise<RenderResult> {
    const cluster = clusterFileOf(stack);
    return renderProgram({
        config: options.config ?? stackFileConfig(stack),
        ...(cluster ? { cluster: ClusterState.fromFile(path.join(PROJECT_ROOT, cluster)) } : {}),
        ...(options.program ? { program: options.program } : {}),
    });
}

/** The validated stack config of a flat config; throws the validator's report. */
export function validatedConfig(config: FlatConfig): StackConfig {
    const result = validateStackConfig(sectionsFromPulumiConfig(config.values));
    if (!result.ok) {
        throw new Error(formatReport(result.problems));
    }
    return result.config;
}

export type Packs = Record<PackName, RunningPack>;

/** Both packs started as the CLI starts them (`shared`: they outlive a test file, see startPack). */
export async function startPacks(options: { shared?: boolean } = {}): Promise<Packs> {
    const running = await Promise.all(PACKS.map((pack) => startPack(path.join(PROJECT_ROOT, "policy-packs", pack), options)));
    return Object.fromEntries(PACKS.map((pack, i) => [pack, running[i]])) as Packs;
}

/** Both packs over a rendered stack, each configured as `packConfig` says (by default as the stack configures them). */
export async function analyzeWithBothPacks(
    packs: Packs,
    result: RenderResult,
    packConfig: Record<PackName, PackConfig>,
): Promise<Record<PackName, AnalysisResult>> {
    const resources = engineResourcesFromRender(result.resources);
    const analyses: Partial<Record<PackName, AnalysisResult>> = {};
    for (const pack of PACKS) {
        analyses[pack] = await analyzeAll(packs[pack], resources, packConfig[pack]);
    }
    return analyses as Record<PackName, AnalysisResult>;
}

export { policyConfigFor };
