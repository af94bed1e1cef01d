/**
 * The structural-schema validator (components/shared/structural-schema.ts) against the API
 * server itself (issue 38, point 1): fast-check (the one seed) generates structural schemas and
 * objects; each schema becomes a property of a CRD's `spec` (a named case with root keywords gets a
 * CRD whose root carries them), the CRD is created, and each object is
 * created with a server-side dry-run, twice: with field validation `Ignore` (the API server prunes
 * what the schema does not name: the validator's `unknownFields: "ignore"`, the pre-flight's) and
 * `Strict` (an unknown field is refused: `"refuse"`, the render's). The API server's accept/refuse
 * must be the validator's for every case and both modes.
 * It prints the case count and the disagreements. With STRUCTURAL_SCHEMA_TABLE=<file> it also
 * writes the cases and the API server's answers: tests/shared/structural-schema.cases.json is such a
 * file, which the mock tier replays.
 */
import * as fs from "node:fs";
import fc from "fast-check";
import { type JsonSchema, schemaViolations } from "../../components/shared/structural-schema";
import * as path from "node:path";
import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import { kubectl, kubectlRun, waitForCrdsEstablished } from "./helpers/kubectl";
import { realEnv } from "./helpers/stack";

const GROUP = "schemas.cluster-platform.io";
const PER_CRD = 40;
/** Generated cases: 20 CRDs' worth; the named cases below follow them in CRDs of their own. */
const GENERATED = PER_CRD * 20;

/** A leaf or nested structural schema (types everywhere; combinators only with value validations). */
const schemaArb: fc.Arbitrary<JsonSchema> = fc.letrec<{ schema: JsonSchema }>((tie) => ({
    schema: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        stringSchema(),
        integerSchema(),
        numberSchema(),
        // A default makes the API server replace a null by it (structural defaulting) instead of dropping it.
        fc.record(
            {
                type: fc.constant("boolean"),
                nullable: fc.option(fc.boolean(), { nil: undefined }),
                default: fc.option(fc.boolean(), { nil: undefined }),
            },
            { requiredKeys: ["type"] },
        ),
        fc.constant<JsonSchema>({ "x-kubernetes-int-or-string": true }),
        fc.record(
            {
                type: fc.constant("array"),
                items: tie("schema"),
                minItems: fc.option(fc.nat(2), { nil: undefined }),
                maxItems: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
                nullable: fc.option(fc.boolean(), { nil: undefined }),
            },
            { requiredKeys: ["type", "items"] },
        ),
        fc
            .record({
                properties: fc.dictionary(fc.constantFrom("a", "b", "kind", "metadata"), tie("schema"), { minKeys: 1, maxKeys: 3 }),
                required: fc.subarray(["a", "b", "kind", "metadata"]),
                nullable: fc.option(fc.boolean(), { nil: undefined }),
                preserve: fc.boolean(),
                minProperties: fc.option(fc.nat(2), { nil: undefined }),
            })
            .map(({ properties, required, nullable, preserve, minProperties }) => ({
                type: "object",
                properties,
                ...(required.filter((r) => r in properties).length > 0 ? { required: required.filter((r) => r in properties) } : {}),
                ...(nullable === undefined ? {} : { nullable }),
                ...(preserve ? { "x-kubernetes-preserve-unknown-fields": true } : {}),
                ...(minProperties === undefined ? {} : { minProperties }),
            })),
        fc.record(
            { type: fc.constant("object"), additionalProperties: fc.oneof(stringSchema(), tie("schema")) },
            { requiredKeys: ["type", "additionalProperties"] },
        ),
    ),
})).schema;

function stringSchema(): fc.Arbitrary<JsonSchema> {
    return fc.record(
        {
            type: fc.constant("string"),
            minLength: fc.option(fc.nat(3), { nil: undefined }),
            maxLength: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
            pattern: fc.option(fc.constantFrom("^[a-z]+$", "^x", "[0-9]", "^(on|off)$", "^\\w{2,4}$"), { nil: undefined }),
            format: fc.option(fc.constantFrom("byte", "ipv4", "uuid", "date-time", "int32", "hostname"), { nil: undefined }),
            enum: fc.option(fc.uniqueArray(fc.constantFrom("x", "on", "abc", "10.0.0.1"), { minLength: 1, maxLength: 3 }), {
                nil: undefined,
            }),
            nullable: fc.option(fc.boolean(), { nil: undefined }),
            anyOf: fc.option(fc.constant<JsonSchema[]>([{ maxLength: 2 }, { pattern: "^x" }]), { nil: undefined }),
        },
        { requiredKeys: ["type"] },
    );
}

function integerSchema(): fc.Arbitrary<JsonSchema> {
    return fc
        .record(
            {
                type: fc.constant("integer"),
                // A bound outside the format's range (2^31 for int32, a negative one for uint32) makes
                // kube-openapi refuse every number of the field.
                format: fc.option(fc.constantFrom("int32", "uint32", "int64"), { nil: undefined }),
                minimum: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
                maximum: fc.option(fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constant(2 ** 31)), { nil: undefined }),
                exclusiveMinimum: fc.option(fc.boolean(), { nil: undefined }),
                exclusiveMaximum: fc.option(fc.boolean(), { nil: undefined }),
                // A factor below 1 or with a fraction: kube-openapi cuts it to an integer for integer data.
                multipleOf: fc.option(fc.constantFrom(2, 3, 0.5, 1.5, 2.5), { nil: undefined }),
                enum: fc.option(fc.uniqueArray(fc.integer({ min: -2, max: 6 }), { minLength: 1, maxLength: 3 }), { nil: undefined }),
                allOf: fc.option(fc.constant<JsonSchema[]>([{ minimum: 1 }, { maximum: 8 }]), { nil: undefined }),
                oneOf: fc.option(fc.constant<JsonSchema[]>([{ maximum: 2 }, { minimum: 5 }]), { nil: undefined }),
                nullable: fc.option(fc.boolean(), { nil: undefined }),
                not: fc.option(fc.constant<JsonSchema>({ enum: [4] }), { nil: undefined }),
            },
            { requiredKeys: ["type"] },
        )
        .map(boundsOnlyWithLimits);
}

function numberSchema(): fc.Arbitrary<JsonSchema> {
    return fc
        .record(
            {
                type: fc.constant("number"),
                minimum: fc.option(fc.constantFrom(-1.5, 0, 0.5), { nil: undefined }),
                maximum: fc.option(fc.constantFrom(1, 2.5), { nil: undefined }),
                exclusiveMinimum: fc.option(fc.boolean(), { nil: undefined }),
                exclusiveMaximum: fc.option(fc.boolean(), { nil: undefined }),
                multipleOf: fc.option(fc.constantFrom(0.5, 2, 0.1, 0.25, 1.5, 3), { nil: undefined }),
            },
            { requiredKeys: ["type"] },
        )
        .map(boundsOnlyWithLimits);
}

/** The API server refuses exclusiveMinimum without minimum (and the same for maximum). */
function boundsOnlyWithLimits(schema: JsonSchema): JsonSchema {
    const out = { ...schema };
    if (out.minimum === undefined) delete out.exclusiveMinimum;
    if (out.maximum === undefined) delete out.exclusiveMaximum;
    return out;
}

/** Values near what the schema accepts, and now and then of any type. */
function valueFor(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
    const anything = fc.oneof(
        fc.constant(null),
        fc.boolean(),
        fc.integer({ min: -5, max: 12 }),
        fc.constantFrom(0.5, 1.25, -2.5),
        fc.string({ maxLength: 6 }),
        fc.constant([]),
        fc.constant({}),
    );
    let typed: fc.Arbitrary<unknown>;
    if (schema["x-kubernetes-int-or-string"]) typed = fc.oneof(fc.integer({ min: -3, max: 9 }), fc.constantFrom("25%", "x", ""));
    else if (schema.type === "string") {
        typed = fc.oneof(
            fc.constantFrom(
                "x",
                "on",
                "abc",
                "10.0.0.1",
                "aGk=",
                "not-base64!",
                "2026-01-01T00:00:00Z",
                "0e7c8a4e-8f31-4f8b-9c1d-3a2b1c0d9e8f",
                "xy1",
                "",
            ),
            fc.string({ maxLength: 7 }),
        );
    } else if (schema.type === "integer") typed = fc.integer({ min: -4, max: 12 });
    else if (schema.type === "number")
        typed = fc.oneof(fc.constantFrom(-1.5, 0, 0.5, 1, 2, 2.5, 3, 0.3, 0.75, 4.5, 0.2, 7.5, 0.7), fc.integer({ min: -2, max: 9 }));
    else if (schema.type === "boolean") typed = fc.boolean();
    else if (schema.type === "array")
        typed = depth > 3 ? fc.constant([]) : fc.array(valueFor(schema.items as JsonSchema, depth + 1), { maxLength: 4 });
    else if (schema.type === "object" && schema.properties) {
        const fields = Object.fromEntries(
            Object.entries(schema.properties).map(([k, v]) => [k, depth > 3 ? fc.constant(null) : valueFor(v, depth + 1)]),
        );
        typed = fc.record({ ...fields, extra: fc.string({ maxLength: 3 }), apiVersion: fc.constant("v1") }, { requiredKeys: [] });
    } else if (schema.type === "object")
        typed = fc.dictionary(fc.constantFrom("k", "kind"), valueFor(schema.additionalProperties as JsonSchema, depth + 1), { maxKeys: 2 });
    else typed = anything;
    return fc.oneof({ weight: 5, arbitrary: typed }, { weight: 1, arbitrary: anything });
}

/**
 * POSTs an object with `dryRun=All` and the field validation asked (kubectl's `--validate=strict`
 * validates on the client first and stops at the first refused object of a list).
 */
async function dryRunCreate(
    collection: string,
    object: unknown,
    fieldValidation: "Ignore" | "Strict",
): Promise<{ accepted: boolean; message: string }> {
    const config = new KubeConfig();
    config.loadFromFile(realEnv("REAL_KUBECONFIG"));
    const server = config.getCurrentCluster()?.server as string;
    const options: https.RequestOptions = { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" } };
    await config.applyToHTTPSOptions(options);
    const url = new URL(`${collection}?dryRun=All&fieldValidation=${fieldValidation}`, server);
    return new Promise((resolve, reject) => {
        const request = https.request(url, options, (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => {
                const body = Buffer.concat(chunks).toString("utf8");
                const status = response.statusCode ?? 0;
                if (status !== 201 && status !== 200 && status !== 422 && status !== 400) {
                    reject(new Error(`POST ${url.pathname}: HTTP ${status}: ${body.slice(0, 300)}`));
                    return;
                }
                resolve({
                    accepted: status < 300,
                    message: status < 300 ? "" : ((JSON.parse(body) as { message?: string }).message ?? body),
                });
            });
            response.on("error", reject);
        });
        request.on("error", reject);
        request.end(JSON.stringify(object));
    });
}

interface Case {
    schema: JsonSchema;
    value: unknown;
    /** A named case's (below the generated ones), carried into the table so a reader finds it. */
    name?: string;
    /**
     * Keywords of the CRD's root schema beside `properties.spec` (a root `minProperties` counts the
     * object's apiVersion, kind and metadata, or does not: the API server says which). A case with
     * one gets a CRD of its own.
     */
    root?: JsonSchema;
}

/**
 * Corners the generator reaches seldom or never, each named (issue 38, point 5: every mutant of the
 * validator the API server can tell apart must meet a case it answers). The schemas are ones a CRD
 * may carry; what the API server says of each is the table's, not written here.
 */
const NAMED: readonly (Case & { name: string })[] = [
    ...[
        "255.255.255.255",
        "0.0.0.0",
        "256.0.0.1",
        "1.2.3.256",
        "01.2.3.4",
        "0001.2.3.4",
        "1.2.3",
        "1.2.3.4.5",
        "::ffff:1.2.3.4",
        "::1.2.3.4",
        "1:2:3:4:5:6:1.2.3.4",
        "1:2:3:4:5:6:7::1.2.3.4",
        "::ffff:01.2.3.4",
        "::ffff:1.2.3.4%eth0",
        "::zz:1.2.3.4",
        "1:2:3:4:5:1.2.3.4",
        "1:2:3:4:5:6::1.2.3.4",
        "1:2::3:4:5::6:1.2.3.4",
        "1.2.3.4::",
        "::",
        "::1",
        "1.2.3.4 ",
    ].map((value) => ({
        name: `ipv4 ${JSON.stringify(value)}`,
        schema: { type: "string", format: "ipv4" },
        value,
    })),
    ...["0E7C8A4E-8F31-4F8B-9C1D-3A2B1C0D9E8F", "0e7c8a4e8f314f8b9c1d3a2b1c0d9e8f", "0e7c8a4e-8f31-4f8b-9c1d-3a2b1c0d9e8"].map((value) => ({
        name: `uuid ${JSON.stringify(value)}`,
        schema: { type: "string", format: "uuid" },
        value,
    })),
    ...["", "aGk", "aGk=", "aGlq", "a-_b"].map((value) => ({
        name: `byte ${JSON.stringify(value)}`,
        schema: { type: "string", format: "byte" },
        value,
    })),
    // The edges of each integer format's range (validate/values.go IsValueValidAgainstRange): a
    // bound exactly at an edge is in range, one past it makes the API server refuse every number.
    ...(
        [
            ["int32", "minimum", -(2 ** 31)],
            ["int32", "minimum", -(2 ** 31) - 1],
            ["int32", "maximum", 2 ** 31 - 1],
            ["uint32", "minimum", 0],
            ["uint32", "minimum", -1],
            ["uint32", "maximum", 2 ** 32 - 1],
            ["uint32", "maximum", 2 ** 32],
            ["uint64", "minimum", 0],
            ["uint64", "minimum", -1],
            ["uint64", "maximum", 2 ** 63],
            ["uint64", "minimum", 2 ** 63],
            ["uint64", "maximum", 2 ** 64],
            [undefined, "minimum", -(2 ** 63)],
            [undefined, "minimum", -(2 ** 64)],
            [undefined, "maximum", 2 ** 63],
            ["int64", "maximum", 2 ** 63],
            ["int64", "minimum", -(2 ** 63)],
        ] as const
    ).flatMap(([format, bound, limit]) =>
        [1, 3].map((value) => ({
            name: `integer ${format ?? "(no format)"} ${bound} ${limit}, value ${value}`,
            schema: { type: "integer", ...(format === undefined ? {} : { format }), [bound]: limit },
            value,
        })),
    ),
    // multipleOf on a fraction (values.go MultipleOf, swag's IsFloat64AJSONInteger): a quotient past
    // 2^53, one within 1e-9 of an integer but not equal, a tiny one, and a factor whose inverse overflows.
    ...(
        [
            [0.001, 10000000000000.5],
            [1, 1e-10],
            [1, 1000000.0015],
            [1, 1000000.0009],
            [1, 2.0000000001],
            [3, -1.5],
            [0.5, -2.5],
            [1e-310, 2e-310],
            [1e-310, 0.5],
            [1, 2.9999999999],
            [1, -2.0000000001],
            [0.1, 0.7],
            [1.5, 4.5],
            // A factor of 1 or more divides, a smaller one multiplies by its inverse: 19.5 / 1.3 is
            // 15, 19.5 * (1 / 1.3) is 14.999999999999998.
            [1.3, 19.5],
            [1.1, 3.3],
            [2.2, 6.6],
            [0.7, 2.1],
            // A CRD may say multipleOf 0 or below (the API server creates it): it refuses every number.
            [0, 0.5],
            [0, 2],
            [-0.5, 2.5],
            [-2, 4],
        ] as const
    ).map(([factor, value]) => ({
        name: `number multipleOf ${factor}, value ${value}`,
        schema: { type: "number", multipleOf: factor },
        value,
    })),
    // A value past its integer format's range (the same range check as the bounds'), and number's float format.
    ...(
        [
            [{ type: "integer", format: "int32" }, 2147483647],
            [{ type: "integer", format: "int32" }, 2147483648],
            [{ type: "integer", format: "int32" }, -2147483648],
            [{ type: "integer", format: "int32" }, -2147483649],
            [{ type: "integer", format: "uint32" }, -1],
            [{ type: "integer", maximum: 1e21 }, 1],
            [{ type: "integer" }, 1e21],
            [{ type: "integer" }, 2 ** 53],
            [{ type: "integer" }, 2 ** 63],
            [{ type: "integer" }, -(2 ** 63)],
            [{ type: "number", format: "float" }, 3e38],
            [{ type: "number", format: "float" }, 1e39],
            [{ type: "number", format: "float", maximum: 1e39 }, 1],
            [{ type: "number", format: "double" }, 1e300],
        ] as const
    ).map(([schema, value]) => ({ name: `${JSON.stringify(schema)}, value ${value}`, schema, value })),
    // An array where a string is due: kube-openapi's type check lets it through a format, but only a
    // format the API server keeps for the type.
    ...(
        [
            [{ type: "string", format: "int32" }, []],
            [{ type: "string", format: "ipv4" }, []],
            [{ type: "string", format: "date-time" }, ["x"]],
            [{ type: "string", format: "no-such-format" }, []],
            [{ type: "boolean", format: "byte" }, []],
        ] as const
    ).map(([schema, value]) => ({ name: `${JSON.stringify(schema)}, value ${JSON.stringify(value)}`, schema, value })),
    // Pruning and defaulting below the top: an object with no properties (every field unknown), a
    // nested apiVersion or kind (the root's own are the API server's, a nested one is a field like any
    // other), nulls and defaults in array items.
    ...(
        [
            [{ type: "object" }, { k: 1 }],
            [{ type: "object" }, {}],
            [
                { type: "object", properties: { a: { type: "string" } }, minProperties: 2 },
                { a: "x", apiVersion: "v1" },
            ],
            [{ type: "object", properties: { kind: { type: "string" } } }, { kind: null }],
            [
                { type: "object", properties: { metadata: { type: "object", properties: { a: { type: "integer" } } } } },
                { metadata: { a: null } },
            ],
            [{ type: "array", items: { type: "object", properties: { a: { type: "string" } } } }, [{ a: null }]],
            [{ type: "array", items: { type: "object", properties: { a: { type: "string" } } } }, [{ a: "x", b: 1 }]],
            [{ type: "array", items: { type: "string", default: "d" } }, [null]],
            [{ type: "array", items: { type: "string", default: "d" } }, [5]],
            [{ type: "array", items: { type: "string", nullable: true, default: "d" } }, [null]],
            [{ type: "object", maxProperties: 0 }, { k: 1 }],
            [{ type: "object", properties: { a: { type: "string", default: "d" } }, required: ["a"] }, {}],
            [{ type: "object", properties: { a: { type: "string", default: "d" } }, minProperties: 1 }, {}],
            // A nullable field's null stays null though it has a default: the not below tells the two apart.
            [
                {
                    type: "object",
                    properties: { a: { type: "string", nullable: true, default: "d" } },
                    not: { properties: { a: { enum: ["d"] } } },
                },
                { a: null },
            ],
            // additionalProperties: true beside properties (a CRD may say it): unknown fields stay.
            [
                { type: "object", properties: { a: { type: "string" } }, additionalProperties: true },
                { a: "x", b: 1 },
            ],
            [
                { type: "object", properties: { a: { type: "string" } }, additionalProperties: true, minProperties: 2 },
                { a: "x", b: 1 },
            ],
            [{ type: "object", properties: { a: { type: "string" } }, additionalProperties: true, minProperties: 1 }, { b: null }],
            [{ type: "object", "x-kubernetes-preserve-unknown-fields": true, additionalProperties: { type: "string" } }, { b: 1 }],
            [{ type: "object", "x-kubernetes-preserve-unknown-fields": true, additionalProperties: { type: "string" } }, { b: "x" }],
        ] as [JsonSchema, unknown][]
    ).map(([schema, value]) => ({ name: `pruned ${JSON.stringify(schema)}, value ${JSON.stringify(value)}`, schema, value })),
    // A fractional bound inside a combinator part (which has no type of its own), on an integer
    // field: is it cut to an integer as an integer schema's own bound is, or not?
    ...(
        [
            [{ type: "integer", allOf: [{ minimum: 0.5 }] }, 0],
            [{ type: "integer", allOf: [{ minimum: 0.5 }] }, 1],
            [{ type: "integer", allOf: [{ maximum: 1.5 }] }, 1],
            [{ type: "integer", allOf: [{ maximum: 1.5 }] }, 2],
            [{ type: "integer", anyOf: [{ minimum: 2.5 }, { maximum: -0.5 }] }, 2],
            [{ type: "integer", anyOf: [{ minimum: 2.5 }, { maximum: -0.5 }] }, 3],
            [{ type: "integer", not: { maximum: 0.5 } }, 0],
            [{ type: "integer", not: { maximum: 0.5 } }, 1],
            [{ type: "integer", allOf: [{ minimum: 0.5, exclusiveMinimum: true }] }, 1],
        ] as [JsonSchema, unknown][]
    ).map(([schema, value]) => ({ name: `combinator bound ${JSON.stringify(schema)}, value ${JSON.stringify(value)}`, schema, value })),
    // Size limits on the CRD's root: the object there has apiVersion, kind, metadata and spec.
    ...(
        [
            [{ minProperties: 4 }, { a: "x" }],
            [{ minProperties: 5 }, { a: "x" }],
            [{ minProperties: 2 }, { a: "x" }],
            [{ maxProperties: 1 }, { a: "x" }],
            [{ maxProperties: 3 }, { a: "x" }],
            [{ maxProperties: 4 }, { a: "x" }],
        ] as [JsonSchema, unknown][]
    ).map(([root, value]) => ({
        name: `root ${JSON.stringify(root)}, spec ${JSON.stringify(value)}`,
        root,
        schema: { type: "object", properties: { a: { type: "string" } } },
        value,
    })),
];

const cases: Case[] = [
    ...fc
        .sample(
            schemaArb.chain((schema) => fc.tuple(fc.constant(schema), valueFor(schema))),
            GENERATED,
        )
        .map(([schema, value]) => ({ schema, value })),
    ...NAMED,
];
/** 40 cases to a CRD, and a CRD of its own for each case with root keywords (the table's order). */
const BATCHES: readonly (readonly Case[])[] = [
    ...chunks(
        cases.filter((c) => c.root === undefined),
        PER_CRD,
    ),
    ...cases.filter((c) => c.root !== undefined).map((c) => [c]),
];
const CRDS = BATCHES.length;

function chunks<T>(items: readonly T[], size: number): T[][] {
    return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

function crdFor(index: number, batch: readonly Case[]): object {
    const properties = Object.fromEntries(batch.map((c, i) => [`p${i}`, c.schema]));
    return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `s${index}s.${GROUP}` },
        spec: {
            group: GROUP,
            scope: "Cluster",
            names: { plural: `s${index}s`, singular: `s${index}`, kind: `S${index}`, listKind: `S${index}List` },
            versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: rootSchema(properties, batch[0]?.root) } }],
        },
    };
}

function rootSchema(properties: Record<string, JsonSchema>, root: JsonSchema = {}): JsonSchema {
    return { type: "object", ...root, properties: { spec: { type: "object", properties } } };
}

describe("the structural-schema validator against the API server (server-side dry-run)", () => {
    const results: { name?: string; root?: JsonSchema; schema: JsonSchema; value: unknown; accepted: boolean; acceptedStrict: boolean }[] =
        [];

    afterAll(() => {
        for (let i = 0; i < CRDS; i++) kubectlRun(["delete", "crd", `s${i}s.${GROUP}`, "--ignore-not-found", "--wait=false"]);
    });

    test("GIVEN generated schemas and objects WHEN the API server dry-runs each object THEN the validator accepts exactly what it accepts", async () => {
        const disagreements: string[] = [];
        for (let i = 0; i < CRDS; i++) {
            const batch = BATCHES[i];
            const crd = crdFor(i, batch);
            kubectl(["apply", "-f", "-"], { input: JSON.stringify(crd) });
            await waitForCrdsEstablished([`s${i}s.${GROUP}`]);
            const objects = batch.map((c, j) => ({
                apiVersion: `${GROUP}/v1`,
                kind: `S${i}`,
                metadata: { name: `c${j}` },
                spec: { [`p${j}`]: c.value },
            }));
            const answers = {
                ignore: await Promise.all(objects.map((o) => dryRunCreate(`/apis/${GROUP}/v1/s${i}s`, o, "Ignore"))),
                refuse: await Promise.all(objects.map((o) => dryRunCreate(`/apis/${GROUP}/v1/s${i}s`, o, "Strict"))),
            };
            const accepted = {
                ignore: new Set(objects.filter((_, j) => answers.ignore[j].accepted).map((o) => o.metadata.name)),
                refuse: new Set(objects.filter((_, j) => answers.refuse[j].accepted).map((o) => o.metadata.name)),
            };
            const runs = {
                ignore: { stderr: answers.ignore.map((a, j) => `"c${j}": ${a.message}`).join("\n") },
                refuse: { stderr: answers.refuse.map((a, j) => `"c${j}": ${a.message}`).join("\n") },
            };
            const schema = rootSchema(Object.fromEntries(batch.map((c, j) => [`p${j}`, c.schema])), batch[0]?.root);
            batch.forEach((c, j) => {
                for (const mode of ["ignore", "refuse"] as const) {
                    const violations = schemaViolations(objects[j], schema, { root: true, unknownFields: mode });
                    const server = accepted[mode].has(`c${j}`);
                    if (server !== (violations.length === 0)) {
                        const said = runs[mode].stderr.split("\n").find((l) => l.includes(`"c${j}"`)) ?? "(nothing)";
                        const ours =
                            violations.length === 0
                                ? "accepts"
                                : `refuses (${violations.map((v) => `${v.path}: ${v.message}`).join("; ")})`;
                        disagreements.push(
                            `[${mode}] schema ${JSON.stringify(c.schema)} value ${JSON.stringify(c.value)}: API server ${server ? "accepts" : "refuses"}, validator ${ours}; server said ${said}`,
                        );
                    }
                }
                results.push({
                    ...(c.name === undefined ? {} : { name: c.name }),
                    ...(c.root === undefined ? {} : { root: c.root }),
                    schema: c.schema,
                    value: c.value,
                    accepted: accepted.ignore.has(`c${j}`),
                    acceptedStrict: accepted.refuse.has(`c${j}`),
                });
            });
        }
        const refused = results.filter((r) => !r.accepted).length;
        const refusedStrict = results.filter((r) => !r.acceptedStrict).length;
        console.log(
            `structural schemas: ${results.length} cases in 2 modes (${refused} refused by the API server pruning unknown fields, ${refusedStrict} with strict field validation), ${disagreements.length} disagreements`,
        );
        if (process.env.STRUCTURAL_SCHEMA_TABLE) {
            fs.writeFileSync(process.env.STRUCTURAL_SCHEMA_TABLE, `${JSON.stringify(results)}\n`);
        }
        fs.writeFileSync(path.join(realEnv("REAL_WORK"), "structural-schema-disagreements.txt"), disagreements.join("\n"));
        expect(refused).toBeGreaterThan(results.length / 5);
        expect(results.length - refused).toBeGreaterThan(results.length / 5);
        expect(disagreements).toEqual([]);
    });
});
