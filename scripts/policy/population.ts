/**
 * `npm run policy:population [-- --verbose]`: every real operator bundle of
 * ../shared/testdata/community-bundles/ (the newest of each operator in OpenShift's community
 * catalog) that the program installs, judged by the k8s-rbac pack's role rules with no exemption,
 * as an OpenShift stack would install it on its own (AllNamespaces where the CSV supports it,
 * else OwnNamespace, else a SingleNamespace), every OLM RBAC toggle off:
 *
 * - passes with no exemption: its generated roles hold no power of the dangerous-request set
 *   beyond their namespaces;
 * - passes with reviewed exemptions: every power they hold may be accepted per operator
 *   (`npm run policy:config -- --accept`);
 * - refused: a power over RBAC itself (escalate, bind, impersonate, everything), which no
 *   per-operator exemption accepts (a role holding one must be reviewed by name: allowedRoles).
 *
 * Then how many operators hold each power. docs/policy-packs.md records the figures.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
import { validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";
import { DANGEROUS_POWERS, PowerId, POWER_IDS } from "../../components/shared/rbac-dangerous";
import { PROJECT_ROOT } from "../render/render";
import { acceptable, OperatorPower, planned, powersOfPlans } from "./operator-powers";

export const BUNDLES_DIR = path.join("..", "shared", "testdata", "community-bundles");

export interface Bundle {
    operator: string;
    /** The CSV, relative to the project. */
    csv: string;
}

/** Every bundle of the population: the CSV in `<operator>/<version>/manifests/`, relative to the project. */
export function communityBundles(projectRoot: string = PROJECT_ROOT): Bundle[] {
    const root = path.join(projectRoot, BUNDLES_DIR);
    return fs
        .readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
        .flatMap((operator) =>
            fs.readdirSync(path.join(root, operator)).flatMap((version) => {
                const manifests = path.join(root, operator, version, "manifests");
                const csv = fs.existsSync(manifests)
                    ? fs.readdirSync(manifests).find((f) => f.endsWith(".clusterserviceversion.yaml"))
                    : undefined;
                return csv ? [{ operator, csv: path.join(BUNDLES_DIR, operator, version, "manifests", csv) }] : [];
            }),
        );
}

export type Verdict =
    | { kind: "not-installed"; reason: string }
    | { kind: "clean" }
    | { kind: "exemptions"; powers: OperatorPower[] }
    | { kind: "refused"; powers: OperatorPower[] };

/** An operator install name the config accepts (a DNS label) for a bundle folder's name. */
const installName = (operator: string) =>
    operator
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, "-")
        .slice(0, 50)
        .replace(/-+$/, "");

/** How a stack installs the bundle on its own: AllNamespaces where supported, else OwnNamespace, else one other namespace. */
function targetNamespacesFor(csvFile: string, namespace: string): string[] {
    const csv = parse(fs.readFileSync(path.join(PROJECT_ROOT, csvFile), "utf8")) as {
        spec?: { installModes?: { type: string; supported: boolean }[] };
    };
    const supported = new Set((csv?.spec?.installModes ?? []).filter((m) => m.supported).map((m) => m.type));
    if (supported.has("AllNamespaces")) return [];
    if (supported.has("OwnNamespace")) return [namespace];
    return [`${namespace}-target`];
}

/** One bundle judged as a stack of its own would install it. */
export function judgeBundle(bundle: Bundle): Verdict {
    const name = installName(bundle.operator);
    let targetNamespaces: string[];
    try {
        targetNamespaces = targetNamespacesFor(bundle.csv, name);
    } catch (error) {
        return { kind: "not-installed", reason: `its CSV does not parse: ${(error as Error).message.split("\n")[0]}` };
    }
    const operator = { name, csv: bundle.csv, namespace: name, targetNamespaces };
    const config = validateStackConfig({
        cluster: { name: "population", platform: "openshift", kubeContext: "population" },
        operators: [operator],
    });
    if (!config.ok) {
        return { kind: "not-installed", reason: formatReport(config.problems).split("\n")[1]?.trim() ?? "config refused" };
    }
    const { plans, problems } = planned(config.config.operators, config.config.olm, PROJECT_ROOT);
    if (problems.length > 0 || plans.length === 0) {
        return { kind: "not-installed", reason: `the pre-flight refuses it: ${problems[0]?.message ?? "no plan"}` };
    }
    const powers = powersOfPlans(plans, PROJECT_ROOT);
    if (powers.length === 0) return { kind: "clean" };
    return powers.every((p) => acceptable(p.power)) ? { kind: "exemptions", powers } : { kind: "refused", powers };
}

export interface PopulationFigures {
    bundles: number;
    installed: number;
    notInstalled: number;
    clean: number;
    exemptions: number;
    refused: number;
    /** Operators holding each power (installed ones). */
    byPower: Record<PowerId, number>;
}

export function figures(verdicts: readonly { bundle: Bundle; verdict: Verdict }[]): PopulationFigures {
    const byPower = Object.fromEntries(POWER_IDS.map((p) => [p, 0])) as Record<PowerId, number>;
    for (const { verdict } of verdicts) {
        if (verdict.kind === "exemptions" || verdict.kind === "refused") {
            for (const power of new Set(verdict.powers.map((p) => p.power))) byPower[power]++;
        }
    }
    const count = (kind: Verdict["kind"]) => verdicts.filter((v) => v.verdict.kind === kind).length;
    return {
        bundles: verdicts.length,
        installed: verdicts.length - count("not-installed"),
        notInstalled: count("not-installed"),
        clean: count("clean"),
        exemptions: count("exemptions"),
        refused: count("refused"),
        byPower,
    };
}

export function main(argv: string[], write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): number {
    const { values } = parseArgs({ args: argv, options: { verbose: { type: "boolean", default: false } } });
    const verdicts = communityBundles().map((bundle) => ({ bundle, verdict: judgeBundle(bundle) }));
    if (values.verbose) {
        for (const { bundle, verdict } of verdicts) {
            const held =
                verdict.kind === "exemptions" || verdict.kind === "refused"
                    ? ` [${[...new Set(verdict.powers.map((p) => p.power))].join(", ")}]`
                    : "";
            write(`${bundle.operator}: ${verdict.kind}${verdict.kind === "not-installed" ? ` (${verdict.reason})` : held}`);
        }
    }
    const f = figures(verdicts);
    write(`bundles: ${f.bundles}; installed by the program: ${f.installed}; refused by its pre-flight or config: ${f.notInstalled}`);
    write(`passing with no exemption: ${f.clean}`);
    write(`passing with reviewed exemptions: ${f.exemptions}`);
    write(`refused (a power over RBAC itself, which no per-operator exemption accepts): ${f.refused}`);
    write("operators holding each power:");
    for (const power of POWER_IDS) {
        write(
            `  ${power}: ${f.byPower[power]}${acceptable(power) ? "" : " (not acceptable per operator)"} - ${DANGEROUS_POWERS[power].title}`,
        );
    }
    write(`policy:population installed=${f.installed} clean=${f.clean} exemptions=${f.exemptions} refused=${f.refused}`);
    return 0;
}

if (require.main === module) {
    process.exitCode = main(process.argv.slice(2));
}
