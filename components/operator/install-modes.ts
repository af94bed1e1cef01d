/**
 * Which `targetNamespaces` shapes a CSV's installModes allow, as OLM decides it
 * (`InstallModeSet.Supports`), with OLM's messages. `[]` is AllNamespaces; one namespace equal to
 * the operator's is OwnNamespace; one other namespace is SingleNamespace; more are MultiNamespace.
 */
import type { ClusterServiceVersion, InstallModeType } from "./csv";

export type InstallModeSet = Record<InstallModeType, boolean>;

export function installModeSet(csv: ClusterServiceVersion): InstallModeSet {
    const set: InstallModeSet = { OwnNamespace: false, SingleNamespace: false, MultiNamespace: false, AllNamespaces: false };
    for (const mode of csv.spec.installModes) {
        set[mode.type] = mode.supported;
    }
    return set;
}

/** OLM's `isSingletonOperator`: AllNamespaces supported and nothing else. */
export function supportsAllNamespacesOnly(set: InstallModeSet): boolean {
    return set.AllNamespaces && !set.OwnNamespace && !set.SingleNamespace && !set.MultiNamespace;
}

/** The install mode a `targetNamespaces` list asks for. */
export function requestedInstallMode(operatorNamespace: string, targetNamespaces: readonly string[]): InstallModeType {
    if (targetNamespaces.length === 0) {
        return "AllNamespaces";
    }
    if (targetNamespaces.length === 1) {
        return targetNamespaces[0] === operatorNamespace ? "OwnNamespace" : "SingleNamespace";
    }
    return "MultiNamespace";
}

/** OLM's reason the shape is refused, or undefined when the CSV supports it. */
export function unsupportedInstallMode(
    set: InstallModeSet,
    operatorNamespace: string,
    targetNamespaces: readonly string[],
): string | undefined {
    const supported = (Object.keys(set) as InstallModeType[]).filter((mode) => set[mode]);
    const detail = ` (the CSV supports ${supported.length > 0 ? supported.join(", ") : "no install mode"})`;
    switch (requestedInstallMode(operatorNamespace, targetNamespaces)) {
        case "AllNamespaces":
            return set.AllNamespaces
                ? undefined
                : `AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces${detail}`;
        case "OwnNamespace":
            return set.OwnNamespace
                ? undefined
                : `OwnNamespace InstallModeType not supported, cannot configure to watch own namespace${detail}`;
        case "SingleNamespace":
            return set.SingleNamespace
                ? undefined
                : `SingleNamespace InstallModeType not supported, cannot configure to watch one namespace${detail}`;
        case "MultiNamespace":
            if (!set.MultiNamespace) {
                return `MultiNamespace InstallModeType not supported, cannot configure to watch ${targetNamespaces.length} namespaces${detail}`;
            }
            if (targetNamespaces.includes(operatorNamespace) && !set.OwnNamespace) {
                return `OwnNamespace InstallModeType not supported, cannot configure to watch own namespace${detail}`;
            }
            return undefined;
    }
}

/** operator-framework/api's checks on the installModes list itself. */
export function installModeListProblems(csv: ClusterServiceVersion): string[] {
    const modes = csv.spec.installModes;
    if (modes.length === 0) {
        return ["install modes not found (spec.installModes is empty)"];
    }
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const mode of modes) {
        if (seen.has(mode.type)) {
            problems.push(`duplicate install modes present (${mode.type})`);
        }
        seen.add(mode.type);
    }
    if (!modes.some((m) => m.supported)) {
        problems.push("none of InstallModeTypes are supported");
    }
    return problems;
}
