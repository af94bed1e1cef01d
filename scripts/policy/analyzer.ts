/**
 * Runs a policy pack the way the Pulumi CLI does, and talks to it over the analyzer protocol: the
 * one way the tests, the whole-program compliance checks and `npm run bench:policy` run a pack
 * (the policies' own validateResource is the other, for unit tests: tests/policy/support.ts).
 *
 * The CLI's `pulumi-analyzer-policy` plugin runs `node <pack>/node_modules/@pulumi/pulumi/cmd/run-policy-pack
 * <engine address> <pack dir>` in the pack's directory: that script registers ts-node (type-checking
 * with the pack's tsconfig.json and the TypeScript the pack depends on), requires the pack (its
 * package.json `main`, index.ts), whose PolicyPack starts the analyzer gRPC server and prints its
 * port. Here @pulumi/pulumi resolves from the repository's node_modules instead of the pack's, as
 * the pack's dependencies are the same pinned versions.
 */
import { ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { once } from "node:events";
import * as grpc from "@grpc/grpc-js";
import { AnalyzerClient, AnalyzerService } from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import * as proto from "@pulumi/pulumi/proto/analyzer_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import type { PolicyResourceOptions } from "@pulumi/policy";
import type { RenderedResource } from "../render/render";
import { UNKNOWN } from "../render/present";

export const RUN_POLICY_PACK = require.resolve("@pulumi/pulumi/cmd/run-policy-pack");

/** A resource as the engine sends it to an analyzer. */
export interface EngineResource {
    type: string;
    name: string;
    urn: string;
    /** Inputs as the engine knows them; unknown values are the wire sentinel `UNKNOWN_VALUE`. */
    props: Record<string, unknown>;
    opts?: Partial<PolicyResourceOptions>;
    provider?: { type: string; name: string; urn: string; props: Record<string, unknown> };
    /** URN of the parent resource. */
    parent?: string;
}

/**
 * How the engine sends a value that is unknown during a preview: the protocol's sentinel string
 * (pulumi sdk/go/common/resource/plugin/rpc.go `UnknownStringValue`), which @pulumi/policy's
 * unknown-checking proxy recognises.
 */
export const UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** `{policy: level}` or `{policy: {enforcementLevel?, ...knobs}}`, as a `--policy-pack-config` file holds. */
export type PackConfig = Record<string, EnforcementLevelName | ({ enforcementLevel?: EnforcementLevelName } & Record<string, unknown>)>;
export type EnforcementLevelName = "advisory" | "mandatory" | "disabled" | "remediate";

export interface RunningPack {
    client: AnalyzerClient;
    /** Stops the pack process and waits for it to exit. */
    stop(): Promise<void>;
}

/**
 * Starts the pack in `directory` and connects to the port it prints. A `shared` pack outlives its
 * caller's test file: it does not hold the process open, and it is ended when the process exits.
 */
export async function startPack(directory: string, options: { shared?: boolean } = {}): Promise<RunningPack> {
    // A shared pack ends with the process that started it, however that one ends (exit-with-parent.js).
    const watchdog = options.shared ? ["--require", path.join(__dirname, "exit-with-parent.js")] : [];
    const child: ChildProcess = spawn(process.execPath, [...watchdog, RUN_POLICY_PACK, "127.0.0.1:0", directory], {
        cwd: directory,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, CLUSTER_PLATFORM_ANALYZER_PARENT: String(process.pid) },
    });
    if (options.shared) {
        const end = () => child.kill("SIGTERM");
        process.once("exit", end);
        child.once("exit", () => process.removeListener("exit", end));
    }
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
    if (options.shared) {
        child.unref();
        [child.stdout, child.stderr].forEach((stream) => (stream as unknown as { unref?: () => void } | null)?.unref?.());
    }
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
    config: Record<string, { enforcementLevel?: EnforcementLevelName } & Record<string, unknown>>,
): Promise<unknown> {
    const request = new proto.ConfigureAnalyzerRequest();
    for (const [name, { enforcementLevel = "mandatory", ...properties }] of Object.entries(config)) {
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
    return call(client.analyze.bind(client), analyzeRequest(resource, withOptions));
}

/** The `Analyze` request the engine sends for `resource`. */
export function analyzeRequest(resource: EngineResource, withOptions = true): proto.AnalyzeRequest {
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
    return request;
}

export function analyzeStack(client: AnalyzerClient, resources: readonly EngineResource[]): Promise<proto.AnalyzeResponse> {
    return call(client.analyzeStack.bind(client), analyzeStackRequest(resources));
}

/** The `AnalyzeStack` request the engine sends once every resource is known. */
export function analyzeStackRequest(resources: readonly EngineResource[]): proto.AnalyzeStackRequest {
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
    return request;
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

/** One diagnostic of a run, with the violation alone (the message is the policy's description, a newline, the violation). */
export interface Diagnostic {
    policyName: string;
    policyPackName: string;
    message: string;
    violation: string;
    enforcementLevel: string;
    urn?: string;
}

export interface AnalysisResult {
    diagnostics: Diagnostic[];
}

function asDiagnostic(d: ReturnType<typeof diagnosticsOf>[number], urn: string | undefined): Diagnostic {
    const newline = d.message.indexOf("\n");
    return {
        policyName: d.policyName,
        policyPackName: d.policyPack.split("@")[0],
        message: d.message,
        violation: newline < 0 ? "" : d.message.slice(newline + 1),
        enforcementLevel: d.enforcementLevel,
        ...(d.urn || urn ? { urn: d.urn || urn } : {}),
    };
}

/** The config a `--policy-pack-config` holds, as Configure sends it (a bare level becomes `{enforcementLevel}`). */
export function configEntries(
    config: PackConfig = {},
): Record<string, { enforcementLevel?: EnforcementLevelName } & Record<string, unknown>> {
    return Object.fromEntries(
        Object.entries(config).map(([name, value]) => [name, typeof value === "string" ? { enforcementLevel: value } : value]),
    );
}

/**
 * What a preview asks a pack: Configure with `config`, `Analyze` for every resource (several in
 * flight, as a pipelined client would), then `AnalyzeStack`; the diagnostics in resource order,
 * each with the URN it is reported at.
 */
export async function analyzeAll(
    pack: RunningPack,
    resources: readonly EngineResource[],
    config: PackConfig = {},
    inFlight = 32,
): Promise<AnalysisResult> {
    await configure(pack.client, configEntries(config));
    const perResource: Diagnostic[][] = new Array(resources.length);
    let next = 0;
    const worker = async () => {
        for (let i = next++; i < resources.length; i = next++) {
            perResource[i] = diagnosticsOf(await analyze(pack.client, resources[i])).map((d) => asDiagnostic(d, resources[i].urn));
        }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, Math.max(resources.length, 1)) }, worker));
    const stack = diagnosticsOf(await analyzeStack(pack.client, resources)).map((d) => asDiagnostic(d, undefined));
    return { diagnostics: [...perResource.flat(), ...stack] };
}

/** A preview's requests, serialized once: what the engine (Go) puts on the wire, so a run of them times the pack alone. */
export interface EncodedRequests {
    analyze: readonly Uint8Array[];
    analyzeStack: Uint8Array;
}

export function encodeRequests(resources: readonly EngineResource[]): EncodedRequests {
    return {
        analyze: resources.map((r) => analyzeRequest(r).serializeBinary()),
        analyzeStack: analyzeStackRequest(resources).serializeBinary(),
    };
}

/** `Analyze` and `AnalyzeStack` with requests that are bytes already; responses decoded as the stock client decodes them. */
const EncodedAnalyzerClient = grpc.makeGenericClientConstructor(
    {
        analyze: { ...AnalyzerService.analyze, requestSerialize: (bytes: Uint8Array) => Buffer.from(bytes) },
        analyzeStack: { ...AnalyzerService.analyzeStack, requestSerialize: (bytes: Uint8Array) => Buffer.from(bytes) },
    },
    "Analyzer",
);

/**
 * `analyzeAll` with requests serialized beforehand: Configure, every `Analyze` (`inFlight` at a
 * time), then `AnalyzeStack`; the number of diagnostics. `npm run bench:policy` times this, so the
 * client's own protobuf work (the engine's, in a real preview) is not charged to the pack.
 */
export async function analyzeEncoded(
    pack: RunningPack,
    requests: EncodedRequests,
    config: PackConfig = {},
    inFlight = 32,
): Promise<number> {
    await configure(pack.client, configEntries(config));
    const client = new EncodedAnalyzerClient(pack.client.getChannel().getTarget().replace(/^dns:/, ""), grpc.credentials.createInsecure());
    type Unary = (bytes: Uint8Array, callback: (error: grpc.ServiceError | null, response?: proto.AnalyzeResponse) => void) => void;
    const methods = client as unknown as Record<"analyze" | "analyzeStack", Unary>;
    const send = (method: "analyze" | "analyzeStack", bytes: Uint8Array) =>
        new Promise<number>((resolve, reject) =>
            methods[method].call(client, bytes, (error, response) =>
                error ? reject(error) : resolve(response?.getDiagnosticsList().length ?? 0),
            ),
        );
    try {
        let diagnostics = 0;
        let next = 0;
        const worker = async () => {
            for (let i = next++; i < requests.analyze.length; i = next++) {
                diagnostics += await send("analyze", requests.analyze[i]);
            }
        };
        await Promise.all(Array.from({ length: Math.min(inFlight, Math.max(requests.analyze.length, 1)) }, worker));
        return diagnostics + (await send("analyzeStack", requests.analyzeStack));
    } finally {
        client.close();
    }
}

// ---------------------------------------------------------------- rendered resources

/** `urn:pulumi:<stack>::<project>::<parent types $-joined>$<type>::<name>`, as the engine forms it. */
export function urnOf(stack: string, project: string, typeChain: readonly string[], name: string): string {
    return `urn:pulumi:${stack}::${project}::${typeChain.join("$")}::${name}`;
}

/** The render's markers back into what the engine sends: unknowns as the wire sentinel. */
function engineValue(value: unknown): unknown {
    if (value === UNKNOWN) {
        return UNKNOWN_VALUE;
    }
    if (Array.isArray(value)) {
        return value.map(engineValue);
    }
    if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, engineValue(v)]));
    }
    return value;
}

export interface FromRenderOptions {
    stack?: string;
    project?: string;
}

/**
 * The resources of a render (`npm run render`, `renderProgram`) as the engine would send them to
 * an analyzer: URNs with the parent type chain, unknown values as sentinels (secrets stay
 * "[secret]"; policies never need their values), reads left out (the engine does not analyze
 * them), and each AWS resource given the stack's AWS provider when there is exactly one.
 */
export function engineResourcesFromRender(resources: readonly RenderedResource[], options: FromRenderOptions = {}): EngineResource[] {
    const stack = options.stack ?? "render";
    const project = options.project ?? "cluster-platform";
    const byName = new Map<string, RenderedResource>();
    for (const resource of resources) {
        if (!byName.has(resource.name)) {
            byName.set(resource.name, resource);
        }
    }
    const chainOf = (resource: RenderedResource): string[] => {
        const chain = [resource.type];
        for (
            let parent = resource.parent ? byName.get(resource.parent) : undefined;
            parent;
            parent = parent.parent ? byName.get(parent.parent) : undefined
        ) {
            chain.unshift(parent.type);
        }
        return chain;
    };
    const urns = new Map(resources.map((r) => [r, urnOf(stack, project, chainOf(r), r.name)]));
    const awsProviders = resources.filter((r) => r.type === "pulumi:providers:aws");
    const awsProvider = awsProviders.length === 1 ? awsProviders[0] : undefined;
    return resources
        .filter((r) => r.read === undefined)
        .map((r) => ({
            type: r.type,
            name: r.name,
            urn: urns.get(r) as string,
            props: engineValue(r.inputs) as Record<string, unknown>,
            opts: {
                ignoreChanges: r.options.ignoreChanges,
                protect: r.options.protect,
                additionalSecretOutputs: r.options.additionalSecretOutputs,
            },
            ...(r.parent && byName.has(r.parent) ? { parent: urns.get(byName.get(r.parent) as RenderedResource) } : {}),
            ...(awsProvider && r.type.startsWith("aws:")
                ? {
                      provider: {
                          type: awsProvider.type,
                          name: awsProvider.name,
                          urn: urns.get(awsProvider) as string,
                          props: engineValue(awsProvider.inputs) as Record<string, unknown>,
                      },
                  }
                : {}),
        }));
}
