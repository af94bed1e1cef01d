/**
 * Records the inputs the engine receives for chosen resource types, secrets unwrapped, for
 * tests that check real values (`renderProgram` presents secrets as "[secret]").
 */
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import type { ResourceCall, StateProducer } from "../../scripts/render/mocks";

function reveal(value: unknown): unknown {
    if (Array.isArray(value)) {
        return value.map(reveal);
    }
    if (value !== null && typeof value === "object") {
        const record = value as Record<string, unknown>;
        if (record[specialSigKey] === specialSecretSig) {
            return reveal(record.value);
        }
        return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, reveal(v)]));
    }
    return value;
}

export class Capture {
    /** Inputs by resource name, of the last registration. */
    readonly inputs = new Map<string, Record<string, unknown>>();

    /** Producers that record `types` (and compute nothing); spread them after other producers. */
    producers(...types: string[]): Record<string, StateProducer> {
        return Object.fromEntries(
            types.map((type) => [
                type,
                (call: ResourceCall) => {
                    this.inputs.set(call.name, reveal(call.inputs) as Record<string, unknown>);
                    return {};
                },
            ]),
        );
    }

    get(name: string): Record<string, unknown> {
        const found = this.inputs.get(name);
        if (!found) {
            throw new Error(`no inputs recorded for ${name}: ${[...this.inputs.keys()].join(", ")}`);
        }
        return found;
    }
}
