/**
 * The conversion reset as OLM does it (components/operator/conversion-reset-operations.ts): what
 * counts as reset, the merge patch's body, and when a held reset changes. The API server's answer
 * to that patch, with a caBundle written under service-ca's manager, is proven on the real tier
 * (tests/real/service-ca-bundle.real.ts).
 */
import { CONVERSION_RESET_PATCH, diffConversion, isReset } from "../../components/operator/conversion-reset-operations";

describe("the conversion reset OLM's way", () => {
    test.each<[string, Parameters<typeof isReset>[0], boolean]>([
        ["strategy None", { strategy: "None" }, true],
        ["no conversion (the API server defaults it to None)", {}, true],
        ["the CRD gone", "absent", true],
        ["a webhook", { strategy: "Webhook", webhook: { clientConfig: { service: { name: "s", namespace: "n" } } } }, false],
        ["None beside a caBundle another manager left", { strategy: "None", webhook: { clientConfig: { caBundle: "Y2E=" } } }, false],
    ])("GIVEN %s WHEN judged THEN reset is %s", (_case, conversion, expected) => {
        expect(isReset(conversion)).toBe(expected);
    });

    test("GIVEN the patch WHEN sent THEN it is a merge patch that sets strategy None and removes the whole webhook block", () => {
        expect(JSON.stringify(CONVERSION_RESET_PATCH)).toBe('{"spec":{"conversion":{"strategy":"None","webhook":null}}}');
    });

    test("GIVEN a held reset WHEN diffed THEN it changes only for another CRD or a conversion read back as not reset, never for the connection", () => {
        const held = { crd: "a.example.io", conversion: { strategy: "None" } };
        expect(diffConversion(held, { crd: "a.example.io", context: "other", kubeconfig: "" })).toEqual({ changes: false });
        expect(diffConversion(held, { crd: "b.example.io" })).toEqual({ changes: true });
        expect(diffConversion({ ...held, conversion: { strategy: "Webhook" } }, { crd: "a.example.io" })).toEqual({ changes: true });
    });
});
