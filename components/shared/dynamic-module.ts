/**
 * How a dynamic provider reaches its code. The Node.js SDK serializes a
 * `pulumi.dynamic.ResourceProvider`, its methods' closures included, into the resource's
 * `__provider` input (so into state), and the dynamic provider plugin deserializes and runs it in a
 * process of its own (pulumi/pulumi sdk/nodejs/dynamic/index.ts serializeProvider;
 * sdk/nodejs/cmd/dynamic-provider/index.ts). So a provider holds one relative module path and
 * nothing else, and loads that module (and through it every library) at call time with `loadModule`.
 * Neutral: it imports nothing at module level, so its function serializes by value.
 */

/** `file` (a module beside `dirname`, without extension) relative to the working directory: the project directory, for the program and the provider alike. */
export function moduleRelativeToWorkingDirectory(dirname: string, file: string): string {
    const path = require("node:path") as typeof import("node:path");
    return path.relative(process.cwd(), path.join(dirname, file)).split(path.sep).join("/");
}

/**
 * Loads `module` (relative to the working directory): compiled JavaScript, or TypeScript through
 * whatever loader this process has (ts-node, jest), else through tsx, the project's TypeScript runner.
 */
export function loadModule<T>(module: string): T {
    const absolute = require("node:path").resolve(module) as string;
    try {
        return require(absolute) as T;
    } catch (error) {
        if ((error as { code?: string }).code !== "MODULE_NOT_FOUND" || !String((error as Error).message).includes(absolute)) {
            throw error;
        }
        return require("tsx/cjs/api").require(`${absolute}.ts`, absolute) as T;
    }
}
