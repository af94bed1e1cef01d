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
    schema: JsonSchema;
    value: unknown;
    accepted: boolean;
    acceptedStrict: boolean;
}

const CASES: ServerCase[] = JSON.parse(fs.readFileSync(path.join(__dirname, "structural-schema.cases.json"), "utf8"));

/**
 * Each case as the real tier sent it: 40 schemas as `spec.p0`..`spec.p39` of one CRD root (one
 * compiled validator per 40), each value alone at its own property.
 */
function verdicts(unknownFields: "ignore" | "refuse"): boolean[] {
    const out: boolean[] = [];
    for (let start = 0; start < CASES.length; start += 40) {
        const batch = CASES.slice(start, start + 40);
        const properties = Object.fromEntries(batch.map((c, j) => [`p${j}`, c.schema]));
        const validate = structuralValidator(
            { type: "object", properties: { spec: { type: "object", properties } } },
            { root: true, unknownFields },
        );
        batch.forEach((c, j) => {
            const object = {
                apiVersion: "schemas.cluster-platform.io/v1",
                kind: "S0",
                metadata: { name: `c${j}` },
                spec: { [`p${j}`]: c.value },
            };
            out.push(validate(object).length === 0);
        });
    }
    return out;
}

describe("the structural-schema validator (answers from the API server)", () => {
    test("GIVEN the API server's table WHEN read THEN it holds accepted and refused cases in both modes", () => {
        expect(CASES.length).toBeGreaterThanOrEqual(400);
        for (const key of ["accepted", "acceptedStrict"] as const) {
            expect(CASES.filter((c) => c[key]).length).toBeGreaterThan(CASES.length / 5);
            expect(CASES.filter((c) => !c[key]).length).toBeGreaterThan(CASES.length / 5);
        }
    });

    test("GIVEN every case the API server answered WHEN validated pruning unknown fields THEN the validator accepts exactly what it accepted", () => {
        const ours = verdicts("ignore");
        const disagreements = CASES.filter((c, i) => ours[i] !== c.accepted).map((c) => JSON.stringify(c));
        expect(disagreements).toEqual([]);
    });

    test("GIVEN every case the API server answered WHEN validated refusing unknown fields THEN the validator accepts exactly what strict field validation accepted", () => {
        const ours = verdicts("refuse");
        const disagreements = CASES.filter((c, i) => ours[i] !== c.acceptedStrict).map((c) => JSON.stringify(c));
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
});
