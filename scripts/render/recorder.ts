/**
 * Records every resource the program constructs, in construction order, with its options,
 * through a stack transformation (which, unlike resource transforms, runs under mocks).
 */
import * as pulumi from "@pulumi/pulumi";

export interface RecordedResource {
    resource: pulumi.Resource;
    type: string;
    name: string;
    opts: pulumi.CustomResourceOptions;
}

export function recordInto(records: RecordedResource[]): pulumi.ResourceTransformation {
    return ({ resource, type, name, opts }) => {
        records.push({ resource, type, name, opts: { ...opts } });
        return undefined;
    };
}

/** Resolves an Input that may hold resources (as `dependsOn` does) to the resources. */
export async function resourcesOf(input: unknown): Promise<pulumi.Resource[]> {
    if (input === undefined || input === null) {
        return [];
    }
    if (pulumi.Resource.isInstance(input)) {
        return [input];
    }
    if (pulumi.Output.isInstance(input)) {
        const inner = await new Promise<unknown>((resolve) => {
            (input as pulumi.Output<unknown>).apply((v) => {
                resolve(v);
                return v;
            });
        });
        return resourcesOf(inner);
    }
    if (input instanceof Promise) {
        return resourcesOf(await input);
    }
    if (Array.isArray(input)) {
        const nested = await Promise.all(input.map(resourcesOf));
        return nested.flat();
    }
    return [];
}
