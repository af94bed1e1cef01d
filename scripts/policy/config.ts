/**
 * The policy config a stack passes to the packs: a policy pack cannot read stack config, so the
 * knobs that follow the stack (the required tags are the keys of aws.userTags; the OLM RBAC
 * toggles are the stack's own) are written into `--policy-pack-config` files from the stack's
 * config file. Pure, plus a small CLI:
 *
 *   npm run policy:config -- --config Pulumi.prod.yaml --out policy-config
 *   pulumi preview --policy-pack policy-packs/aws-tags --policy-pack-config policy-config/aws-tags.json \
 *                  --policy-pack policy-packs/k8s-rbac --policy-pack-config policy-config/k8s-rbac.json
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";
import { pkoStackName, RECONCILE_ROLE_EXEMPTION_REASON, reconcileRoleName } from "../../components/reconcile/names";
import { DEFAULT_AGGREGATION_ROLES } from "../../components/shared/rbac";
import { readConfigFile } from "../render/config-file";
import type { PackConfig } from "./engine";

export const PACKS = ["aws-tags", "k8s-rbac"] as const;
export type PackName = (typeof PACKS)[number];

/** Roles the stack itself needs beyond a pack's rule, by name, with why: the policy, the role and the reason. */
export function policyExemptions(config: StackConfig): Array<{ policy: string; role: string; reason: string }> {
    return config.reconcile.enabled
        ? [
              {
                  policy: "k8s-no-broad-grants",
                  role: reconcileRoleName(pkoStackName(config.cluster.name)),
                  reason: RECONCILE_ROLE_EXEMPTION_REASON,
              },
          ]
        : [];
}

/** Each pack's config for a validated stack config (only knobs that follow the stack; the rest keep their defaults). */
export function policyConfigFor(config: StackConfig): Record<PackName, PackConfig> {
    const exempted = policyExemptions(config);
    return {
        "aws-tags": {
            "aws-required-tags": { requiredTags: Object.keys(config.aws.userTags) },
        },
        "k8s-rbac": {
            "k8s-olm-rbac-toggles": {
                disableOLMAggregateCRDRoles: config.olm.disableOLMAggregateCRDRoles,
                disableAggregateCRDRoles: config.olm.disableAggregateCRDRoles,
                disableAllNamespacePermissionPromotion: config.olm.disableAllNamespacePermissionPromotion,
            },
            "k8s-aggregated-roles": {
                aggregatedRoles: [...new Set([...DEFAULT_AGGREGATION_ROLES, ...config.subscriptions.allowedAggregationRoles])],
            },
            "k8s-pod-security-restricted": { platform: config.cluster.platform },
            ...(exempted.length > 0 ? { "k8s-no-broad-grants": { allowedRoles: exempted.map((e) => e.role) } } : {}),
        },
    };
}

/** The validated stack config of a stack file (or plain YAML of the same keys), or the validator's report. */
function stackConfigOf(file: string): { ok: true; config: StackConfig } | { ok: false; report: string } {
    const result = validateStackConfig(sectionsFromPulumiConfig(readConfigFile(file).values));
    return result.ok ? { ok: true, config: result.config } : { ok: false, report: formatReport(result.problems) };
}

const USAGE = "usage: npm run policy:config -- --config <Pulumi.<stack>.yaml> --out <dir>";

/** Writes `<out>/<pack>.json` for every pack; returns the exit code. */
export function main(
    argv: string[],
    write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
    fail: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): number {
    let args;
    try {
        args = parseArgs({ args: argv, options: { config: { type: "string" }, out: { type: "string" } } }).values;
    } catch (error) {
        fail(`${(error as Error).message}\n${USAGE}`);
        return 2;
    }
    if (!args.config || !args.out) {
        fail(USAGE);
        return 2;
    }
    const stack = stackConfigOf(args.config);
    if (!stack.ok) {
        fail(stack.report);
        return 1;
    }
    fs.mkdirSync(args.out, { recursive: true });
    const configs = policyConfigFor(stack.config);
    const flags: string[] = [];
    for (const pack of PACKS) {
        const file = path.join(args.out, `${pack}.json`);
        fs.writeFileSync(file, `${JSON.stringify(configs[pack], null, 2)}\n`);
        write(`wrote ${file}`);
        flags.push(`--policy-pack policy-packs/${pack} --policy-pack-config ${file}`);
    }
    for (const exemption of policyExemptions(stack.config)) {
        write(`${exemption.policy}: allowedRoles ${exemption.role}: ${exemption.reason}`);
    }
    write(`pulumi preview ${flags.join(" ")}`);
    return 0;
}

if (require.main === module) {
    process.exitCode = main(process.argv.slice(2));
}
