import * as pulumi from "@pulumi/pulumi";
import { asResourceError, attributedTo } from "../../components/shared/resource-errors";

pulumi.runtime.setMocks(
    { newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }), call: (args) => args.inputs },
    "project",
    "stack",
    true,
);

describe("errors attributed to the resource they concern", () => {
    const component = new pulumi.ComponentResource("test:index:Thing", "thing");
    const other = new pulumi.ComponentResource("test:index:Other", "other");

    test("GIVEN a plain Error thrown inside WHEN attributed THEN it is a ResourceError of the resource with the same message, its stack kept but hidden from the report", () => {
        const original = new Error("no PEM certificate under key ca.crt");
        let thrown: unknown;
        try {
            attributedTo(component, () => {
                throw original;
            });
        } catch (error) {
            thrown = error;
        }
        expect(pulumi.ResourceError.isInstance(thrown)).toBe(true);
        const resourceError = thrown as pulumi.ResourceError;
        expect([resourceError.message, resourceError.resource, resourceError.hideStack, resourceError.stack]).toEqual([
            original.message,
            component,
            true,
            original.stack,
        ]);
    });

    test("GIVEN a TypeError, a bug rather than a reported problem WHEN attributed THEN its stack is shown", () => {
        const bug = new TypeError("Cannot read properties of undefined (reading 'metadata')");
        const converted = asResourceError(bug, component) as pulumi.ResourceError;
        expect([converted.message, converted.hideStack, converted.stack]).toEqual([bug.message, false, bug.stack]);
    });

    test("GIVEN a RunError WHEN attributed THEN its stack stays hidden, as a RunError's is", () => {
        const converted = asResourceError(new pulumi.RunError("would carry 51 tags"), component) as pulumi.ResourceError;
        expect([converted.message, converted.resource, converted.hideStack]).toEqual(["would carry 51 tags", component, true]);
    });

    test("GIVEN an error that already names a resource WHEN attributed to another THEN it keeps its own resource", () => {
        const own = new pulumi.ResourceError("issued twice", other);
        expect(asResourceError(own, component)).toBe(own);
    });

    test("GIVEN a thrown non-Error WHEN attributed THEN its text is the message; a result passes through unchanged", () => {
        expect((asResourceError("plain text", component) as pulumi.ResourceError).message).toBe("plain text");
        expect(attributedTo(component, () => 42)).toBe(42);
    });
});
