/**
 * The WebhookImage dynamic provider. The Node.js SDK serializes this object, its methods'
 * closures included, into the resource's `__provider` input (so into state), and the dynamic
 * provider plugin deserializes and runs it in a process of its own (pulumi/pulumi
 * sdk/nodejs/dynamic/index.ts serializeProvider; sdk/nodejs/cmd/dynamic-provider/index.ts). So it
 * holds one relative module path and nothing else: each method loads the operations module (and
 * through it every library) at call time, and registry credentials are looked up from the
 * environment then, never captured.
 */
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type * as Operations from "./operations";

/** The operations module, relative to the working directory (the project directory, for the program and the provider alike). */
const OPERATIONS_MODULE = path.relative(process.cwd(), path.join(__dirname, "operations")).split(path.sep).join("/");

/**
 * Loads `module` (relative to the working directory): compiled JavaScript, or TypeScript through
 * whatever loader this process has (ts-node, jest), else through tsx, the project's TypeScript runner.
 */
function loadOperations(module: string): typeof Operations {
    const absolute = require("node:path").resolve(module) as string;
    try {
        return require(absolute);
    } catch (error) {
        if ((error as { code?: string }).code !== "MODULE_NOT_FOUND" || !String((error as Error).message).includes(absolute)) {
            throw error;
        }
        return require("tsx/cjs/api").require(`${absolute}.ts`, absolute);
    }
}

export class WebhookImageProvider implements pulumi.dynamic.ResourceProvider {
    constructor(private readonly operationsModule: string = OPERATIONS_MODULE) {}

    async diff(_id: string, olds: Operations.WebhookImageOutputs, news: Operations.WebhookImageInputs): Promise<pulumi.dynamic.DiffResult> {
        return loadOperations(this.operationsModule).diffImage(olds, news);
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
