/**
 * An admin's reviewed acceptances of the powers a declared operator's generated roles hold: a
 * YAML file beside the stack (`Pulumi.<stack>.policy-exemptions.yaml`), committed and reviewed
 * like the stack file, which `npm run policy:config` turns into the k8s-rbac pack's
 * `operatorExemptions` (only for powers the operator holds now and the file accepts):
 *
 *   # Reviewed acceptances (npm run policy:config -- --accept <operator> --reason <why>)
 *   operators:
 *     cert-manager:
 *       reason: issues certificates into Secrets of every namespace and injects CA bundles into webhooks
 *       powers: [read-secrets, admission-writes]
 *
 * Bad input is refused all at once, each problem naming key, value and rule: an operator the stack
 * does not declare, a power that is not one of the set or may not be accepted per operator
 * (escalate, bind, impersonate, everything: review such a role by name instead), an empty reason.
 */
import * as fs from "node:fs";
import { parse, stringify } from "yaml";
import { DANGEROUS_POWERS, PowerId, POWER_IDS } from "../../components/shared/rbac-dangerous";
import { acceptable, OperatorPower } from "./operator-powers";

export interface Acceptance {
    reason: string;
    powers: PowerId[];
}

export type OperatorAcceptances = Record<string, Acceptance>;

/** Every problem of an acceptances document, each naming key, value and rule. */
export function acceptanceProblems(document: unknown, declared: readonly string[]): string[] {
    const problems: string[] = [];
    const root = document as Record<string, unknown> | null;
    if (root === null || typeof root !== "object" || Array.isArray(root)) {
        return [`(document): ${JSON.stringify(document)} must be a map with the key "operators"`];
    }
    for (const key of Object.keys(root).filter((k) => k !== "operators")) {
        problems.push(`${key}: ${JSON.stringify(key)} is not a key of the exemptions file (its keys: operators)`);
    }
    const operators = root.operators ?? {};
    if (typeof operators !== "object" || operators === null || Array.isArray(operators)) {
        return [...problems, `operators: ${JSON.stringify(operators)} must be a map of operator names`];
    }
    for (const [name, entry] of Object.entries(operators as Record<string, unknown>)) {
        const at = `operators.${name}`;
        if (!declared.includes(name)) {
            problems.push(
                `${at}: ${JSON.stringify(name)} names no operator the stack declares (its operators: ${JSON.stringify(declared)}); an exemption is for one of the stack's operators`,
            );
        }
        if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
            problems.push(`${at}: ${JSON.stringify(entry)} must be a map with reason and powers`);
            continue;
        }
        const { reason, powers, ...rest } = entry as Record<string, unknown>;
        for (const key of Object.keys(rest)) {
            problems.push(`${at}.${key}: ${JSON.stringify(key)} is not a key of an operator's exemption (its keys: reason, powers)`);
        }
        if (typeof reason !== "string" || reason.trim() === "") {
            problems.push(`${at}.reason: ${JSON.stringify(reason)} must be a non-empty string: why the operator needs these powers`);
        }
        if (!Array.isArray(powers) || powers.length === 0) {
            problems.push(`${at}.powers: ${JSON.stringify(powers)} must be a non-empty list of powers (${POWER_IDS.join(", ")})`);
            continue;
        }
        powers.forEach((power, i) => {
            if (typeof power !== "string" || !(POWER_IDS as readonly string[]).includes(power)) {
                problems.push(
                    `${at}.powers[${i}]: ${JSON.stringify(power)} is not a power of the dangerous-request set (${POWER_IDS.join(", ")})`,
                );
            } else if (!acceptable(power as PowerId)) {
                problems.push(
                    `${at}.powers[${i}]: ${JSON.stringify(power)} cannot be accepted per operator: it is a power over RBAC itself (${DANGEROUS_POWERS[power as PowerId].title}); review the role by name instead (k8s-no-broad-grants allowedRoles)`,
                );
            }
        });
    }
    return problems;
}

export class ExemptionsFileError extends Error {
    constructor(file: string, problems: readonly string[]) {
        super(
            `invalid exemptions file ${file}: ${problems.length} problem${problems.length === 1 ? "" : "s"}\n${problems.map((p) => `  - ${p}`).join("\n")}`,
        );
        this.name = "ExemptionsFileError";
    }
}

/** The acceptances of `file` ({} when it does not exist); throws ExemptionsFileError naming every problem. */
export function loadAcceptances(file: string, declared: readonly string[]): OperatorAcceptances {
    if (!fs.existsSync(file)) {
        return {};
    }
    let document: unknown;
    try {
        document = parse(fs.readFileSync(file, "utf8")) ?? {};
    } catch (error) {
        throw new ExemptionsFileError(file, [`(document): not YAML: ${(error as Error).message.split("\n")[0]}`]);
    }
    const problems = acceptanceProblems(document, declared);
    if (problems.length > 0) {
        throw new ExemptionsFileError(file, problems);
    }
    return ((document as { operators?: OperatorAcceptances }).operators ?? {}) as OperatorAcceptances;
}

/** The acceptances with `operator`'s current acceptable powers added, for `reason`. */
export function accept(
    acceptances: OperatorAcceptances,
    operator: string,
    reason: string,
    powers: readonly OperatorPower[],
    declared: readonly string[],
): OperatorAcceptances {
    const held = [...new Set(powers.filter((p) => p.operator === operator && acceptable(p.power)).map((p) => p.power))];
    const entry: Acceptance = {
        reason,
        powers: POWER_IDS.filter((p) => held.includes(p) || (acceptances[operator]?.powers ?? []).includes(p)),
    };
    const problems = acceptanceProblems({ operators: { ...acceptances, [operator]: entry } }, declared);
    if (problems.length > 0) {
        throw new ExemptionsFileError("(--accept)", problems);
    }
    return { ...acceptances, [operator]: entry };
}

export function writeAcceptances(file: string, acceptances: OperatorAcceptances): void {
    const header =
        "# Reviewed acceptances of the powers operators' generated roles hold (npm run policy:config -- --accept <operator> --reason <why>).\n";
    fs.writeFileSync(file, `${header}${stringify({ operators: acceptances })}`);
}

/** The pack's operatorExemptions: each accepted power the operator holds now (an accepted power it no longer holds is left out). */
export function acceptedExemptions(
    powers: readonly OperatorPower[],
    acceptances: OperatorAcceptances,
): { operator: string; powers: PowerId[]; reason: string }[] {
    return Object.entries(acceptances).flatMap(([operator, acceptance]) => {
        const held = new Set(powers.filter((p) => p.operator === operator).map((p) => p.power));
        const kept = acceptance.powers.filter((p) => held.has(p));
        return kept.length === 0 ? [] : [{ operator, powers: kept, reason: acceptance.reason }];
    });
}

/** What `npm run policy:config` prints about each operator's powers: one line per power and role, with its CSV line and whether it is accepted. */
export function describeOperatorPowers(powers: readonly OperatorPower[], acceptances: OperatorAcceptances): string[] {
    const lines: string[] = [];
    for (const operator of [...new Set(powers.map((p) => p.operator))]) {
        const own = powers.filter((p) => p.operator === operator);
        const accepted = new Set(acceptances[operator]?.powers ?? []);
        lines.push(`operator ${JSON.stringify(operator)}: its generated roles hold ${[...new Set(own.map((p) => p.power))].join(", ")}`);
        for (const p of own) {
            const status = accepted.has(p.power)
                ? `accepted: ${acceptances[operator].reason}`
                : acceptable(p.power)
                  ? "not accepted: the pack refuses it"
                  : "cannot be accepted per operator: the pack refuses it unless the role is on allowedRoles";
            const source = p.csv ? ` (${p.csv.file}:${p.csv.line} ${p.csv.path})` : "";
            lines.push(`  [${p.power}] ${p.role}: ${p.where}${source}; ${status}`);
        }
        const pending = [...new Set(own.filter((p) => acceptable(p.power) && !accepted.has(p.power)).map((p) => p.power))];
        if (pending.length > 0) {
            lines.push(
                `  accept ${pending.join(", ")} after review: npm run policy:config -- --config <stack file> --out <dir> --accept ${operator} --reason "<why it needs them>"`,
            );
        }
    }
    return lines;
}
