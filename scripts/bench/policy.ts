/**
 * `npm run bench:policy`: 10,000 rendered resources through both policy packs (aws-tags and
 * k8s-rbac, each its own analyzer process started as the Pulumi CLI starts it, configured as the
 * example stack configures them: every resource through `Analyze` over gRPC, then the stack
 * through `AnalyzeStack`), against the floor of the same resources through a pack with one no-op
 * resource policy and one no-op stack policy (scripts/bench/policy-floor-pack/), run the same way
 * in the same run, so the ratio is what the packs' rules cost over the protocol and the SDK.
 * Requests are serialized once before anything is timed, as the engine (Go, another process)
 * would send them, and pipelined (32 in flight per pack); the two packs run side by side, each on
 * its own process: the analyzers' throughput, which is what bounds a preview's policy time.
 *
 * Then the rules alone: every policy of both packs called in this process through
 * @pulumi/policy's public API (scripts/policy/direct.ts), over the same resources, with the same
 * config: what the packs' own code costs, without the SDK's server, protobuf and gRPC (the no-op
 * floor shows those bound the analyzer figure on this machine; docs/performance.md).
 *
 * The resources are examples/openshift-aws.yaml rendered through the real program with its
 * cluster objects, copied (new names, the stack's namespaces renamed) until there are 10,000.
 * Packs and floor run back to back in alternating order; the median of the paired measurements
 * is reported.
 * Last line: `bench:policy resources_per_s=<packs> ratio=<packs / no-op floor> rules_per_s=<rules in process>`.
 */
import * as os from "node:os";
import { performance } from "node:perf_hooks";
import * as path from "node:path";
import type { Policies, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { AWS_TAGS_POLICIES } from "../../policy-packs/aws-tags/policies";
import { K8S_RBAC_POLICIES } from "../../policy-packs/k8s-rbac/policies";
import { isUnknownValueError } from "../../policy-packs/shared/values";
import {
    analyzeEncoded,
    configEntries,
    EncodedRequests,
    encodeRequests,
    EngineResource,
    engineResourcesFromRender,
    PackConfig,
    startPack,
} from "../policy/analyzer";
import { PackName, PACKS, policyConfigFor } from "../policy/config";
import { resourceArgs, runResourcePolicy, validateStack } from "../policy/direct";
import { renderStack, stackFileConfig, startPacks, validatedConfig } from "../policy/stacks";

const STACK = "examples/openshift-aws.yaml";
/** `--tiny`: the suite's smoke run (tests/policy/bench-policy.test.ts); its figures mean nothing. */
const TINY = process.argv.includes("--tiny");
const RESOURCES = TINY ? 200 : 10_000;
const ROUNDS = TINY ? 1 : 9;

/** Every string equal to a key of `names`, anywhere in `value`, replaced by its value. */
function renamed(value: unknown, names: ReadonlyMap<string, string>): unknown {
    if (typeof value === "string") {
        return names.get(value) ?? value;
    }
    if (Array.isArray(value)) {
        return value.map((v) => renamed(v, names));
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renamed(v, names)]));
    }
    return value;
}

/**
 * `count` resources: the rendered ones, then copies of them as another cluster-platform install
 * would be, each copy under new Pulumi names and URNs and with the namespaces the stack declares
 * renamed (`<namespace>-copy<i>`, wherever the name appears), so Services, Deployments and
 * budgets of different copies never meet, as no two objects of one cluster share a name.
 */
function scaled(rendered: readonly EngineResource[], count: number): EngineResource[] {
    const declared = rendered
        .filter((r) => r.type === "kubernetes:core/v1:Namespace")
        .map((r) => (r.props.metadata as { name?: unknown } | undefined)?.name)
        .filter((n): n is string => typeof n === "string");
    const out: EngineResource[] = [];
    for (let copy = 0; out.length < count; copy++) {
        const suffix = copy === 0 ? "" : `-copy${copy}`;
        const names = new Map(declared.map((n) => [n, `${n}${suffix}`]));
        for (const resource of rendered) {
            if (out.length === count) {
                break;
            }
            out.push({
                ...resource,
                name: `${resource.name}${suffix}`,
                urn: `${resource.urn}${suffix}`,
                props: copy === 0 ? resource.props : (renamed(resource.props, names) as Record<string, unknown>),
            });
        }
    }
    return out;
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

async function timed(body: () => Promise<number>): Promise<{ ms: number; diagnostics: number }> {
    const start = performance.now();
    const diagnostics = await body();
    return { ms: performance.now() - start, diagnostics };
}

async function main(): Promise<void> {
    const rendered = await renderStack(STACK);
    if (!rendered.ok) {
        throw new Error(
            `rendering ${STACK} failed:\n${[...rendered.problems.map((p) => `${p.path}: ${p.message}`), ...rendered.errors].join("\n")}`,
        );
    }
    const resources = scaled(engineResourcesFromRender(rendered.resources), RESOURCES);
    const config = policyConfigFor(validatedConfig(stackFileConfig(STACK)));
    const running = await startPacks();
    const floorPack = await startPack(path.join(__dirname, "policy-floor-pack"));
    try {
        await measure(running, floorPack, resources, config, rendered.resources.length);
    } finally {
        await Promise.all([...PACKS.map((p) => running[p].stop()), floorPack.stop()]);
    }
}

const POLICIES: Record<PackName, Policies> = { "aws-tags": AWS_TAGS_POLICIES, "k8s-rbac": K8S_RBAC_POLICIES };

/**
 * Every policy of both packs over `resources` in this process, enabled and configured as `config`
 * says: the violations reported, and the calls that read a value unknown during a preview (which
 * the server would turn into an advisory).
 */
function runRules(resources: readonly EngineResource[], config: Record<PackName, PackConfig>): number {
    let findings = 0;
    const report = () => void findings++;
    const guarded = (run: () => void) => {
        try {
            run();
        } catch (error) {
            if (!isUnknownValueError(error)) {
                throw error;
            }
            findings++;
        }
    };
    for (const pack of PACKS) {
        const entries = configEntries(config[pack]);
        const enabled = POLICIES[pack]
            .map((policy) => ({ policy, entry: entries[policy.name] ?? {} }))
            .filter(({ policy, entry }) => (entry.enforcementLevel ?? policy.enforcementLevel) !== "disabled")
            .map(({ policy, entry }) => {
                const { enforcementLevel: _, ...knobs } = entry;
                return { policy, knobs };
            });
        const resourcePolicies = enabled.filter(({ policy }) => "validateResource" in policy);
        for (const resource of resources) {
            // One set of arguments per resource, as each policy of the pack sees the same resource.
            let knobs: object = {};
            const args = resourceArgs(resource, () => knobs);
            for (const entry of resourcePolicies) {
                knobs = entry.knobs;
                guarded(() => runResourcePolicy(entry.policy as ResourceValidationPolicy, args, report));
            }
        }
        for (const { policy, knobs } of enabled) {
            if ("validateStack" in policy) {
                guarded(() => validateStack(policy as StackValidationPolicy, resources, knobs, report));
            }
        }
    }
    return findings;
}

async function measure(
    running: Awaited<ReturnType<typeof startPacks>>,
    floorPack: Awaited<ReturnType<typeof startPack>>,
    resources: EngineResource[],
    config: ReturnType<typeof policyConfigFor>,
    renderedCount: number,
): Promise<void> {
    const requests: EncodedRequests = encodeRequests(resources);
    const packs = () =>
        timed(async () =>
            (await Promise.all(PACKS.map((pack) => analyzeEncoded(running[pack], requests, config[pack])))).reduce((n, d) => n + d, 0),
        );
    const floor = () => timed(() => analyzeEncoded(floorPack, requests));
    const rules = () => timed(async () => runRules(resources, config));

    // Warm-up: the JIT of every process sees its path before anything is measured.
    const warm = await packs();
    await floor();
    if (warm.diagnostics !== 0) {
        throw new Error(`the example stack should pass both packs; they reported ${warm.diagnostics} diagnostics`);
    }
    const warmRules = await rules();
    if (warmRules.diagnostics !== 0) {
        throw new Error(
            `the packs' policies, called in process, reported ${warmRules.diagnostics} findings where their analyzers reported none`,
        );
    }
    const packMs: number[] = [];
    const floorMs: number[] = [];
    const rulesMs: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
        // Alternating order: neighbours in time see the same load on a shared machine.
        let p: number;
        let f: number;
        if (round % 2 === 0) {
            p = (await packs()).ms;
            f = (await floor()).ms;
        } else {
            f = (await floor()).ms;
            p = (await packs()).ms;
        }
        packMs.push(p);
        floorMs.push(f);
        ratios.push(f / p);
        rulesMs.push((await rules()).ms);
    }
    const perSecond = (ms: number[]) => Math.round(RESOURCES / (median(ms) / 1000));
    console.log(`resources: ${RESOURCES} (${renderedCount} rendered from ${STACK}, then copies with new names and namespaces)`);
    console.log(
        `packs ms:  [${packMs.map((m) => m.toFixed(1)).join(", ")}] (median ${median(packMs).toFixed(1)}), both packs side by side`,
    );
    console.log(`no-op ms:  [${floorMs.map((m) => m.toFixed(1)).join(", ")}] (median ${median(floorMs).toFixed(1)})`);
    console.log(
        `rules ms:  [${rulesMs.map((m) => m.toFixed(1)).join(", ")}] (median ${median(rulesMs).toFixed(1)}), both packs' policies in this process`,
    );
    console.log(
        `no-op floor over the analyzer protocol: ${perSecond(floorMs)} resources/s; the packs' rules alone: ${perSecond(rulesMs)} resources/s (target >= 10000)`,
    );
    console.log(
        `machine: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}`,
    );
    console.log(`bench:policy resources_per_s=${perSecond(packMs)} ratio=${median(ratios).toFixed(3)} rules_per_s=${perSecond(rulesMs)}`);
}

main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
});
