import { unknownCheckingProxy } from "@pulumi/policy";
import { known, knownStringMap, UNKNOWN } from "../../policy-packs/shared/values";
import { UNKNOWN_VALUE } from "./support";

const proxy = unknownCheckingProxy as <T>(value: T) => T;

describe("reading values that may be unknown during a preview (policy-packs/shared/values.ts)", () => {
    test("GIVEN the SDK's proxy over an unknown field WHEN read with known() THEN UNKNOWN comes back; other errors pass through", () => {
        const props = proxy({ a: UNKNOWN_VALUE, b: "x" }) as Record<string, unknown>;
        expect(known(() => props.a)).toBe(UNKNOWN);
        expect(known(() => props.b)).toBe("x");
        expect(() => known(() => JSON.parse("{"))).toThrow(SyntaxError);
    });

    test("GIVEN an UnknownValueError from another copy of @pulumi/policy (a pack's own node_modules) WHEN read with known() THEN it is still recognised", () => {
        class UnknownValueError extends Error {
            constructor(
                readonly unknownTypeSentinel: string,
                readonly props: string[],
            ) {
                super("string value at .a can't be known during preview");
            }
        }
        expect(
            known(() => {
                throw new UnknownValueError(UNKNOWN_VALUE, ["a"]);
            }),
        ).toBe(UNKNOWN);
    });

    test("GIVEN a tag map with one unknown value WHEN read THEN the known values stay and the unknown one is marked", () => {
        expect(knownStringMap(proxy({ tags: { a: "1", b: UNKNOWN_VALUE } }).tags)).toEqual({ a: "1", b: UNKNOWN });
        expect(knownStringMap(undefined)).toBeUndefined();
    });
});
