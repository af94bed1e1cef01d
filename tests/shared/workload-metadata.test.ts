import { createHash } from "node:crypto";
import fc from "fast-check";
import { labelsFingerprint, WORKLOAD_LABELS_ANNOTATION, withLabelsFingerprint } from "../../components/shared/workload-metadata";

const labelMap = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9./-]{0,20}$/), fc.string({ maxLength: 12 }), { maxKeys: 6 });

/** Sorted-key JSON of a flat map, written here rather than taken from the product. */
function sortedJson(labels: Record<string, string>): string {
    return `{${Object.keys(labels)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${JSON.stringify(labels[k])}`)
        .join(",")}}`;
}

describe("workload label fingerprints", () => {
    test("GIVEN any two label sets WHEN fingerprinted THEN the fingerprints are equal exactly when the sets are, whatever the key order", () => {
        fc.assert(
            fc.property(labelMap, labelMap, (a, b) => {
                const reversed = Object.fromEntries(Object.entries(a).reverse());
                expect(labelsFingerprint(reversed)).toBe(labelsFingerprint(a));
                expect(labelsFingerprint(a) === labelsFingerprint(b)).toBe(sortedJson(a) === sortedJson(b));
            }),
        );
    });

    test("GIVEN labels WHEN fingerprinted THEN the value is the first 16 hex digits of the sha256 of their sorted-key JSON", () => {
        fc.assert(
            fc.property(labelMap, (labels) => {
                expect(labelsFingerprint(labels)).toBe(createHash("sha256").update(sortedJson(labels)).digest("hex").slice(0, 16));
            }),
        );
    });

    test("GIVEN template annotations WHEN the fingerprint is added THEN they are kept and the fingerprint is added beside them", () => {
        expect(withLabelsFingerprint({ a: "1" }, { keep: "me" })).toEqual({
            keep: "me",
            [WORKLOAD_LABELS_ANNOTATION]: labelsFingerprint({ a: "1" }),
        });
        expect(withLabelsFingerprint({}, undefined)).toEqual({ [WORKLOAD_LABELS_ANNOTATION]: sha256(`{}`) });
    });
});

function sha256(text: string): string {
    return createHash("sha256").update(text).digest("hex").slice(0, 16);
}
