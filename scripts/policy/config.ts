/**
 * The policy config a stack passes to the packs: a policy pack cannot read stack config, so the
 * knobs that follow the stack (the required tags are the keys of aws.userTags; the OLM RBAC
 * toggles are the stack's own) are written into `--policy-pack-config` files from the stack's
 * config file. Pure, plus a small CLI:
 *
 *   npm run policy:config -- --config Pulumi.prod.yaml --out policy-config
 *   pulumi preview --policy-pack policy-packs/aws-tags --policy-pack-config policy-config/aws-tags.json \
 *                  --policy-pack policy-packs/k8s-rbac --policy-pack-config policy-config/k8s-rbac.json
 *
 * For every operator the stack declares it lists the powers of the dangerous-request set its
 * generated roles hold (as the k8s-rbac pack judges them), each with the CSV line it comes from,
 * and writes an exemption only for the powers an admin accepted, with the reason, in the reviewed
 * file beside the stack (`Pulumi.<stack>.policy-exemptions.yaml`, or `--exemptions <file>`):
 * `--accept <operator> --reason <why>` writes the operator's current powers there (the one
 * reviewed step). A power the operator gains later (an upgrade) is not in the file, so the pack
 * refuses it again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";
import { DEFAULT_AGGREGATION_ROLES } from "../../components/shared/rbac";
import { policyExemptions, PolicyExemption } from "./exemptions";
import {
    acceptedExemptions,
    describeOperatorPowers,
    loadAcceptances,
    OperatorAcceptances,
    writeAcceptances,
    accept,
} from "./operator-exemptions";
import { planned, powersOfPlans } from "./operator-powers";
import { readConfigFile } from "../render/config-file";
import type { PackConfig } from "./analyzer";

export const PACKS = ["aws-tags", "k8s-rbac"] as const;
export type PackName = (typeof PACKS)[number];

/**
 * Each pack's config for a validated stack config (only knobs that follow the stack; the rest
 * keep their defaults), with every exemption the stack's own correct resources need
 * (exemptions.ts, each with its reason) added to the knob it names.
 */
export function policyConfigFor(
    config: StackConfig,
    extra: { infraIds?: readonly string[]; operatorExemptions?: readonly { operator: string; powers: string[]; reason: string }[] } = {},
): Record<PackName, PackConfig> {
    const configs = baseConfigFor(config);
    if (config.operators.length > 0) {
        const grants = (configs["k8s-rbac"]["k8s-no-broad-grants"] ??= {}) as Record<string, unknown>;
        grants.operators = config.operators.map((o) => o.name);
        if ((extra.operatorExemptions ?? []).length > 0) {
            grants.operatorExemptions = extra.operatorExemptions;
        }
    }
    for (const exemption of policyExemptions(config, extra)) {
        const policy = (configs[exemption.pack][exemption.policy] ??= {}) as Record<string, unknown>;
        const current = (policy[exemption.knob] as string[] | undefined) ?? [];
        policy[exemption.knob] = [...new Set([...current, ...exemption.values])];
    }
    return configs;
}

function baseConfigFor(config: StackConfig): Record<PackName, PackConfig> {
    return {
        "aws-tags": {
            "aws-required-tags": { requiredTags: Object.keys(config.aws.userTags) },
            "aws-side-channel-tags": { requiredTags: Object.keys(config.aws.userTags) },
            "aws-provider-settings": {
                ignoreTagKeys: config.aws.ignoreTags.keys,
                ignoreTagKeyPrefixes: config.aws.ignoreTags.keyPrefixes,
            },
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
        },
    };
}

/** The validated stack config of a stack file (or plain YAML of the same keys), or the validator's report. */
function stackConfigOf(file: string): { ok: true; config: StackConfig } | { ok: false; report: string } {
    const result = validateStackConfig(sectionsFromPulumiConfig(readConfigFile(file).values));
    return result.ok ? { ok: true, config: result.config } : { ok: false, report: formatReport(result.problems) };
}

/** Operator CSV paths are relative to the project, as the program reads them. */
const PROJECT_ROOT_FOR_PLANS = path.resolve(__dirname, "..", "..");

const USAGE =
    "usage: npm run policy:config -- --config <Pulumi.<stack>.yaml> --out <dir> [--infra-id <OpenShift infra id>]... [--exemptions <file>] [--accept <operator> --reason <why>]";

/** The reviewed exemptions file beside a stack file: `Pulumi.prod.yaml` → `Pulumi.prod.policy-exemptions.yaml`. */
export function exemptionsFileFor(stackFile: string): string {
    return stackFile.replace(/(\.ya?ml)?$/, ".policy-exemptions.yaml");
}

/** Writes `<out>/<pack>.json` for every pack; returns the exit code. */
export function main(
    argv: string[],
    write: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
    fail: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): number {
    let args;
    try {
        args = parseArgs({
            args: argv,
            options: {
                config: { type: "string" },
                out: { type: "string" },
                "infra-id": { type: "string", multiple: true },
                exemptions: { type: "string" },
                accept: { type: "string" },
                reason: { type: "string" },
            },
        }).values;
    } catch (error) {
        fail(`${(error as Error).message}\n${USAGE}`);
        return 2;
    }
    if (!args.config || !args.out || (args.accept !== undefined) !== (args.reason !== undefined)) {
        fail(USAGE);
        return 2;
    }
    const stack = stackConfigOf(args.config);
    if (!stack.ok) {
        fail(stack.report);
        return 1;
    }
    // The operators' powers, judged as the pack judges them, and the admin's reviewed acceptances of them.
    const { plans, problems } = planned(stack.config.operators, stack.config.olm, PROJECT_ROOT_FOR_PLANS);
    if (problems.length > 0) {
        fail(formatReport(problems));
        return 1;
    }
    const powers = powersOfPlans(plans, PROJECT_ROOT_FOR_PLANS);
    const exemptionsFile = args.exemptions ?? exemptionsFileFor(args.config);
    let acceptances: OperatorAcceptances;
    try {
        acceptances = loadAcceptances(
            exemptionsFile,
            stack.config.operators.map((o) => o.name),
        );
        if (args.accept !== undefined) {
            acceptances = accept(
                acceptances,
                args.accept,
                args.reason as string,
                powers,
                stack.config.operators.map((o) => o.name),
            );
            writeAcceptances(exemptionsFile, acceptances);
            write(`wrote ${exemptionsFile}: operator ${JSON.stringify(args.accept)} accepted (review and commit it)`);
        }
    } catch (error) {
        fail((error as Error).message);
        return 1;
    }
    for (const line of describeOperatorPowers(powers, acceptances)) {
        write(line);
    }
    fs.mkdirSync(args.out, { recursive: true });
    const extra = { infraIds: args["infra-id"] ?? [], operatorExemptions: acceptedExemptions(powers, acceptances) };
    const configs = policyConfigFor(stack.config, extra);
    for (const line of describeExemptions(policyExemptions(stack.config, extra))) {
        write(line);
    }
    const flags: string[] = [];
    for (const pack of PACKS) {
        const file = path.join(args.out, `${pack}.json`);
        fs.writeFileSync(file, `${JSON.stringify(configs[pack], null, 2)}\n`);
        write(`wrote ${file}`);
        flags.push(`--policy-pack policy-packs/${pack} --policy-pack-config ${file}`);
    }
    write(`pulumi preview ${flags.join(" ")}`);
    return 0;
}

/** One line per exemption: what is exempt from which policy, and why. */
export function describeExemptions(exemptions: readonly PolicyExemption[]): string[] {
    return exemptions.map(
        (e) => `exempt ${e.values.map((v) => JSON.stringify(v)).join(", ")} from ${e.pack}/${e.policy} (${e.knob}): ${e.reason}`,
    );
}

if (require.main === module) {
    process.exitCode = main(process.argv.slice(2));
}
