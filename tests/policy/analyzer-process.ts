/**
 * Runs a policy pack the way the Pulumi CLI does, and talks to it over the analyzer protocol.
 *
 * The CLI's `pulumi-analyzer-policy` plugin runs `node <pack>/node_modules/@pulumi/pulumi/cmd/run-policy-pack
 * <engine address> <pack dir>` in the pack's directory: that script registers ts-node (type-checking
 * with the pack's tsconfig.json and the TypeScript the pack depends on), requires the pack (its
 * package.json `main`, index.ts), whose PolicyPack starts the analyzer gRPC server and prints its
 * port. Here @pulumi/pulumi resolves from the repository's node_modules instead of the pack's, as
 * the pack's dependencies are the same pinned versions.
 */
import { ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { AnalyzerClient } from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import * as proto from "@pulumi/pulumi/proto/analyzer_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { EngineResource } from "../../scripts/policy/engine";

export const RUN_POLICY_PACK = require.resolve("@pulumi/pulumi/cmd/run-policy-pack");

export interface RunningPack {
    client: AnalyzerClient;
    /** Stops the pack process and waits for it to exit. */
    stop(): Promise<void>;
}

/** Starts the pack in `directory` and connects to the port it prints. */
export async function startPack(directory: string): Promise<RunningPack> {
    const child: ChildProcess = spawn(process.execPath, [RUN_POLICY_PACK, "127.0.0.1:0", directory], {
        cwd: directory,
        stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const port = await new Promise<number>((resolve, reject) => {
        child.stdout?.on("data", (chunk: Buffer) => {
            stdout += chunk.toString();
            const line = stdout.split("\n")[0];
            if (stdout.includes("\n") && /^\d+$/.test(line.trim())) {
                resolve(Number(line.trim()));
            }
        });
        child.once("exit", (code) =>
            reject(new Error(`policy pack ${directory} exited (${code}) before printing its port:\n${stdout}${stderr}`)),
        );
    });
    const client = new AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return {
        client,
        stop: async () => {
            client.close();
            if (child.exitCode === null) {
                const exited = once(child, "exit");
                child.kill("SIGTERM");
                await exited;
            }
        },
    };
}

function call<Req, Res>(
    method: (request: Req, callback: (error: grpc.ServiceError | null, response: Res) => void) => unknown,
    request: Req,
): Promise<Res> {
    return new Promise((resolve, reject) => method(request, (error, response) => (error ? reject(error) : resolve(response))));
}

export function analyzerInfo(client: AnalyzerClient): Promise<proto.AnalyzerInfo> {
    return call(client.getAnalyzerInfo.bind(client), new Empty());
}

/** `Configure`: each policy's enforcement level and knobs, as the CLI sends `--policy-pack-config`. */
export function configure(
    client: AnalyzerClient,
    config: Record<string, { enforcementLevel: "advisory" | "mandatory" | "disabled" } & Record<string, unknown>>,
): Promise<unknown> {
    const request = new proto.ConfigureAnalyzerRequest();
    for (const [name, { enforcementLevel, ...properties }] of Object.entries(config)) {
        const policyConfig = new proto.PolicyConfig();
        policyConfig.setEnforcementlevel(
            enforcementLevel === "mandatory"
                ? proto.EnforcementLevel.MANDATORY
                : enforcementLevel === "disabled"
                  ? proto.EnforcementLevel.DISABLED
                  : proto.EnforcementLevel.ADVISORY,
        );
        policyConfig.setProperties(Struct.fromJavaScript(properties as Record<string, never>));
        request.getPolicyconfigMap().set(name, policyConfig);
    }
    return call(client.configure.bind(client), request);
}

/** The options the engine sends with each resource; a request without them is refused as coming from an old CLI. */
function resourceOptions(resource: EngineResource): proto.AnalyzerResourceOptions {
    const options = new proto.AnalyzerResourceOptions();
    options.setProtect(resource.opts?.protect ?? false);
    options.setIgnorechangesList(resource.opts?.ignoreChanges ?? []);
    options.setAdditionalsecretoutputsList(resource.opts?.additionalSecretOutputs ?? []);
    options.setCustomtimeouts(new proto.AnalyzerResourceOptions.CustomTimeouts());
    if (resource.parent) {
        options.setParent(resource.parent);
    }
    return options;
}

function provider(resource: EngineResource): proto.AnalyzerProviderResource | undefined {
    if (!resource.provider) {
        return undefined;
    }
    const p = new proto.AnalyzerProviderResource();
    p.setType(resource.provider.type);
    p.setName(resource.provider.name);
    p.setUrn(resource.provider.urn);
    p.setProperties(Struct.fromJavaScript(resource.provider.props as Record<string, never>));
    return p;
}

export function analyze(client: AnalyzerClient, resource: EngineResource, withOptions = true): Promise<proto.AnalyzeResponse> {
    const request = new proto.AnalyzeRequest();
    request.setType(resource.type);
    request.setName(resource.name);
    request.setUrn(resource.urn);
    request.setProperties(Struct.fromJavaScript(resource.props as Record<string, never>));
    if (withOptions) {
        request.setOptions(resourceOptions(resource));
    }
    const p = provider(resource);
    if (p) {
        request.setProvider(p);
    }
    return call(client.analyze.bind(client), request);
}

export function analyzeStack(client: AnalyzerClient, resources: readonly EngineResource[]): Promise<proto.AnalyzeResponse> {
    const request = new proto.AnalyzeStackRequest();
    request.setResourcesList(
        resources.map((resource) => {
            const r = new proto.AnalyzerResource();
            r.setType(resource.type);
            r.setName(resource.name);
            r.setUrn(resource.urn);
            r.setProperties(Struct.fromJavaScript(resource.props as Record<string, never>));
            r.setOptions(resourceOptions(resource));
            const p = provider(resource);
            if (p) {
                r.setProvider(p);
            }
            if (resource.parent) {
                r.setParent(resource.parent);
            }
            return r;
        }),
    );
    return call(client.analyzeStack.bind(client), request);
}

const LEVELS: Record<number, string> = {
    [proto.EnforcementLevel.ADVISORY]: "advisory",
    [proto.EnforcementLevel.MANDATORY]: "mandatory",
    [proto.EnforcementLevel.DISABLED]: "disabled",
    [proto.EnforcementLevel.REMEDIATE]: "remediate",
};
const SEVERITIES: Record<number, string> = {
    [proto.PolicySeverity.POLICY_SEVERITY_UNSPECIFIED]: "unspecified",
    [proto.PolicySeverity.POLICY_SEVERITY_LOW]: "low",
    [proto.PolicySeverity.POLICY_SEVERITY_MEDIUM]: "medium",
    [proto.PolicySeverity.POLICY_SEVERITY_HIGH]: "high",
    [proto.PolicySeverity.POLICY_SEVERITY_CRITICAL]: "critical",
};

/** The diagnostics of a response as plain objects, for exact comparison. */
export function diagnosticsOf(response: proto.AnalyzeResponse) {
    return response.getDiagnosticsList().map((d) => ({
        policyName: d.getPolicyname(),
        policyPack: `${d.getPolicypackname()}@${d.getPolicypackversion()}`,
        enforcementLevel: LEVELS[d.getEnforcementlevel()],
        severity: SEVERITIES[d.getSeverity()],
        message: d.getMessage(),
        urn: d.getUrn(),
    }));
}

/** The policies a pack declares, as the CLI reads them before an update. */
export function policiesOf(info: proto.AnalyzerInfo) {
    return info.getPoliciesList().map((p) => ({
        name: p.getName(),
        type: p.getPolicyType() === proto.PolicyType.POLICY_TYPE_STACK ? "stack" : "resource",
        enforcementLevel: LEVELS[p.getEnforcementlevel()],
        severity: SEVERITIES[p.getSeverity()],
        hasRemediationSteps: p.getRemediationSteps().length > 0,
        configKeys: Object.keys(p.getConfigschema()?.getProperties()?.toJavaScript() ?? {}),
    }));
}
