/**
 * The one structural-schema validator (components/shared/structural-schema.ts). The expected
 * answers come from the API server, not from the code under test: structural-schema.cases.json was
 * written by tests/real/structural-schema.real.ts (STRUCTURAL_SCHEMA_TABLE=<file>), which created
 * each generated schema as a property of a CRD's `spec` on the real tier's kube-apiserver v1.36.3 and
 * dry-ran each object (`dryRun=All`) with field validation `Ignore` (`accepted`: unknown fields
 * pruned, the pre-flight's mode) and `Strict` (`acceptedStrict`: the render's mode). The real tier
 * runs the same comparison afresh; this file replays that table under mocks, plus what no API server
 * answer can show: messages name strings by length, and the OpenAPI v3 forms that made the render's
 * former validator crash compile (`npm run test:catalog` compiles every CRD schema of the community
 * bundles).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { type JsonSchema, schemaViolations, structuralValidator } from "../../components/shared/structural-schema";

interface ServerCase {
    /** The CRD root's own keywords, for a case that had a CRD of its own. */
    root?: JsonSchema;
    schema: JsonSchema;
    value: unknown;
    accepted: boolean;
    acceptedStrict: boolean;
}

const CASES: ServerCase[] = JSON.parse(fs.readFileSync(path.join(__dirname, "structural-schema.cases.json"), "utf8"));

/**
 * Each case as the real tier sent it: 40 schemas as `spec.p0`..`spec.p39` of one CRD root (one
 * compiled validator per 40), each value alone at its own property; a case with root keywords
 * alone in a CRD whose root carries them.
 */
function verdicts(unknownFields: "ignore" | "refuse"): Map<ServerCase, boolean> {
    const out = new Map<ServerCase, boolean>();
    const plain = CASES.filter((c) => c.root === undefined);
    const batches = [
        ...Array.from({ length: Math.ceil(plain.length / 40) }, (_, i) => plain.slice(i * 40, (i + 1) * 40)),
        ...CASES.filter((c) => c.root !== undefined).map((c) => [c]),
    ];
    for (const batch of batches) {
        const properties = Object.fromEntries(batch.map((c, j) => [`p${j}`, c.schema]));
        const validate = structuralValidator(
            { type: "object", ...batch[0].root, properties: { spec: { type: "object", properties } } },
            { root: true, unknownFields },
        );
        batch.forEach((c, j) => {
            const object = {
                apiVersion: "schemas.cluster-platform.io/v1",
                kind: "S0",
                metadata: { name: `c${j}` },
                spec: { [`p${j}`]: c.value },
            };
            out.set(c, validate(object).length === 0);
        });
    }
    return out;
}

describe("the structural-schema validator (answers from the API server)", () => {
    test("GIVEN the API server's table WHEN read THEN it holds accepted and refused cases in both modes, and under CRD roots with size limits", () => {
        expect(CASES.length).toBeGreaterThanOrEqual(400);
        for (const key of ["accepted", "acceptedStrict"] as const) {
            expect(CASES.filter((c) => c[key]).length).toBeGreaterThan(CASES.length / 5);
            expect(CASES.filter((c) => !c[key]).length).toBeGreaterThan(CASES.length / 5);
        }
        // The CRDs whose root carries size limits: some objects there accepted, some refused.
        expect(new Set(CASES.filter((c) => c.root !== undefined).map((c) => c.accepted))).toEqual(new Set([true, false]));
    });

    test("GIVEN every case the API server answered WHEN validated pruning unknown fields THEN the validator accepts exactly what it accepted", () => {
        const ours = verdicts("ignore");
        const disagreements = CASES.filter((c) => ours.get(c) !== c.accepted).map((c) => JSON.stringify(c));
        expect(disagreements).toEqual([]);
    });

    test("GIVEN every case the API server answered WHEN validated refusing unknown fields THEN the validator accepts exactly what strict field validation accepted", () => {
        const ours = verdicts("refuse");
        const disagreements = CASES.filter((c) => ours.get(c) !== c.acceptedStrict).map((c) => JSON.stringify(c));
        expect(disagreements).toEqual([]);
    });

    test("GIVEN any string a schema refuses WHEN reported THEN the message gives its length, never its text (a custom resource may hold a credential in any field)", () => {
        fc.assert(
            fc.property(
                fc.string({ maxLength: 30 }).map((text) => `§secret§${text}`),
                (secret) => {
                    const schema: JsonSchema = {
                        type: "object",
                        properties: { token: { type: "string", maxLength: 3, enum: ["a"], pattern: "^$", format: "uuid" } },
                    };
                    const messages = schemaViolations({ token: secret }, schema).map((v) => `${v.path} ${v.message}`);
                    expect(messages.length).toBeGreaterThan(0);
                    expect(messages.filter((m) => m.includes(secret))).toEqual([]);
                },
            ),
        );
    });

    test("GIVEN the OpenAPI v3 forms the former render crashed on WHEN compiled THEN they validate (boolean exclusiveMinimum, nullable without type, a pattern only RE2 reads)", () => {
        const schema: JsonSchema = {
            type: "object",
            properties: {
                count: { type: "integer", minimum: 0, exclusiveMinimum: true },
                anything: { nullable: true, "x-kubernetes-preserve-unknown-fields": true },
                version: { type: "string", pattern: "^(latest)|([1-9]\\.[0-9]+\\-[a-z]+)$" },
                named: { type: "string", pattern: "(?P<name>a)" },
            },
        };
        const validate = structuralValidator(schema, { unknownFields: "refuse" });
        expect(validate({ count: 1, anything: null, version: "1.2-rc", named: "b" })).toEqual([]);
        expect(validate({ count: 0, version: "x", other: 1 })).toEqual([
            { path: "other", message: "is not in the schema (the API server would prune it)" },
            { path: "count", message: "0 is not above the minimum 0" },
            { path: "version", message: 'a string of 1 character does not match the pattern "^(latest)|([1-9]\\\\.[0-9]+\\\\-[a-z]+)$"' },
        ]);
    });
    test("GIVEN one object that breaks each keyword WHEN validated refusing unknown fields THEN every violation is named at its path, values by type and size, never by text", () => {
        const schema: JsonSchema = {
            type: "object",
            required: ["name"],
            properties: {
                name: { type: "string" },
                count: { type: "integer", minimum: 1, maximum: 5, exclusiveMaximum: true, multipleOf: 2 },
                low: { type: "integer", minimum: 2, exclusiveMinimum: true },
                high: { type: "number", maximum: 1 },
                tiny: { type: "integer", multipleOf: 0.5 },
                wide: { type: "integer", format: "int32", maximum: 2147483648 },
                // The API server drops uint32 (its table: a minimum of -1 refuses nothing), not int32.
                below: { type: "integer", format: "int32", minimum: -2147483649 },
                fraction: { type: "integer", minimum: 0.5 },
                zero: { type: "number", multipleOf: 0.4 },
                word: { type: "string", minLength: 3, maxLength: 4, pattern: "^a" },
                short: { type: "string", minLength: 3 },
                address: { type: "string", format: "ipv4" },
                mode: { type: "string", enum: ["on", "off"] },
                list: { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 3, uniqueItems: true },
                few: { type: "array", items: { type: "integer" }, minItems: 2 },
                labels: { type: "object", additionalProperties: { type: "string" }, minProperties: 2, maxProperties: 3 },
                big: { type: "object", additionalProperties: { type: "string" }, maxProperties: 1 },
                any: { type: "integer", anyOf: [{ minimum: 10 }, { maximum: -10 }] },
                one: { type: "integer", oneOf: [{ minimum: 0 }, { maximum: 5 }] },
                not: { type: "integer", not: { enum: [3] } },
                flag: { type: "boolean" },
                opt: { type: "string", nullable: true, enum: ["x"] },
                // The corners below are refusals of the API server's table; the paths are those its
                // messages name (`spec.pN.b` for an unknown nested field, `spec.pN[1]` for an item).
                whole: { type: "number", multipleOf: 0.1 },
                either: { "x-kubernetes-int-or-string": true },
                maybe: { type: "integer", nullable: true },
                top: { type: "integer", maximum: 5, exclusiveMaximum: true },
                pair: { type: "array", items: { type: "integer" } },
                nested: { type: "object", properties: { a: { type: "integer" } } },
                twice: { type: "integer", minimum: 3, allOf: [{ minimum: 3 }] },
                text: { type: "string" },
                wide32: { type: "integer", format: "int32" },
                wide64: { type: "integer" },
                single: { type: "number", format: "float" },
            },
        };
        const value = {
            count: 4.5,
            low: 2,
            high: 1.5,
            tiny: 3,
            wide: 5,
            below: 5,
            fraction: 0,
            zero: 0.5,
            word: "bbbbb",
            short: "ab",
            address: "256.1.1.1",
            mode: "auto",
            list: [1, 1, "x", 2],
            few: [1],
            labels: { a: "x" },
            big: { a: "1", b: "2" },
            any: 0,
            one: 3,
            not: 3,
            flag: "yes",
            opt: null,
            whole: 8,
            either: true,
            maybe: "x",
            top: 5,
            pair: ["x", "y"],
            nested: { a: 1, b: 2 },
            twice: 1,
            text: { a: 1 },
            wide32: 2147483648,
            wide64: 2 ** 63,
            single: 1e39,
            extra: 1,
        };
        const outOfRange = (constraint: string) =>
            `the schema's ${constraint} is not an integer of this integer field's range, so the API server refuses every number here`;
        expect(schemaViolations(value, schema, { unknownFields: "refuse" }).map((v) => `${v.path}: ${v.message}`)).toEqual([
            '<root>: required field "name" is missing',
            "extra: is not in the schema (the API server would prune it)",
            "count: 4.5 is not of type integer",
            "count: 4.5 is not a multiple of 2",
            "low: 2 is not above the minimum 2",
            "high: 1.5 is above the maximum 1",
            `tiny: ${outOfRange("multipleOf 0.5")}`,
            `wide: ${outOfRange("maximum 2147483648")}`,
            `below: ${outOfRange("minimum -2147483649")}`,
            `fraction: ${outOfRange("minimum 0.5")}`,
            "zero: 0.5 is not a multiple of 0.4",
            "word: a string of 5 characters is longer than 4 characters",
            'word: a string of 5 characters does not match the pattern "^a"',
            "short: a string of 2 characters is shorter than 3 characters",
            "address: a string of 9 characters is not a valid ipv4",
            'mode: a string of 4 characters is not one of "on", "off"',
            "list: an array of 4 items, more than the maximum 3",
            "list[2]: a string of 1 character is not of type integer",
            "list: items are not unique",
            "few: an array of 1 item, fewer than the minimum 2",
            "labels: 1 field, fewer than the minimum 2",
            "big: 2 fields, more than the maximum 1",
            "any: 0 is below the minimum 10",
            "any: 0 is above the maximum -10",
            "any: 0 matches none of the anyOf schemas",
            "one: 3 matches 2 of the oneOf schemas, not exactly one",
            "not: 3 matches the schema under not",
            "flag: a string of 3 characters is not of type boolean",
            'opt: null is not one of "x"',
            "whole: 8 is not a multiple of 0.1 (the API server checks an integer against the factor cut to an integer, 0 here: it refuses every integer)",
            "either: true is not of type integer or string",
            "maybe: a string of 1 character is not of type integer",
            "top: 5 is not below the maximum 5",
            "pair[0]: a string of 1 character is not of type integer",
            "pair[1]: a string of 1 character is not of type integer",
            "nested.b: is not in the schema (the API server would prune it)",
            // Once, though both the field's minimum and its allOf's refuse it.
            "twice: 1 is below the minimum 3",
            "text: an object is not of type string",
            "wide32: 2147483648 is out of the range of int32",
            "wide64: 9223372036854776000 is out of the range of int64",
            "single: 1e+39 is out of the range of float",
        ]);
    });
});
