/**
 * The engine stand-in for offline renders and tests: answers resource registrations the
 * way a preview does (inputs become outputs; anything else is unknown), reads from the
 * `--cluster` objects, StackReferences from `--stack-outputs`, and the few invokes the
 * program makes.
 */
import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { ClusterState } from "./cluster-state";

/** One registration or read the program made, with its inputs as the engine received them. */
export interface ResourceCall {
    type: string;
    name: string;
    /** Deserialized inputs: secrets keep their signature, unknowns are `pulumi.unknown`. */
    inputs: Record<string, unknown>;
    custom: boolean;
    /** Set for reads (`Resource.get`), the id that was read. */
    readId?: string;
    /** The explicit provider reference (`<urn>::<id>`), when the resource was given one. */
    provider?: string;
}

/** How a read was answered. */
export type ReadOutcome = "found" | "unknown" | "missing";

export interface ReadRecord {
    type: string;
    name: string;
    id: string;
    outcome: ReadOutcome;
}

/** Computes a resource's outputs; may answer later (e.g. signing with WebCrypto), as the engine would. */
export type StateProducer = (call: ResourceCall) => Record<string, unknown> | Promise<Record<string, unknown>>;

export interface RenderMocksOptions {
    /** True for `pulumi preview` semantics (computed outputs unknown); false for `up` (tests that need values). */
    preview: boolean;
    /** Objects that exist in the cluster; without it, every read answers with unknown values. */
    cluster?: ClusterState;
    /** Outputs of this stack's last update, for StackReferences to it. */
    stackOutputs?: Record<string, unknown>;
    /** Per-type producers of computed outputs in `up` mode (e.g. real certificates for tls resources). */
    computed?: Record<string, StateProducer>;
    /** The outputs a resource's options name in additionalSecretOutputs, made secret as the engine does. */
    secretOutputs?: (type: string, name: string) => string[];
    /** Fake AWS account and region for invokes. */
    awsAccountId?: string;
}

export const STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference";

/**
 * What the API server adds to a Kubernetes object it creates and the program may use (an
 * ownerReference needs the owner's uid): a uid, stable per resource so renders stay repeatable.
 */
function serverFields(call: ResourceCall): Record<string, unknown> {
    const metadata = call.inputs.metadata;
    if (
        !call.custom ||
        !call.type.startsWith("kubernetes:") ||
        call.type.startsWith("pulumi:providers:") ||
        typeof metadata !== "object" ||
        metadata === null
    ) {
        return {};
    }
    const hex = createHash("sha256").update(`${call.type}::${call.name}`).digest("hex");
    const uid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    return { metadata: { ...metadata, uid } };
}

export class RenderMocks implements pulumi.runtime.Mocks {
    readonly calls: ResourceCall[] = [];
    readonly reads: ReadRecord[] = [];

    constructor(private readonly options: RenderMocksOptions) {}

    newResource(args: pulumi.runtime.MockResourceArgs): pulumi.runtime.MockResourceResult | Promise<pulumi.runtime.MockResourceResult> {
        const call: ResourceCall = {
            type: args.type,
            name: args.name,
            inputs: args.inputs ?? {},
            custom: args.custom ?? false,
            readId: args.id === undefined || args.id === "" ? undefined : args.id,
            ...(args.provider ? { provider: args.provider } : {}),
        };
        this.calls.push(call);
        const finish = (result: pulumi.runtime.MockResourceResult) => ({ ...result, state: this.withSecretOutputs(call, result.state) });
        const result = call.readId !== undefined ? this.read(call, call.readId) : this.create(call);
        // Only a producer that answers later makes the registration wait; the rest answer at once, as before.
        return result instanceof Promise ? result.then(finish) : finish(result);
    }

    private create(call: ResourceCall): pulumi.runtime.MockResourceResult | Promise<pulumi.runtime.MockResourceResult> {
        if (this.options.preview) {
            // A preview does not know the ids of resources it would create.
            return { id: undefined, state: { ...call.inputs } };
        }
        const created = (computed: Record<string, unknown> | undefined) => ({
            id: `${call.name}-id`,
            state: { ...call.inputs, ...serverFields(call), ...(computed ?? {}) },
        });
        const computed = this.options.computed?.[call.type]?.(call);
        return computed instanceof Promise ? computed.then(created) : created(computed);
    }

    private withSecretOutputs(call: ResourceCall, state: Record<string, unknown>): Record<string, unknown> {
        const names = this.options.secretOutputs?.(call.type, call.name) ?? [];
        const out = { ...state };
        for (const name of names) {
            if (out[name] !== undefined) {
                // The wire form of a secret, which the SDK turns into a secret Output.
                out[name] = { [specialSigKey]: specialSecretSig, value: out[name] };
            }
        }
        return out;
    }

    call(args: pulumi.runtime.MockCallArgs): pulumi.runtime.MockCallResult {
        const account = this.options.awsAccountId ?? "000000000000";
        switch (args.token) {
            case "aws:index/getCallerIdentity:getCallerIdentity":
                return { accountId: account, arn: `arn:aws:iam::${account}:user/render`, userId: "RENDER", id: account };
            case "aws:index/getPartition:getPartition":
                return { partition: "aws", dnsSuffix: "amazonaws.com", reverseDnsPrefix: "com.amazonaws", id: "aws" };
            case "aws:index/getRegion:getRegion":
                return { name: args.inputs.name ?? "us-east-1", region: args.inputs.region ?? "us-east-1", id: "region" };
            default:
                throw new Error(`the offline render has no answer for invoke ${args.token}`);
        }
    }

    private read(call: ResourceCall, id: string): pulumi.runtime.MockResourceResult {
        if (call.type === STACK_REFERENCE_TYPE) {
            return {
                id,
                state: { name: id, outputs: this.options.stackOutputs ?? {}, secretOutputNames: [] },
            };
        }
        if (!this.options.cluster) {
            this.reads.push({ type: call.type, name: call.name, id, outcome: "unknown" });
            return { id, state: {} };
        }
        const object = this.options.cluster.find(call.type, id);
        if (!object) {
            // The render reports this as the failure a preview would show; answering with
            // unknown values here keeps the program's Outputs from rejecting unobserved.
            this.reads.push({ type: call.type, name: call.name, id, outcome: "missing" });
            return { id, state: {} };
        }
        this.reads.push({ type: call.type, name: call.name, id, outcome: "found" });
        return { id, state: object };
    }
}
