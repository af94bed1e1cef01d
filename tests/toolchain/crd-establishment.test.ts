/**
 * How the real tier reads whether a CRD is served (scripts/real/cluster.ts `crdEstablishment`): the
 * condition shapes the API server writes, including the window after a create where
 * `status.conditions` is still null, in which `kubectl wait` failed instead of waiting.
 */
import { allCrdsEstablished, crdEstablishment, type CrdStatus } from "../../scripts/real/cluster";

type Conditions = { type: string; status: string; message?: string }[] | null | undefined;

function crd(name: string, conditions: Conditions): CrdStatus {
    return { metadata: { name }, status: conditions === undefined ? undefined : { conditions } };
}

describe("a CRD's establishment from its conditions", () => {
    test.each([
        ["no status yet", undefined, "pending"],
        ["conditions still null", null, "pending"],
        [
            "names accepted, not yet established",
            [
                { type: "NamesAccepted", status: "True" },
                { type: "Established", status: "False" },
            ],
            "pending",
        ],
        [
            "established",
            [
                { type: "NamesAccepted", status: "True" },
                { type: "Established", status: "True" },
            ],
            "established",
        ],
    ] as const)("GIVEN %s WHEN read THEN it is %s", (_, conditions, expected) => {
        expect(crdEstablishment(crd("widgets.example.io", conditions as Conditions))).toBe(expected);
    });

    test("GIVEN names refused WHEN read THEN that is the answer, with the API server's message, and a wait over it fails at once naming it", () => {
        const refused = crd("widgets.example.io", [
            { type: "NamesAccepted", status: "False", message: '"widgets" is already in use' },
            { type: "Established", status: "False" },
        ]);

        expect(crdEstablishment(refused)).toEqual({ refused: 'widgets.example.io ("widgets" is already in use)' });
        expect(() => allCrdsEstablished([crd("a.example.io", null), refused])).toThrow(
            'CRD names refused: widgets.example.io ("widgets" is already in use)',
        );
    });

    test("GIVEN CRDs some still pending WHEN all are asked about THEN false until every one is established", () => {
        const established = crd("a.example.io", [{ type: "Established", status: "True" }]);

        expect(allCrdsEstablished([established, crd("b.example.io", null)])).toBe(false);
        expect(allCrdsEstablished([established, established])).toBe(true);
        expect(allCrdsEstablished([])).toBe(true);
    });
});
