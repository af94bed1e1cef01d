/**
 * CEL rules of CRD schemas (scripts/render/cel-rules.ts) as the API server applies them on
 * create: `self` at each node, each element of lists and maps, transition rules and values the
 * render does not know left unjudged.
 */
import { celProblems, evaluateRule } from "../../scripts/render/cel-rules";

const SCHEMA = {
    type: "object",
    "x-kubernetes-validations": [{ rule: "size(self.metadata.name) <= 10", message: "name too long" }],
    properties: {
        metadata: { type: "object" },
        spec: {
            type: "object",
            "x-kubernetes-validations": [
                { rule: "self.min <= self.max" },
                { rule: "self.max == oldSelf.max", message: "max is immutable" },
            ],
            properties: {
                min: { type: "integer" },
                max: { type: "integer" },
                ports: {
                    type: "array",
                    items: {
                        type: "object",
                        "x-kubernetes-validations": [{ rule: "self.port > 0 && self.port < 65536", message: "bad port" }],
                    },
                },
                labels: {
                    type: "object",
                    additionalProperties: { type: "string", "x-kubernetes-validations": [{ rule: "self != ''", message: "empty label" }] },
                },
            },
        },
    },
};

describe("CEL rules of a CRD schema (x-kubernetes-validations)", () => {
    test("GIVEN an object that keeps every rule WHEN checked THEN there is no problem", () => {
        expect(
            celProblems(SCHEMA, { metadata: { name: "ok" }, spec: { min: 1, max: 2, ports: [{ port: 443 }], labels: { a: "b" } } }),
        ).toEqual([]);
    });

    test("GIVEN an object that breaks a rule at the root, in spec, in a list element and in a map value WHEN checked THEN each is reported where it applies, with its message or the rule", () => {
        expect(
            celProblems(SCHEMA, {
                metadata: { name: "much-too-long" },
                spec: { min: 3, max: 2, ports: [{ port: 443 }, { port: 70000 }], labels: { a: "", b: "c" } },
            }),
        ).toEqual([
            { path: "(root)", message: "name too long" },
            { path: "spec", message: "failed rule: self.min <= self.max" },
            { path: "spec.ports[1]", message: "bad port" },
            { path: "spec.labels.a", message: "empty label" },
        ]);
    });

    test("GIVEN a transition rule, a value the render does not know and a rule the evaluator cannot parse WHEN evaluated THEN none is judged", () => {
        expect(evaluateRule("self.max == oldSelf.max", { max: 1 })).toBeUndefined();
        expect(evaluateRule("size(self) <= 3", "[unknown]")).toBeUndefined();
        expect(evaluateRule("self.(", {})).toBeUndefined();
        expect(evaluateRule("size(self) <= 3", "abcd")).toBe(false);
        expect(evaluateRule("self == 3", 3)).toBe(true);
    });
});
