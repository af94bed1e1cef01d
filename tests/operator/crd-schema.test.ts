import fc from "fast-check";
import { type JsonSchema, schemaViolations } from "../../components/operator/crd-schema";
import { WIDGET_V1_SCHEMA } from "../helpers/operators";

const widget = (spec: unknown, extra: Record<string, unknown> = {}) => ({
    apiVersion: "samples.cluster-platform.io/v1",
    kind: "Widget",
    metadata: { name: "gadget", namespace: "team", uid: "u", resourceVersion: "7" },
    spec,
    ...extra,
});

describe("custom resources against a CRD version's schema (what OLM's validateExistingCRs asks of kube-openapi)", () => {
    test("GIVEN widgets the API server accepts WHEN validated THEN nothing is reported (metadata and fields the schema does not declare are not judged)", () => {
        for (const object of [widget({ replicas: 1 }), widget({ replicas: 10, color: "blue" }), widget({ replicas: 3, extra: "kept" })]) {
            expect(schemaViolations(object, WIDGET_V1_SCHEMA as JsonSchema)).toEqual([]);
        }
    });

    test("GIVEN widgets that break the schema in each way WHEN validated THEN every violation is reported with its path and value, in field order", () => {
        expect(schemaViolations(widget({ color: "pink" }, { status: { readyReplicas: 1.5 } }), WIDGET_V1_SCHEMA as JsonSchema)).toEqual([
            { path: "spec", message: `required field "replicas" is missing` },
            { path: "spec.color", message: `a string of 4 characters is not one of "red", "green", "blue"` },
            { path: "status.readyReplicas", message: "1.5 is not of type integer" },
        ]);
        expect(schemaViolations(widget({ replicas: 11 }), WIDGET_V1_SCHEMA as JsonSchema)).toEqual([
            { path: "spec.replicas", message: "11 is above the maximum 10" },
        ]);
        expect(schemaViolations(widget({ replicas: "3" }), WIDGET_V1_SCHEMA as JsonSchema)).toEqual([
            { path: "spec.replicas", message: "a string of 1 character is not of type integer" },
        ]);
        expect(schemaViolations(widget(null), WIDGET_V1_SCHEMA as JsonSchema)).toEqual([
            { path: "spec", message: "null is not allowed (type object, not nullable)" },
        ]);
    });

    test("GIVEN strings, arrays and maps WHEN validated THEN lengths count characters, and counts, uniqueness, patterns, formats and additionalProperties apply", () => {
        const schema: JsonSchema = {
            type: "object",
            properties: {
                name: { type: "string", minLength: 2, maxLength: 3, pattern: "^[a-zé]+$" },
                tags: { type: "array", minItems: 1, maxItems: 2, uniqueItems: true, items: { type: "string" } },
                labels: { type: "object", maxProperties: 1, additionalProperties: { type: "string" } },
                closed: { type: "object", additionalProperties: false, properties: { a: { type: "integer" } } },
                id: { type: "string", format: "uuid" },
                ip: { type: "string", format: "ipv4" },
                when: { type: "string", format: "date-time" },
            },
        };
        expect(
            schemaViolations(
                {
                    name: "éé",
                    tags: ["a"],
                    labels: { a: "b" },
                    closed: { a: 1 },
                    id: "0A1B2C3D4E5F60718293A4B5C6D7E8F9",
                    ip: "010.0.0.1",
                    when: "later",
                },
                schema,
            ),
        ).toEqual([]);
        expect(
            schemaViolations(
                { name: "abcd", tags: ["a", "a", "b"], labels: { a: "b", c: 1 }, closed: { b: 1 }, id: "nope", ip: "1.2.3.256" },
                schema,
            ),
        ).toEqual([
            { path: "name", message: "a string of 4 characters is longer than 3 characters" },
            { path: "tags", message: "3 items, more than the maximum 2" },
            { path: "tags", message: "items are not unique" },
            { path: "labels", message: "2 fields, more than the maximum 1" },
            { path: "labels.c", message: "1 is not of type string" },
            { path: "closed.b", message: "field not declared by the schema (additionalProperties: false)" },
            { path: "id", message: "a string of 4 characters is not a valid uuid" },
            { path: "ip", message: "a string of 9 characters is not a valid ipv4" },
        ]);
        expect(schemaViolations({ name: "A1" }, schema)).toEqual([
            { path: "name", message: `a string of 2 characters does not match the pattern "^[a-zé]+$"` },
        ]);
    });

    test("GIVEN int-or-string, preserved unknown fields and combinators WHEN validated THEN each follows its rule", () => {
        const schema: JsonSchema = {
            type: "object",
            properties: {
                port: { "x-kubernetes-int-or-string": true, anyOf: [{ type: "integer" }, { type: "string", pattern: "^[a-z]+$" }] },
                raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true, additionalProperties: false },
                one: { type: "integer", oneOf: [{ minimum: 5 }, { maximum: 7 }] },
                never: { type: "string", not: { enum: ["forbidden"] } },
                both: { type: "integer", allOf: [{ minimum: 2 }, { multipleOf: 2 }] },
            },
        };
        expect(schemaViolations({ port: 8080, raw: { any: { thing: 1 } }, one: 3, never: "fine", both: 4 }, schema)).toEqual([]);
        expect(schemaViolations({ port: "http", one: 9 }, schema)).toEqual([]);
        expect(schemaViolations({ port: 1.5, one: 6, never: "forbidden", both: 3 }, schema)).toEqual([
            { path: "port", message: "1.5 is not of type integer or string" },
            { path: "one", message: "6 matches 2 of the oneOf schemas, not exactly one" },
            { path: "never", message: "a string of 9 characters matches the schema under not" },
            { path: "both", message: "3 is not a multiple of 2" },
        ]);
        expect(schemaViolations({ port: "HTTP" }, schema)).toEqual([
            { path: "port", message: "a string of 4 characters matches none of the anyOf schemas" },
        ]);
    });

    test("GIVEN any string a schema refuses WHEN reported THEN the message gives its length, never its text (a custom resource may hold a credential in any field)", () => {
        fc.assert(
            fc.property(
                fc.string({ maxLength: 30 }).map((text) => `§secret§${text}`),
                (secret) => {
                    const schema: JsonSchema = {
                        type: "object",
                        properties: { token: { type: "string", maxLength: 3, enum: ["a"], pattern: "^$" } },
                    };
                    const messages = schemaViolations({ token: secret }, schema).map((v) => v.message);
                    expect(messages.length).toBeGreaterThan(0);
                    expect(messages.filter((m) => m.includes(secret))).toEqual([]);
                },
            ),
        );
    });

    test("GIVEN a pattern JavaScript cannot compile (RE2 syntax) WHEN validated THEN nothing is refused for it", () => {
        expect(schemaViolations("x", { type: "string", pattern: "(?P<name>a)" })).toEqual([]);
    });

    test("GIVEN any integer and bounds WHEN validated THEN it is refused exactly when it lies outside them, with exclusive bounds excluding the bound", () => {
        fc.assert(
            fc.property(
                fc.integer({ min: -50, max: 50 }),
                fc.integer({ min: -50, max: 50 }),
                fc.integer({ min: -50, max: 50 }),
                fc.boolean(),
                (value, a, b, exclusive) => {
                    const [min, max] = a <= b ? [a, b] : [b, a];
                    const schema: JsonSchema = {
                        type: "integer",
                        minimum: min,
                        maximum: max,
                        exclusiveMinimum: exclusive,
                        exclusiveMaximum: exclusive,
                    };
                    const inside = exclusive ? value > min && value < max : value >= min && value <= max;
                    expect(schemaViolations(value, schema).length === 0).toBe(inside);
                },
            ),
        );
    });
});
