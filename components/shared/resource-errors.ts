/**
 * Errors attributed to the resource they concern. The pure modules throw plain Errors (they
 * import nothing from Pulumi); components convert at their boundary, so the CLI shows the error
 * under the resource's row: the SDK logs a `pulumi.ResourceError` with its resource's URN
 * (pulumi/pulumi sdk/nodejs/cmd/run/run.ts, the uncaught-error handler), and the engine keeps the
 * same error object through property serialization (sdk/nodejs/runtime/rpc.ts,
 * serializeProperties, which prefixes the property name but rethrows the same error).
 */
import * as pulumi from "@pulumi/pulumi";

/** The error as a ResourceError of `resource` (one that already names a resource is kept). */
export function asResourceError(error: unknown, resource: pulumi.Resource): Error {
    if (pulumi.ResourceError.isInstance(error)) {
        return error;
    }
    // A plain Error is how a pure module reports a problem: its message is the whole report, so its
    // stack stays hidden, as a RunError's does. Shown, the Node SDK prints util.inspect of the error
    // (cmd/run/run.js, error.js defaultErrorMessage): "<ref *1> ResourceError: …", the stack, and
    // the resource dumped with it, as the real tier's CLI output showed. Any other Error (a
    // TypeError, a RangeError) is a bug, and keeps its stack.
    const reportsAProblem = error instanceof pulumi.RunError || (error instanceof Error && error.constructor === Error);
    const resourceError = new pulumi.ResourceError(error instanceof Error ? error.message : String(error), resource, reportsAProblem);
    if (error instanceof Error && error.stack) {
        resourceError.stack = error.stack;
    }
    return resourceError;
}

/** Runs `compute` (an apply callback, a constructor step) so that what it throws is attributed to `resource`. */
export function attributedTo<T>(resource: pulumi.Resource, compute: () => T): T {
    try {
        return compute();
    } catch (error) {
        throw asResourceError(error, resource);
    }
}
