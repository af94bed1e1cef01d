import fc from "fast-check";
import { InstallModeSet, requestedInstallMode, unsupportedInstallMode } from "../../components/operator/install-modes";

const only = (...modes: (keyof InstallModeSet)[]): InstallModeSet => ({
    OwnNamespace: modes.includes("OwnNamespace"),
    SingleNamespace: modes.includes("SingleNamespace"),
    MultiNamespace: modes.includes("MultiNamespace"),
    AllNamespaces: modes.includes("AllNamespaces"),
});

describe("targetNamespaces against a CSV's installModes", () => {
    test.each([
        [[], "AllNamespaces"],
        [["operators"], "OwnNamespace"],
        [["team-a"], "SingleNamespace"],
        [["team-a", "team-b"], "MultiNamespace"],
        [["operators", "team-a"], "MultiNamespace"],
    ])("GIVEN targetNamespaces %j for an operator in 'operators' THEN the install mode is %s", (targets, mode) => {
        expect(requestedInstallMode("operators", targets)).toBe(mode);
    });

    test.each([
        [
            "AllNamespaces on a namespaced CSV (etcd)",
            only("OwnNamespace", "SingleNamespace"),
            [],
            "AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces (the CSV supports OwnNamespace, SingleNamespace)",
        ],
        [
            "OwnNamespace on an AllNamespaces-only CSV",
            only("AllNamespaces"),
            ["operators"],
            "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace (the CSV supports AllNamespaces)",
        ],
        [
            "SingleNamespace on an AllNamespaces-only CSV",
            only("AllNamespaces"),
            ["team-a"],
            "SingleNamespace InstallModeType not supported, cannot configure to watch one namespace (the CSV supports AllNamespaces)",
        ],
        [
            "MultiNamespace on etcd",
            only("OwnNamespace", "SingleNamespace"),
            ["team-a", "team-b"],
            "MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces (the CSV supports OwnNamespace, SingleNamespace)",
        ],
        [
            "MultiNamespace including its own namespace without OwnNamespace",
            only("SingleNamespace", "MultiNamespace"),
            ["operators", "team-a"],
            "OwnNamespace InstallModeType not supported, cannot configure to watch own namespace (the CSV supports SingleNamespace, MultiNamespace)",
        ],
    ])("GIVEN %s THEN OLM's message says why", (_case, set, targets, message) => {
        expect(unsupportedInstallMode(set, "operators", targets)).toBe(message);
    });

    test("GIVEN a CSV supporting every mode WHEN any targetNamespaces shape is asked THEN it is accepted", () => {
        fc.assert(
            fc.property(fc.uniqueArray(fc.constantFrom("operators", "team-a", "team-b", "team-c")), (targets) => {
                expect(
                    unsupportedInstallMode(
                        only("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"),
                        "operators",
                        targets,
                    ),
                ).toBeUndefined();
            }),
        );
    });

    test("GIVEN a CSV supporting exactly one mode WHEN a shape asks for another THEN it is refused, and the shape of that mode is accepted", () => {
        const shapes: Record<keyof InstallModeSet, string[]> = {
            AllNamespaces: [],
            OwnNamespace: ["operators"],
            SingleNamespace: ["team-a"],
            MultiNamespace: ["team-a", "team-b"],
        };
        for (const supported of Object.keys(shapes) as (keyof InstallModeSet)[]) {
            for (const [mode, targets] of Object.entries(shapes)) {
                const result = unsupportedInstallMode(only(supported), "operators", targets);
                expect(result === undefined).toBe(mode === supported);
            }
        }
    });
});
