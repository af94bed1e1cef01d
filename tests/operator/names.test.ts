import fc from "fast-check";
import { canonicalJson } from "../../components/shared/canonical-json";
import { fnv32a, fnv64a, generateName, MAX_GENERATED_NAME_LENGTH, safeEncode } from "../../components/operator/names";

describe("OLM-shaped generated names", () => {
    test("GIVEN the FNV-1a reference vectors WHEN hashed THEN the 32 and 64 bit values match the specification", () => {
        expect(fnv32a("")).toBe(0x811c9dc5);
        expect(fnv32a("a")).toBe(0xe40c292c);
        expect(fnv32a("foobar")).toBe(0xbf9cf968);
        expect(fnv64a("")).toBe(0xcbf29ce484222325n);
        expect(fnv64a("a")).toBe(0xaf63dc4c8601ec8cn);
        expect(fnv64a("foobar")).toBe(0x85944171f73967e8n);
    });

    test("GIVEN a decimal string WHEN safe-encoded THEN each digit maps into apimachinery's alphabet", () => {
        // '0' is 48: 48 % 27 = 21 → '4'; '9' is 57: 57 % 27 = 3 → 'f'.
        expect(safeEncode("0123456789")).toBe("456789bcdf");
    });

    test("GIVEN objects with the same content in a different key order WHEN serialised canonically THEN the text is equal", () => {
        expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: undefined } })).toBe('{"a":{"d":[2,{"x":2,"y":1}]},"b":1}');
    });

    test("GIVEN a short base WHEN a name is generated THEN it is the base, a dash and the encoded hash", () => {
        const name = generateName("etcdoperator.v0.9.4-etcd-operator", [
            "etcdoperator.v0.9.4",
            { serviceAccountName: "etcd-operator", rules: [] },
        ]);
        expect(name).toMatch(/^etcdoperator\.v0\.9\.4-etcd-operator-[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
        expect(
            generateName("etcdoperator.v0.9.4-etcd-operator", ["etcdoperator.v0.9.4", { rules: [], serviceAccountName: "etcd-operator" }]),
        ).toBe(name);
    });

    test("GIVEN any base and input WHEN a name is generated THEN it fits OLM's limit (plus OLM's dash) and starts with a prefix of the base", () => {
        fc.assert(
            fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,120}$/), fc.jsonValue(), (base, input) => {
                const name = generateName(base, input);
                expect(name.length).toBeLessThanOrEqual(MAX_GENERATED_NAME_LENGTH + 1);
                const cut = name.slice(0, name.lastIndexOf("-"));
                expect(base.startsWith(cut)).toBe(true);
                expect(generateName(base, input)).toBe(name);
            }),
        );
    });
});
