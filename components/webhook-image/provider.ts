/**
 * The WebhookImage dynamic provider. It holds one relative module path and nothing else: each
 * method but `diff` loads the operations module (and through it every library) at call time
 * (components/shared/dynamic-module.ts), and registry credentials are looked up from the
 * environment then, never captured. `diff` (diff.ts) is serialized with the provider.
 */
import type * as pulumi from "@pulumi/pulumi";
import { loadModule, moduleRelativeToWorkingDirectory } from "../shared/dynamic-module";
import { diffImage } from "./diff";
import type * as Operations from "./operations";

/** The operations module, relative to the working directory (the project directory, for the program and the provider alike). */
const OPERATIONS_MODULE = moduleRelativeToWorkingDirectory(__dirname, "operations");

/** The operations module, loaded in the provider's process at call time. */
function loadOperations(module: string): typeof Operations {
    return loadModule<typeof Operations>(module);
}

export class WebhookImageProvider implements pulumi.dynamic.ResourceProvider {
    constructor(private readonly operationsModule: string = OPERATIONS_MODULE) {}

    async diff(_id: string, olds: Operations.WebhookImageOutputs, news: Operations.WebhookImageInputs): Promise<pulumi.dynamic.DiffResult> {
        // Serialized by value (diff.ts is neutral): answered without loading the operations module.
        return diffImage(olds, news);
    }

    async create(inputs: Operations.WebhookImageInputs): Promise<pulumi.dynamic.CreateResult> {
        return loadOperations(this.operationsModule).createImage(inputs);
    }

    async update(
        _id: string,
        olds: Operations.WebhookImageOutputs,
        news: Operations.WebhookImageInputs,
    ): Promise<pulumi.dynamic.UpdateResult> {
        return loadOperations(this.operationsModule).updateImage(olds, news);
    }

    async read(id: string, props: Operations.WebhookImageOutputs): Promise<pulumi.dynamic.ReadResult> {
        return loadOperations(this.operationsModule).readImage(id, props);
    }

    async delete(_id: string, props: Operations.WebhookImageOutputs): Promise<void> {
        await loadOperations(this.operationsModule).deleteImage(props);
    }
}
