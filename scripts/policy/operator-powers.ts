/**
 * The powers of the dangerous-request set each declared operator's generated roles hold, judged
 * exactly as the k8s-rbac pack judges them (policy-packs/k8s-rbac: `roleView`, `roleFindings`),
 * each with the CSV line its rule comes from. Shared by `npm run policy:config` (which lists them
 * and writes the exemptions an admin accepted) and `npm run policy:population` (every community
 * bundle the program installs).
 *
 * The plans come from the operator pre-flight (components/operator/plan.ts `planOperators`), the
 * same one index.ts runs; `planned` is the one place that asks for them, so it can move to the
 * catalog planning helper i35-catalog is building once that lands.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import type { OlmConfig, OperatorConfig } from "../../components/config/schema";
import { planOperators } from "../../components/operator";
import type { OperatorPlan } from "../../components/operator";
import { GENERATED_BY } from "../../components/operator/rbac";
import { GENERATED_BY_LABEL } from "../../components/shared/labels";
import type { Problem } from "../../components/shared/problems";
import type { PolicyRule } from "../../components/shared/rbac";
import { DANGEROUS_POWERS, PowerId } from "../../components/shared/rbac-dangerous";
import { roleFindings } from "../../policy-packs/k8s-rbac/rbac-access";
import { roleView } from "../../policy-packs/k8s-rbac/rbac-objects";

/** Where in a CSV a generated rule comes from. */
export interface CsvLine {
    /** The CSV file, relative to the project. */
    file: string;
    line: number;
    /** `spec.install.spec.clusterPermissions[0].rules[3]`. */
    path: string;
}

/** One power one generated role holds. */
export interface OperatorPower {
    operator: string;
    power: PowerId;
    /** `ClusterRole "name"` or `Role "namespace/name"`. */
    role: string;
    /** What allows it (the pack's words: `rules[3] allows list secrets …`). */
    where: string;
    csv?: CsvLine;
}

/** The pre-flight plans of the declared operators (the one call to the planner here). */
export function planned(
    operators: readonly OperatorConfig[],
    olm: OlmConfig,
    projectRoot: string,
): { plans: OperatorPlan[]; problems: Problem[] } {
    const { plans, problems } = planOperators(operators, olm, projectRoot);
    return { plans, problems };
}

const ruleJson = (rule: Partial<PolicyRule>) =>
    JSON.stringify(["apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"].map((k) => rule[k as keyof PolicyRule] ?? []));

/** The CSV field a generated role's rules are copied from. */
function fieldOf(generatedBy: string | undefined): "permissions" | "clusterPermissions" | undefined {
    switch (generatedBy) {
        case GENERATED_BY.clusterPermissions:
            return "clusterPermissions";
        case GENERATED_BY.permissions:
        case GENERATED_BY.targetNamespaces:
        case GENERATED_BY.allNamespacesPromotion:
        case GENERATED_BY.rbacNamespaces:
            return "permissions";
        default:
            return undefined;
    }
}

/** Line numbers of a CSV's permission rules, read once per file. */
class CsvLines {
    private readonly cache = new Map<string, { rules: string[]; lines: { line: number; path: string }[] }[]>();

    constructor(private readonly projectRoot: string) {}

    /**
     * Where rule `index` of a generated role comes from: the `field` permission whose rules the
     * role's begin with (OLM copies them in order; a promoted role adds one rule after them).
     */
    find(
        csvFile: string,
        field: "permissions" | "clusterPermissions",
        roleRules: readonly Partial<PolicyRule>[],
        index: number,
    ): CsvLine | undefined {
        const key = `${csvFile}|${field}`;
        if (!this.cache.has(key)) {
            this.cache.set(key, this.read(csvFile, field));
        }
        const role = roleRules.map(ruleJson);
        const permission = this.cache.get(key)?.find((p) => p.rules.length > index && p.rules.every((rule, i) => rule === role[i]));
        const hit = permission?.lines[index];
        return hit ? { file: csvFile, ...hit } : undefined;
    }

    private read(csvFile: string, field: string): { rules: string[]; lines: { line: number; path: string }[] }[] {
        const lineCounter = new LineCounter();
        const document = parseDocument(fs.readFileSync(path.resolve(this.projectRoot, csvFile), "utf8"), { lineCounter });
        const permissions = document.getIn(["spec", "install", "spec", field], true);
        if (!isSeq(permissions)) return [];
        return permissions.items.map((permission, p) => {
            const rules = isMap(permission) ? permission.get("rules", true) : undefined;
            const items = isSeq(rules) ? rules.items : [];
            return {
                rules: items.map((node) => ruleJson((node as { toJSON(): Partial<PolicyRule> }).toJSON())),
                lines: items.map((node, r) => ({
                    line: lineCounter.linePos((node as { range?: [number, number, number] }).range?.[0] ?? 0).line,
                    path: `spec.install.spec.${field}[${p}].rules[${r}]`,
                })),
            };
        });
    }
}

/** The powers each plan's generated roles hold, in plan order, with the CSV line of each rule that gives one. */
export function powersOfPlans(plans: readonly OperatorPlan[], projectRoot: string): OperatorPower[] {
    const lines = new CsvLines(projectRoot);
    const out: OperatorPower[] = [];
    for (const plan of plans) {
        for (const object of plan.rbac) {
            if (object.kind !== "Role" && object.kind !== "ClusterRole") continue;
            const role = roleView({
                type: `kubernetes:rbac.authorization.k8s.io/v1:${object.kind}`,
                props: object as unknown as Record<string, unknown>,
                name: object.metadata.name,
            });
            if (!role) continue;
            const field = fieldOf(object.metadata.labels[GENERATED_BY_LABEL]);
            for (const finding of roleFindings(role)) {
                const csv =
                    field && finding.where.startsWith("rules[")
                        ? lines.find(plan.config.csv, field, role.declaredRules, finding.rule)
                        : undefined;
                out.push({
                    operator: plan.config.name,
                    power: finding.power,
                    role: `${object.kind} ${JSON.stringify(object.kind === "Role" ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name)}`,
                    where: finding.where,
                    ...(csv ? { csv } : {}),
                });
            }
        }
    }
    return out;
}

/** Whether an admin may accept a power per operator: powers over RBAC itself (escalate, bind, impersonate, everything) are not. */
export function acceptable(power: PowerId): boolean {
    return !DANGEROUS_POWERS[power].overRbac;
}
