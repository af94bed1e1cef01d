/**
 * Starts a pack of this repository: the PolicyPack (which serves the analyzer protocol), with its
 * whole config checked when the engine sends it, before any resource is judged.
 *
 * The engine sends the config of every policy in one `Configure` call (pulumi
 * pkg/resource/analyzer/config.go `ReconcilePolicyPackConfig`: the `--policy-pack-config` file over
 * the schemas' defaults; it keeps entries naming no policy of the pack and checks types only
 * against the schemas the pack sends). A policy only ever sees its own entry (`getConfig`), so a
 * misspelled policy name would pass in silence, and a bad value would surface only when a
 * resource reaches the policy. So `Configure` is checked here, as a whole: entries naming no
 * policy, keys no policy declares, values a schema refuses and cross-knob rules, every problem in
 * one message, and the call fails (gRPC INVALID_ARGUMENT), which stops the CLI before it analyzes
 * anything. The check wraps the `configure` handler @pulumi/policy registers on its gRPC server:
 * @pulumi/policy offers no hook for it.
 */
import * as path from "node:path";
import { PolicyPack, Policies } from "@pulumi/policy";
import { configProblems, metaOf } from "./policy";

/** The policy entries of a `--policy-pack-config` (as the engine sends it) that break a rule, every one named. */
export function packConfigProblems(pack: string, policies: Policies, config: Readonly<Record<string, Record<string, unknown>>>): string[] {
    const byName = new Map(policies.map((p) => [p.name, p]));
    const problems: string[] = [];
    // In name order: the engine sends a map, whose order is not the file's.
    for (const [name, entry] of Object.entries(config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (name === "all") {
            continue;
        }
        const policy = byName.get(name);
        if (!policy) {
            problems.push(
                `${name}: ${JSON.stringify(name)} is not a policy of pack ${pack} (its policies: ${[...byName.keys()].join(", ")})`,
            );
            continue;
        }
        const meta = metaOf(policy);
        const { enforcementLevel: _level, ...knobs } = entry;
        if (meta) {
            problems.push(...configProblems(meta, knobs));
        }
    }
    return problems;
}

export function packConfigMessage(pack: string, problems: readonly string[]): string {
    return `invalid policy config for pack ${pack}: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}

interface ConfigureCall {
    request: {
        getPolicyconfigMap(): {
            entries(): Iterable<[string, { getProperties(): { toJavaScript(): Record<string, unknown> } | undefined }]>;
        };
    };
}
type Callback = (error: { code: number; details: string } | null, response?: unknown) => void;

/** Wraps the `configure` handler of the gRPC server @pulumi/policy is about to start. */
function guardConfigure(pack: string, policies: Policies): void {
    const policyDir = path.dirname(require.resolve("@pulumi/policy/package.json"));
    // The @grpc/grpc-js instance @pulumi/policy itself loads.
    const grpc = require(require.resolve("@grpc/grpc-js", { paths: [policyDir] })) as {
        Server: { prototype: { addService(service: unknown, implementation: Record<string, unknown>): void } };
        status: { INVALID_ARGUMENT: number };
    };
    const addService = grpc.Server.prototype.addService;
    grpc.Server.prototype.addService = function (service: unknown, implementation: Record<string, unknown>) {
        const configure = implementation.configure as ((call: ConfigureCall, callback: Callback) => unknown) | undefined;
        if (configure) {
            implementation = {
                ...implementation,
                configure: (call: ConfigureCall, callback: Callback) => {
                    const config: Record<string, Record<string, unknown>> = {};
                    for (const [name, value] of call.request.getPolicyconfigMap().entries()) {
                        config[name] = value.getProperties()?.toJavaScript() ?? {};
                    }
                    const problems = packConfigProblems(pack, policies, config);
                    if (problems.length > 0) {
                        callback({ code: grpc.status.INVALID_ARGUMENT, details: packConfigMessage(pack, problems) });
                        return undefined;
                    }
                    return configure(call, callback);
                },
            };
        }
        return addService.call(this, service, implementation);
    };
}

/** What a pack's index.ts does: its config checked as a whole, then the PolicyPack served (mandatory unless a policy says otherwise). */
export function servePack(name: string, policies: Policies, description: string): PolicyPack {
    guardConfigure(name, policies);
    return new PolicyPack(name, { policies, enforcementLevel: "mandatory", description });
}
