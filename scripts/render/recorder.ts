/**
 * Records every resource the program constructs, in construction order, with its options,
 * through a stack transformation (which, unlike resource transforms, runs under mocks).
 */
import * as pulumi from "@pulumi/pulumi";

export interface RecordedResource {
    resource: pulumi.Resource;
    type: string;
    name: string;
    /** The input properties as registered (after every transformation): Outputs keep their dependencies. */
    props: Record<string, unknown>;
    opts: pulumi.CustomResourceOptions;
}

export function recordInto(records: RecordedResource[]): pulumi.ResourceTransformation {
    return ({ resource, type, name, props, opts }) => {
        records.push({ resource, type, name, props: { ...props }, opts: { ...opts } });
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

/**
 * The resources each top-level property depends on, as the SDK sends them to the engine
 * (`propertyDependencies`): the resources of the Outputs inside it. `allResources` is the SDK's
 * own (internal) accessor, the one its serializer uses.
 */
export async function propertyDependenciesOf(props: Record<string, unknown>): Promise<Map<string, pulumi.Resource[]>> {
    const result = new Map<string, pulumi.Resource[]>();
    for (const [key, value] of Object.entries(props)) {
        const found = new Set<pulumi.Resource>();
        await collectOutputResources(value, found);
        if (found.size > 0) {
            result.set(key, [...found]);
        }
    }
    return result;
}

async function collectOutputResources(value: unknown, found: Set<pulumi.Resource>): Promise<void> {
    if (pulumi.Output.isInstance(value)) {
        const output = value as unknown as { allResources(): Promise<Set<pulumi.Resource>> };
        // An Output whose computation failed has no dependencies to show: its error is the
        // program's, reported with the others (a rejection here would replace them all).
        for (const resource of await output.allResources().catch(() => new Set<pulumi.Resource>())) {
            found.add(resource);
        }
        return;
    }
    if (Array.isArray(value)) {
        await Promise.all(value.map((v) => collectOutputResources(v, found)));
    } else if (value !== null && typeof value === "object" && !pulumi.Resource.isInstance(value)) {
        await Promise.all(Object.values(value).map((v) => collectOutputResources(v, found)));
    }
}
