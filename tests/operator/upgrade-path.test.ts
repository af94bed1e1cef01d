import { installedCsvOf, upgradeableVerdict, upgradeEdgeVerdict } from "../../components/operator/upgrade-path";

const NEXT = { csvName: "widget-operator.v1.3.0", replaces: "widget-operator.v1.2.0", skips: ["widget-operator.v1.1.0"] };

describe("upgrade paths as OLM's resolver follows them (replaces, skips)", () => {
    test("GIVEN the installed CSV named in replaces or skips, or the same CSV WHEN judged THEN the upgrade is allowed", () => {
        for (const installed of ["widget-operator.v1.2.0", "widget-operator.v1.1.0", "widget-operator.v1.3.0"]) {
            expect(upgradeEdgeVerdict({ name: installed }, NEXT)).toEqual({ ok: true });
        }
    });

    test("GIVEN an installed CSV the new one neither replaces nor skips WHEN judged THEN the jump is refused with both names and the edges", () => {
        expect(upgradeEdgeVerdict({ name: "widget-operator.v1.0.0", version: "1.0.0" }, NEXT)).toEqual({
            ok: false,
            message:
                '"widget-operator.v1.3.0" does not replace or skip the installed "widget-operator.v1.0.0" (spec.replaces: "widget-operator.v1.2.0", spec.skips: ["widget-operator.v1.1.0"]): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)',
        });
    });

    test("GIVEN only an olm.skipRange WHEN judged THEN an installed version inside it is allowed and one outside it refused, naming version and range", () => {
        const next = { ...NEXT, skipRange: ">=1.0.0 <1.3.0" };
        expect(upgradeEdgeVerdict({ name: "widget-operator.v1.0.0", version: "1.0.0" }, next)).toEqual({ ok: true });
        expect(upgradeEdgeVerdict({ name: "widget-operator.v0.9.0", version: "0.9.0" }, next)).toEqual({
            ok: false,
            message:
                '"widget-operator.v1.3.0" does not replace or skip the installed "widget-operator.v0.9.0" (spec.replaces: "widget-operator.v1.2.0", spec.skips: ["widget-operator.v1.1.0"]; the installed version "0.9.0" is outside its olm.skipRange ">=1.0.0 <1.3.0"): OLM would not take this upgrade; install the versions in between, or remove the operator and add it again (its CRDs and custom resources stay)',
        });
    });

    test("GIVEN a skipRange that does not parse WHEN judged THEN it is ignored as OLM ignores it, and the message says so", () => {
        const verdict = upgradeEdgeVerdict({ name: "widget-operator.v1.0.0", version: "1.0.0" }, { ...NEXT, skipRange: ">=1.0 <1.3.0" });
        expect(verdict.ok).toBe(false);
        expect(!verdict.ok && verdict.message).toContain(
            `its olm.skipRange ">=1.0 <1.3.0" does not parse ("1.0" is not MAJOR.MINOR.PATCH with numbers without leading zeros), and OLM ignores such a range`,
        );
    });

    test("GIVEN a running Deployment that does not record its version (installed before the check) WHEN a skipRange decides THEN the jump is applied with a warning that says why", () => {
        const verdict = upgradeEdgeVerdict({ name: "widget-operator.v1.0.0" }, { ...NEXT, skipRange: ">=1.0.0 <1.3.0" });
        expect(verdict).toEqual({
            ok: true,
            warning:
                '"widget-operator.v1.3.0" neither replaces nor skips the installed "widget-operator.v1.0.0"; the running Deployment does not record its version (cluster-platform.io/operator-version: written by this stack since the skipRange check), so olm.skipRange ">=1.0.0 <1.3.0" cannot be checked and the jump is applied; OLM would take it only if the installed version is in that range',
        });
    });

    test("GIVEN the running Deployment WHEN read THEN the installed CSV is its OPERATOR_CONDITION_NAME; none without a Deployment", () => {
        const deployment = {
            spec: {
                template: {
                    spec: { containers: [{ name: "a", env: [{ name: "OPERATOR_CONDITION_NAME", value: "widget-operator.v1.2.0" }] }] },
                },
            },
        };
        expect(installedCsvOf(deployment)).toEqual({ name: "widget-operator.v1.2.0" });
        const recorded = {
            spec: {
                template: { ...deployment.spec.template, metadata: { annotations: { "cluster-platform.io/operator-version": "1.2.0" } } },
            },
        };
        expect(installedCsvOf(recorded)).toEqual({ name: "widget-operator.v1.2.0", version: "1.2.0" });
        expect(installedCsvOf("absent")).toBeUndefined();
    });
});

describe("OperatorCondition Upgradeable (OLM's isOperatorUpgradeable)", () => {
    const condition = (generation: number, overrides: object[], conditions: object[]) => ({
        metadata: { generation },
        spec: { overrides },
        status: { conditions },
    });
    test("GIVEN Upgradeable=False reported for the current generation WHEN judged THEN the upgrade is held with the operator's message", () => {
        expect(
            upgradeableVerdict(
                condition(2, [], [{ type: "Upgradeable", status: "False", message: "migration running", observedGeneration: 2 }]),
            ),
        ).toEqual({
            ok: false,
            message: "the running operator is not upgradeable: migration running",
        });
    });
    test("GIVEN an override WHEN judged THEN it wins over the reported condition, either way", () => {
        const falseReported = [{ type: "Upgradeable", status: "False", message: "x", observedGeneration: 1 }];
        expect(
            upgradeableVerdict(condition(1, [{ type: "Upgradeable", status: "True", message: "admin says go" }], falseReported)),
        ).toEqual({ ok: true });
        expect(upgradeableVerdict(condition(1, [{ type: "Upgradeable", status: "False", message: "admin says wait" }], []))).toEqual({
            ok: false,
            message: "the running operator is not upgradeable (OperatorCondition override): admin says wait",
        });
    });
    test("GIVEN a condition of an older generation, or none, or no OperatorCondition WHEN judged THEN outdated holds the upgrade and the others allow it", () => {
        expect(upgradeableVerdict(condition(3, [], [{ type: "Upgradeable", status: "True", observedGeneration: 2 }]))).toEqual({
            ok: false,
            message: "the running operator's OperatorCondition Upgradeable=True is outdated (observedGeneration 2, generation 3)",
        });
        expect(upgradeableVerdict(condition(1, [], []))).toEqual({ ok: true });
        expect(upgradeableVerdict("absent")).toEqual({ ok: true });
    });
});
