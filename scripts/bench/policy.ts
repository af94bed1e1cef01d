/**
 * `npm run bench:policy`: 10,000 rendered resources through both policy packs (aws-tags and
 * k8s-rbac, configured as the example stack configures them: every resource through `Analyze`,
 * then the stack through `AnalyzeStack`), against the floor of the same resources through a pack
 * with one no-op resource policy and one no-op stack policy, in the same run and the same engine
 * (arguments, proxies and diagnostics built alike), so the ratio is what the packs' rules cost.
 *
 * The resources are examples/openshift-aws.yaml rendered through the real program with its
 * cluster objects, copied (new names, the stack's namespaces renamed) until there are 10,000.
 * Packs and floor run back to
 * back in alternating order; the median of the paired measurements is reported.
 * Last line: `bench:policy resources_per_s=<packs> ratio=<packs / no-op floor>` (rates, so < 1).
 */
import * as os from "node:os";
import { performance } from "node:perf_hooks";
import type { Policies } from "@pulumi/policy";
import { PackName, PACKS, policyConfigFor } from "../policy/config";
import { EngineResource, engineResourcesFromRender, PackConfig, PolicyEngine } from "../policy/engine";
import { enginesFor, renderStack, stackFileConfig, validatedConfig } from "../policy/stacks";

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
function declaredNamespaces(rendered: readonly EngineResource[]): string[] {
    return rendered
        .filter((r) => r.type === "kubernetes:core/v1:Namespace")
        .map((r) => (r.props.metadata as { name?: unknown } | undefined)?.name)
        .filter((n): n is string => typeof n === "string");
}

/**
 * The packs' config with each `allowedRoles` exemption in a declared namespace repeated for every
 * copy's renamed namespace, as each copied install's own policy config would exempt its roles.
 */
function scaledPackConfig(config: Record<PackName, PackConfig>, declared: readonly string[], copies: number): Record<PackName, PackConfig> {
    const grants = config["k8s-rbac"]["k8s-no-broad-grants"] as { allowedRoles?: string[] } | undefined;
    if (!grants?.allowedRoles) return config;
    const roles = grants.allowedRoles.flatMap((role) => {
        const namespace = role.split("/")[0];
        if (!role.includes("/") || !declared.includes(namespace)) return [role];
        return [role, ...Array.from({ length: copies }, (_, i) => role.replace(`${namespace}/`, `${namespace}-copy${i + 1}/`))];
    });
    return { ...config, "k8s-rbac": { ...config["k8s-rbac"], "k8s-no-broad-grants": { ...grants, allowedRoles: roles } } };
}

function scaled(rendered: readonly EngineResource[], count: number): EngineResource[] {
    const declared = declaredNamespaces(rendered);
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

const NO_OP: Policies = [
    { name: "no-op-resource", description: "Does nothing.", enforcementLevel: "mandatory", validateResource: () => undefined },
    { name: "no-op-stack", description: "Does nothing.", enforcementLevel: "mandatory", validateStack: () => undefined },
];

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

function timed(body: () => number): { ms: number; diagnostics: number } {
    const start = performance.now();
    const diagnostics = body();
    return { ms: performance.now() - start, diagnostics };
}

async function main(): Promise<void> {
    const rendered = await renderStack(STACK);
    if (!rendered.ok) {
        throw new Error(
            `rendering ${STACK} failed:\n${[...rendered.problems.map((p) => `${p.path}: ${p.message}`), ...rendered.errors].join("\n")}`,
        );
    }
    const stackResources = engineResourcesFromRender(rendered.resources);
    const resources = scaled(stackResources, RESOURCES);
    const config = validatedConfig(stackFileConfig(STACK));
    const copies = Math.ceil(RESOURCES / stackResources.length);
    const engines = enginesFor(config, scaledPackConfig(policyConfigFor(config), declaredNamespaces(stackResources), copies));
    const floorEngine = new PolicyEngine({ name: "no-op", policies: NO_OP, enforcementLevel: "mandatory" });
    const packs = () => timed(() => PACKS.reduce((n, pack) => n + engines[pack].analyzeAll(resources).diagnostics.length, 0));
    const floor = () => timed(() => floorEngine.analyzeAll(resources).diagnostics.length);

    // Warm-up: the JIT sees both paths before anything is measured.
    const warm = packs();
    floor();
    if (warm.diagnostics !== 0) {
        throw new Error(`the example stack should pass both packs; they reported ${warm.diagnostics} diagnostics`);
    }
    const packMs: number[] = [];
    const floorMs: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
        // Alternating order: neighbours in time see the same load on a shared machine.
        let p: number;
        let f: number;
        if (round % 2 === 0) {
            p = packs().ms;
            f = floor().ms;
        } else {
            f = floor().ms;
            p = packs().ms;
        }
        packMs.push(p);
        floorMs.push(f);
        ratios.push(f / p);
    }
    const perSecond = Math.round(RESOURCES / (median(packMs) / 1000));
    console.log(`resources: ${RESOURCES} (${rendered.resources.length} rendered from ${STACK}, then copies with new names and namespaces)`);
    console.log(`packs ms:  [${packMs.map((m) => m.toFixed(1)).join(", ")}] (median ${median(packMs).toFixed(1)})`);
    console.log(`no-op ms:  [${floorMs.map((m) => m.toFixed(1)).join(", ")}] (median ${median(floorMs).toFixed(1)})`);
    console.log(`no-op floor: ${Math.round(RESOURCES / (median(floorMs) / 1000))} resources/s; target for the packs: >= 10000 resources/s`);
    console.log(
        `machine: ${os.cpus().length} CPUs, ${os.cpus()[0]?.model ?? "unknown CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, node ${process.version}`,
    );
    console.log(`bench:policy resources_per_s=${perSecond} ratio=${median(ratios).toFixed(3)}`);
}

main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
});
