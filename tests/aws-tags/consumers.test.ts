import fc from "fast-check";
import {
    consumerFormatProblems,
    ebsTagParameters,
    loadBalancerTagAnnotation,
    parseLoadBalancerTagAnnotation,
    propagatableTags,
} from "../../components/aws-tags/consumers";

describe("the consumers' key=value formats", () => {
    test("GIVEN tags THEN the StorageClass parameters number them in key order", () => {
        expect(ebsTagParameters({ team: "platform", adminContact: "jdoe", "cost center": "75 36" })).toEqual({
            tagSpecification_1: "adminContact=jdoe",
            tagSpecification_2: "cost center=75 36",
            tagSpecification_3: "team=platform",
        });
        expect(ebsTagParameters({})).toEqual({});
    });

    test("GIVEN tags THEN the load balancer annotation lists them comma-separated in key order", () => {
        expect(loadBalancerTagAnnotation({ team: "platform", adminContact: "jdoe" })).toBe("adminContact=jdoe,team=platform");
    });

    test("GIVEN an existing annotation THEN it is read the way the AWS cloud provider reads it", () => {
        expect(parseLoadBalancerTagAnnotation(" a=1 , b=2=3,c, ,=x")).toEqual({ a: "1", b: "2", c: "" });
    });

    test("GIVEN any tags the rules accept and the format check passes THEN both consumers read back exactly those tags", () => {
        const text = fc.string({ unit: fc.constantFrom(..."aZ09 _.:/+-@"), minLength: 1, maxLength: 12 });
        fc.assert(
            fc.property(fc.dictionary(text, text, { maxKeys: 6 }), (raw) => {
                const { tags } = propagatableTags(raw);
                expect(parseLoadBalancerTagAnnotation(loadBalancerTagAnnotation(tags))).toEqual(tags);
                // The EBS CSI driver splits each parameter at its first "=".
                const fromEbs = Object.fromEntries(
                    Object.values(ebsTagParameters(tags)).map((p) => [p.slice(0, p.indexOf("=")), p.slice(p.indexOf("=") + 1)]),
                );
                expect(fromEbs).toEqual(tags);
            }),
        );
    });

    test("GIVEN tags the formats cannot carry THEN each reason is named, and they are left out", () => {
        expect(consumerFormatProblems("a=b", "c=d ")).toEqual([
            'key "a=b" contains "=", which the EBS CSI driver and the load balancer annotation use to separate key from value',
            'value "c=d " contains "=", which the load balancer annotation would cut off',
            'value "c=d " ends with a space, which the load balancer annotation trims',
        ]);
        expect(propagatableTags({ ok: "1", " lead": "2" })).toEqual({
            tags: { ok: "1" },
            skipped: ['key " lead" starts with a space, which the load balancer annotation trims'],
        });
    });
});
