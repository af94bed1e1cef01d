/**
 * Runs the real program (index.ts) in Pulumi's mock runtime and collects what a preview
 * would show: every resource with its inputs and options, the Kubernetes objects, reads,
 * warnings and errors. Used by `npm run render` and by the integration tests.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { sectionsFromPulumiConfig, validateStackConfig } from "../../components/config";
import { type ApiResource, DISCOVERED_API_RESOURCES } from "../../components/shared/api-resources";
import { groupVersionOf, setApiDiscovery, setApiKindDiscovery, setServerVersion } from "../../components/shared/discovery";
import { ObjectRead, Presence, setObjectLister, setObjectReader, setPresenceLookup } from "../../components/shared/object-presence";
import type { ObjectRef } from "../../components/shared/object-refs";
import { CONFIG_NAMESPACE, Problem } from "../../components/shared/problems";
import { ClusterState, typeTokenOf } from "./cluster-state";
import { FlatConfig } from "./config-file";
import currentClusterKinds from "./current-cluster-kinds.json";
import { ReadRecord, RenderMocks, ResourceCall, StateProducer } from "./mocks";
import { isSecretValue, present, SECRET, UNKNOWN } from "./present";
import { propertyDependenciesOf, recordInto, RecordedResource, resourcesOf } from "./recorder";
import { describeObject, validateManifests } from "./validate-k8s";

export const PROJECT_ROOT = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(PROJECT_ROOT, "index");

/** The optional APIs a current OpenShift cluster serves, as far as the program asks discovery. */
export const CURRENT_CLUSTER_APIS: Record<string, string[]> = {
    "admissionregistration.k8s.io/v1": ["validatingadmissionpolicies", "validatingadmissionpolicybindings"],
    "console.openshift.io/v1": ["consoleyamlsamples"],
};

/**
 * What discovery lists on a current OpenShift cluster, per group version: the kinds of
 * components/shared/api-resources.table.json's discovery (kube-apiserver, with the OpenShift and OLM
 * CRDs the real tier installs) and of current-cluster-kinds.json (the optional APIs an operator
 * bundle may ship objects of, and OpenShift's own APIs a CSV may name as nativeAPIs). The catalog's
 * Go oracle reads the same two files (tests/catalog/oracle/olm.go).
 */
export const CURRENT_CLUSTER_KINDS: Record<string, Record<string, { namespaced: boolean }>> = servedKindsOf(
    DISCOVERED_API_RESOURCES,
    (currentClusterKinds as { kinds: Record<string, Record<string, { namespaced: boolean }>> }).kinds,
);

/** Discovered resources and extra kinds, as one table of group version → kind → scope. */
function servedKindsOf(
    discovered: readonly ApiResource[],
    extra: Record<string, Record<string, { namespaced: boolean }>>,
): Record<string, Record<string, { namespaced: boolean }>> {
    const kinds: Record<string, Record<string, { namespaced: boolean }>> = {};
    for (const resource of discovered) {
        (kinds[groupVersionOf(resource.group, resource.version)] ??= {})[resource.kind] = { namespaced: resource.namespaced };
    }
    for (const [groupVersion, byKind] of Object.entries(extra)) Object.assign((kinds[groupVersion] ??= {}), byKind);
    return kinds;
}

/**
 * The `gitVersion` of a current cluster's API server (`GET /version`), which a CSV's minKubeVersion
 * is compared with (components/operator/min-kube-version.ts).
 */
export const CURRENT_CLUSTER_VERSION = "v1.34.1";

export interface RenderOptions {
    config: FlatConfig;
    /** Objects that exist in the cluster (`--cluster`); reads of anything else fail. */
    cluster?: ClusterState;
    /**
     * What the cluster's discovery serves, per group version (resource plurals); a group version
     * not named serves nothing. Default: CURRENT_CLUSTER_APIS (a current OpenShift).
     */
    servedApis?: Record<string, string[]>;
    /** What discovery lists per group version: kinds and their scope. Default: CURRENT_CLUSTER_KINDS. */
    servedKinds?: Record<string, Record<string, { namespaced: boolean }>>;
    /** The API server's `gitVersion`. Default: CURRENT_CLUSTER_VERSION. */
    serverVersion?: string;
    /** Outputs of this stack's previous update (`--stack-outputs`), for StackReferences to itself. */
    stackOutputs?: Record<string, unknown>;
    /** Stack name (default "render"). */
    stack?: string;
    /** `true` (default): preview semantics. `false`: up semantics, with `computed` outputs. */
    preview?: boolean;
    computed?: Record<string, StateProducer>;
    /** The program module to run (default: the project's index.ts); tests pass small fixtures. */
    program?: string;
}

export interface RenderedOptions {
    dependsOn: string[];
    ignoreChanges: string[];
    deleteBeforeReplace: boolean;
    protect: boolean;
    retainOnDelete: boolean;
    additionalSecretOutputs: string[];
    replaceOnChanges: string[];
    /** The resource's aliases: an alias that only renames is its old name, any other its JSON. */
    aliases: string[];
    /** Top-level input property → the resources its value depends on (what the engine records as propertyDependencies). */
    propertyDependencies: Record<string, string[]>;
    /** The provider named in the resource's own options (`provider`), when it has one; inherited providers are not shown. */
    provider?: string;
}

export interface RenderedResource {
    type: string;
    name: string;
    parent: string | null;
    /** For reads (`Resource.get`): the id that was read. */
    read?: string;
    inputs: Record<string, unknown>;
    options: RenderedOptions;
}

export interface RenderedManifest {
    /** File name under `kubernetes/` (patches under `kubernetes/patches/`). */
    file: string;
    patch: boolean;
    object: Record<string, unknown>;
}

export interface RenderResult {
    /** False when config was invalid (`problems`) or the program or validation failed (`errors`). */
    ok: boolean;
    problems: Problem[];
    errors: string[];
    warnings: string[];
    /** The program's info lines (`pulumi.log.info`), which a preview prints too. */
    infos: string[];
    resources: RenderedResource[];
    manifests: RenderedManifest[];
    reads: ReadRecord[];
    /** The program's metadata-only existence checks (`components/shared/object-presence.ts`), answered from `--cluster`. */
    lookups: { type: string; id: string; presence: Presence }[];
    /** Custom resource kinds rendered without a CRD schema to check them against. */
    unvalidatedKinds: string[];
    stackOutputs: Record<string, unknown>;
    /**
     * Registrations and warnings in the order the program made them (`resource <type>::<name>`,
     * `warning <text>`): a resource's entry is written by a stack transformation, which runs
     * synchronously in its constructor, so the order is the program's, not the mock monitor's.
     */
    timeline: string[];
}

function emptyResult(): RenderResult {
    return {
        ok: false,
        problems: [],
        errors: [],
        warnings: [],
        infos: [],
        resources: [],
        manifests: [],
        reads: [],
        lookups: [],
        unvalidatedKinds: [],
        stackOutputs: {},
        timeline: [],
    };
}

/** Captures the runtime's log lines (under mocks, pulumi.log writes to the console). */
function captureLogs(warnings: string[], errors: string[], infos: string[], timeline: string[]): () => void {
    const original = { warn: console.warn, error: console.error, log: console.log };
    const route =
        (line: string, fallback: (...args: unknown[]) => void) =>
        (...args: unknown[]) => {
            const text = args.map(String).join(" ");
            if (text.startsWith("warning: [runtime] ")) {
                warnings.push(text.slice("warning: [runtime] ".length));
                timeline.push(`warning ${text.slice("warning: [runtime] ".length)}`);
            } else if (text.startsWith("error: [runtime] ")) {
                errors.push(text.slice("error: [runtime] ".length));
            } else if (text.startsWith("info: [runtime] ")) {
                infos.push(text.slice("info: [runtime] ".length));
            } else if (!text.startsWith("debug: [runtime] ")) {
                fallback(...args);
            }
            void line;
        };
    console.warn = route("warn", original.warn);
    console.error = route("error", original.error);
    console.log = route("log", original.log);
    return () => Object.assign(console, original);
}

/**
 * Registers `tail` as the stack's last transformations, and keeps them last when the program
 * registers its own (index.ts registers the tagging safety net): the recorder must see each
 * resource's final options, as the engine receives them. The SDK applies a resource's own, then
 * its parents', then the stack's transformations in registration order, and
 * `registerStackTransformation` replaces the stack's list with a longer one each time
 * (@pulumi/pulumi runtime/stack.js, resource.js), so the list is re-ordered on every write.
 */
function keepLastStackTransformations(tail: pulumi.ResourceTransformation[]): void {
    const stack = pulumi.runtime.getStackResource() as unknown as { __transformations?: pulumi.ResourceTransformation[] };
    let list = [...(stack.__transformations ?? []).filter((t) => !tail.includes(t)), ...tail];
    Object.defineProperty(stack, "__transformations", {
        configurable: true,
        get: () => list,
        set: (next: pulumi.ResourceTransformation[]) => {
            list = [...next.filter((t) => !tail.includes(t)), ...tail];
        },
    });
}

export async function renderProgram(options: RenderOptions): Promise<RenderResult> {
    const result = emptyResult();
    const validation = validateStackConfig(sectionsFromPulumiConfig(options.config.values));
    if (!validation.ok) {
        result.problems = validation.problems;
        return result;
    }

    const records: RecordedResource[] = [];
    // The engine makes the outputs named in additionalSecretOutputs secret (a read Secret's data,
    // say); the mock monitor does not, so the mocks do it from the options the recorder saw.
    const secretOutputs = new Map<string, string[]>();
    const mocks = new RenderMocks({
        preview: options.preview ?? true,
        cluster: options.cluster,
        stackOutputs: options.stackOutputs,
        computed: options.computed,
        secretOutputs: (type, name) => secretOutputs.get(callKey(type, name)) ?? [],
    });
    // "organization" is what the engine reports for self-managed (DIY) backends.
    await pulumi.runtime.setMocks(mocks, CONFIG_NAMESPACE, options.stack ?? "render", options.preview ?? true, "organization");
    pulumi.runtime.setAllConfig(options.config.values, options.config.secretKeys);

    const restoreConsole = captureLogs(result.warnings, result.errors, result.infos, result.timeline);
    // The program asks the API server whether objects exist (metadata only, outside the engine);
    // the render answers from --cluster, and records only what was asked and the answer.
    setPresenceLookup(async (refs) => refs.map((ref) => lookUp(ref, options.cluster, result.lookups)));
    // Whole-object reads (never Secrets) are answered from --cluster the same way.
    setObjectReader(async (refs) => refs.map((ref) => readFrom(ref, options.cluster, result.lookups)));
    // Lists answer with the file's objects of that apiVersion as they are (the render converts nothing).
    setObjectLister(async (ref) => options.cluster?.all(typeTokenOf(ref.apiVersion, ref.kind)) ?? "unknown");
    const served = options.servedApis ?? CURRENT_CLUSTER_APIS;
    setApiDiscovery(async (groupVersion) => new Set(served[groupVersion] ?? []));
    const kinds = options.servedKinds ?? CURRENT_CLUSTER_KINDS;
    setApiKindDiscovery(async (groupVersion) => (kinds[groupVersion] ? new Map(Object.entries(kinds[groupVersion])) : undefined));
    const gitVersion = options.serverVersion ?? CURRENT_CLUSTER_VERSION;
    setServerVersion(async () => gitVersion);
    // An error thrown inside an apply rejects the inputs of the resources that use it, which are
    // then never registered. The engine's language host reports each such rejection once, as an
    // error, and the program fails; so does the render, instead of waiting for those resources.
    const rejections: unknown[] = [];
    let programFailed: () => void = () => undefined;
    const failed = new Promise<"failed">((resolve) => (programFailed = () => resolve("failed")));
    const onRejection = (reason: unknown) => {
        if (!rejections.includes(reason)) {
            rejections.push(reason);
        }
        programFailed();
    };
    process.on("unhandledRejection", onRejection);
    // The program's own failure (index.ts throws a RunError when a pre-flight check finds
    // problems) is caught inside the stack: rethrown, it would also reject the stack resource's
    // output promise, which nothing observes, and be reported twice.
    let thrown = false;
    try {
        let programOutputs: unknown = {};
        const run = async () => {
            await pulumi.runtime.runInPulumiStack(async () => {
                keepLastStackTransformations([
                    recordInto(records),
                    ({ type, name, opts }) => {
                        result.timeline.push(`resource ${type}::${name}`);
                        const names = (opts as pulumi.CustomResourceOptions).additionalSecretOutputs;
                        if (names?.length) {
                            secretOutputs.set(callKey(type, name), names);
                        }
                        return undefined;
                    },
                ]);
                const program = require(options.program ?? PROGRAM) as () => Promise<Record<string, unknown>>;
                try {
                    programOutputs = await program();
                    return programOutputs as Record<string, unknown>;
                } catch (error) {
                    thrown = true;
                    result.errors.push(errorText(error));
                    return {};
                }
            });
            await pulumi.runtime.disconnect();
            return programOutputs;
        };
        const outputs = await Promise.race([run(), failed]);
        if (outputs !== "failed" && !thrown) {
            // The program's own Outputs, not the stack's resolved values: those lose secretness.
            result.stackOutputs = present(await settled(outputs ?? {})) as Record<string, unknown>;
        }
    } catch (error) {
        // The stack's run rejects with an error a stack output carried (CaInjection's outcomes):
        // the same object as an unhandled rejection of a resource's inputs, reported once, as the
        // SDK's handler does (cmd/run/run.js, isErrorReported).
        onRejection(error);
    } finally {
        // Rejections settle a few turns apart; collect them until no more arrive.
        for (let seen = -1; seen !== rejections.length;) {
            seen = rejections.length;
            await new Promise((resolve) => setImmediate(resolve));
        }
        process.off("unhandledRejection", onRejection);
        setPresenceLookup(undefined);
        setObjectReader(undefined);
        setObjectLister(undefined);
        setApiDiscovery(undefined);
        setApiKindDiscovery(undefined);
        setServerVersion(undefined);
        restoreConsole();
    }
    result.errors.push(...rejections.map(errorText));

    result.reads = mocks.reads;
    // A read of a missing object fails a preview with the provider's message. The mocks answer
    // such reads with unknown values (so no Output rejects unobserved) and the failure is
    // reported here, where the engine would report it.
    for (const read of mocks.reads.filter((r) => r.outcome === "missing")) {
        result.errors.push(`${read.type} (${read.name}): Preview failed: resource '${read.id}' does not exist`);
    }
    // A failed program leaves Outputs that never settle, so their dependencies are only traced
    // for a program that ran through (the failure is what such a render reports).
    result.resources = await describeResources(records, mocks.calls, result.errors.length === 0);
    if (options.cluster === undefined) {
        const unchecked = mocks.reads.filter((r) => r.outcome === "unknown");
        if (unchecked.length > 0) {
            result.warnings.push(
                `no --cluster file: ${unchecked.length} pre-flight read${unchecked.length === 1 ? "" : "s"} not done (values unknown): ${unchecked.map((r) => `${r.type} ${r.id}`).join(", ")}`,
            );
        }
    }
    result.manifests = manifestsOf(result.resources, mocks.calls);
    for (const object of unnamedObjects(result.manifests)) {
        result.errors.push(
            `${object}: has no metadata.name; Pulumi would auto-name it with a random suffix, so previews would not be deterministic`,
        );
    }
    const checked = validateManifests(result.manifests.filter((m) => !m.patch).map((m) => m.object));
    result.unvalidatedKinds = checked.unvalidated;
    result.errors.push(...checked.problems.map((p) => `${p.object}: ${p.message}`));
    result.ok = result.errors.length === 0;
    return result;
}

function lookUp(ref: ObjectRef, cluster: ClusterState | undefined, into: RenderResult["lookups"]): Presence {
    const type = typeTokenOf(ref.apiVersion, ref.kind);
    const id = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
    const presence: Presence = cluster === undefined ? "unknown" : cluster.find(type, id) ? "present" : "absent";
    into.push({ type, id, presence });
    return presence;
}

function readFrom(ref: ObjectRef, cluster: ClusterState | undefined, into: RenderResult["lookups"]): ObjectRead {
    lookUp(ref, cluster, into);
    const object = cluster?.find(typeTokenOf(ref.apiVersion, ref.kind), ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name);
    return cluster === undefined ? "unknown" : (object ?? "absent");
}

/** Resolves the Outputs in `value`, keeping what a preview shows of them: secrets and unknowns as markers. */
async function settled(value: unknown): Promise<unknown> {
    if (pulumi.Output.isInstance(value)) {
        // Internal members of OutputImpl, the only way to see an Output's known/secret flags.
        const output = value as unknown as { isKnown: Promise<boolean>; isSecret: Promise<boolean>; promise(): Promise<unknown> };
        const [known, secret] = await Promise.all([output.isKnown, output.isSecret]);
        if (!known) {
            return UNKNOWN;
        }
        return secret ? SECRET : settled(await output.promise());
    }
    if (value instanceof Promise) {
        return settled(await value);
    }
    if (Array.isArray(value)) {
        return Promise.all(value.map(settled));
    }
    if (value !== null && typeof value === "object" && !pulumi.Resource.isInstance(value)) {
        const entries = await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await settled(v)] as const));
        return Object.fromEntries(entries);
    }
    return value;
}

/**
 * An error as the CLI shows it. A ResourceError is reported under its resource's row (the SDK
 * logs it with the resource's URN: pulumi/pulumi sdk/nodejs/cmd/run/run.ts); the render names the
 * resource the way it names a failed read, `<type> (<name>): <message>`.
 */
function errorText(error: unknown): string {
    if (pulumi.ResourceError.isInstance(error) && error.resource !== undefined) {
        return `${pulumi.resourceType(error.resource)} (${pulumi.resourceName(error.resource)}): ${error.message}`;
    }
    if (error instanceof Error) {
        return error.message;
    }
    return String(error);
}

function callKey(type: string, name: string): string {
    return `${type}::${name}`;
}

function describeAlias(alias: pulumi.Input<string | pulumi.Alias>): string {
    if (typeof alias === "string") {
        return alias;
    }
    const keys = Object.keys(alias as object);
    const name = (alias as pulumi.Alias).name;
    return keys.length === 1 && typeof name === "string" ? name : JSON.stringify(alias);
}

async function describeResources(
    records: RecordedResource[],
    calls: ResourceCall[],
    traceDependencies: boolean,
): Promise<RenderedResource[]> {
    const callsByKey = new Map<string, ResourceCall>();
    for (const call of calls) {
        callsByKey.set(callKey(call.type, call.name), call);
    }
    const names = new Map<pulumi.Resource, string>(records.map((r) => [r.resource, r.name]));
    const rendered: RenderedResource[] = [];
    for (const record of records) {
        const call = callsByKey.get(callKey(record.type, record.name));
        const parent = record.opts.parent ? (names.get(record.opts.parent) ?? null) : null;
        const dependsOn = (await resourcesOf(record.opts.dependsOn)).map((r) => names.get(r) ?? "(not recorded)");
        const propertyDependencies = Object.fromEntries(
            [...(traceDependencies ? await propertyDependenciesOf(record.props) : new Map<string, pulumi.Resource[]>())].map(
                ([key, resources]) => [key, resources.map((r) => names.get(r) ?? "(not recorded)")],
            ),
        );
        const inputs = { ...(call?.inputs ?? {}) };
        // Properties named in additionalSecretOutputs are secret in state and shown so in a
        // preview (the Kubernetes SDK names a Secret's data and stringData this way).
        for (const field of record.opts.additionalSecretOutputs ?? []) {
            if (inputs[field] !== undefined && !isSecretValue(inputs[field])) {
                inputs[field] = SECRET;
            }
        }
        rendered.push({
            type: record.type,
            name: record.name,
            parent,
            ...(call?.readId !== undefined ? { read: call.readId } : {}),
            inputs: present(inputs) as Record<string, unknown>,
            options: {
                dependsOn,
                ignoreChanges: record.opts.ignoreChanges ?? [],
                deleteBeforeReplace: record.opts.deleteBeforeReplace ?? false,
                protect: record.opts.protect ?? false,
                retainOnDelete: record.opts.retainOnDelete ?? false,
                additionalSecretOutputs: record.opts.additionalSecretOutputs ?? [],
                replaceOnChanges: record.opts.replaceOnChanges ?? [],
                aliases: (record.opts.aliases ?? []).map(describeAlias),
                propertyDependencies,
                ...(providerOf(record.opts) ? { provider: names.get(providerOf(record.opts) as pulumi.Resource) ?? "(not recorded)" } : {}),
            },
        });
    }
    return rendered;
}

function manifestsOf(resources: RenderedResource[], calls: ResourceCall[]): RenderedManifest[] {
    const custom = new Set(calls.filter((c) => c.custom).map((c) => callKey(c.type, c.name)));
    const manifests: RenderedManifest[] = [];
    const used = new Set<string>();
    for (const resource of resources) {
        if (!resource.type.startsWith("kubernetes:") || resource.read !== undefined) {
            continue;
        }
        if (!custom.has(callKey(resource.type, resource.name))) {
            continue;
        }
        const object = resource.inputs as { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
        if (typeof object.apiVersion !== "string" || typeof object.kind !== "string") {
            continue;
        }
        const patch = resource.type.endsWith("Patch");
        const group = object.apiVersion.includes("/") ? object.apiVersion.split("/")[0] : "core";
        const base = [object.kind, group, object.metadata?.namespace ?? "cluster", object.metadata?.name ?? resource.name]
            .join("_")
            .replace(/[^A-Za-z0-9_.-]/g, "-");
        let file = `${patch ? "patches/" : ""}${base}.yaml`;
        for (let n = 2; used.has(file); n++) {
            file = `${patch ? "patches/" : ""}${base}-${n}.yaml`;
        }
        used.add(file);
        manifests.push({ file, patch, object: resource.inputs });
    }
    return manifests;
}

/** Objects without metadata.name would be auto-named with a random suffix: never deterministic. */
export function unnamedObjects(manifests: RenderedManifest[]): string[] {
    return manifests.filter((m) => !(m.object.metadata as { name?: unknown } | undefined)?.name).map((m) => describeObject(m.object));
}

/** The provider a custom resource's own options name (`provider`), if any. */
function providerOf(opts: pulumi.ResourceOptions): pulumi.ProviderResource | undefined {
    return (opts as pulumi.CustomResourceOptions).provider;
}
