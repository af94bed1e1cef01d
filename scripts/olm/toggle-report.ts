/**
 * `npm run olm:toggle-report -- <roles.json> [--config Pulumi.<stack>.yaml]`: which ClusterRoles
 * OLM generated for the operators it manages that the seed-003 toggles would have prevented
 * (components/operator/olm-report.ts). The input is `kubectl get clusterroles,roles -A -o json`.
 * With `--config`, the stack's `olm` toggles; without, every toggle, so the admin sees what each
 * one would reach.
 */
import * as fs from "node:fs";
import { parseArgs } from "node:util";
import { sectionsFromPulumiConfig, validateStackConfig } from "../../components/config";
import { ListedRole, olmToggleFindings, toggleReportLines } from "../../components/operator/olm-report";
import { OlmToggles } from "../../components/operator/rbac";
import { formatReport } from "../../components/shared/problems";
import { readConfigFile } from "../render/config-file";

const USAGE =
    "usage: npm run olm:toggle-report -- <roles.json from kubectl get clusterroles,roles -A -o json> [--config Pulumi.<stack>.yaml]";
const ALL_SET: OlmToggles = {
    disableOLMAggregateCRDRoles: true,
    disableAggregateCRDRoles: true,
    disableAllNamespacePermissionPromotion: true,
};

/** Prints the report; returns the exit code (0 whatever it finds: it informs, it does not judge). */
export function main(
    argv: string[],
    write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
    fail: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): number {
    let parsed;
    try {
        parsed = parseArgs({ args: argv, allowPositionals: true, options: { config: { type: "string" } } });
    } catch (error) {
        fail(`${(error as Error).message}\n${USAGE}`);
        return 2;
    }
    if (parsed.positionals.length !== 1) {
        fail(USAGE);
        return 2;
    }
    let toggles = ALL_SET;
    if (parsed.values.config) {
        const result = validateStackConfig(sectionsFromPulumiConfig(readConfigFile(parsed.values.config).values));
        if (!result.ok) {
            fail(formatReport(result.problems));
            return 1;
        }
        const { disableOLMAggregateCRDRoles, disableAggregateCRDRoles, disableAllNamespacePermissionPromotion } = result.config.olm;
        toggles = { disableOLMAggregateCRDRoles, disableAggregateCRDRoles, disableAllNamespacePermissionPromotion };
    }
    let items: ListedRole[];
    try {
        const list = JSON.parse(fs.readFileSync(parsed.positionals[0], "utf8")) as { items?: unknown };
        if (!Array.isArray(list.items)) {
            throw new Error("not a Kubernetes List (no items)");
        }
        items = list.items as ListedRole[];
    } catch (error) {
        fail(`${parsed.positionals[0]}: ${(error as Error).message}\n${USAGE}`);
        return 2;
    }
    toggleReportLines(olmToggleFindings(items, toggles)).forEach(write);
    return 0;
}

if (require.main === module) {
    process.exitCode = main(process.argv.slice(2));
}
