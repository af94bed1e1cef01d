/**
 * What the stack requires of the AWS provider that manages each AWS resource: not the engine's
 * default provider (configured from `aws:*` stack config, which this program never sets, so none of
 * the stack's settings reach it), `ignoreTags` covering the configured keys and prefixes (a
 * provider's `ignoreTags` applies only to the resources it manages: terraform-provider-aws
 * `ignore_tags`, per provider configuration), and, when configured, a `tagPolicyCompliance` at
 * least as strict as the knob (@pulumi/aws 7.48 provider.d.ts: the severity with which the
 * provider enforces the organization's tag policies' required keys, "error", "warning" or
 * "disabled"; unset or "disabled" enforces nothing; `TF_AWS_TAG_POLICY_COMPLIANCE` can set it on a
 * runner, out of the pack's sight, so only the provider's own setting counts). An `ignoreTags`
 * covering a required key is aws-required-tags'. Judged per resource, before it exists.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { providerIgnoreTags } from "./tag-policies";
import { providerInput } from "./tags";
import { UNKNOWN } from "../shared/values";

/** The provider's settings of tag policy compliance, weakest first. */
export const TAG_POLICY_COMPLIANCE = ["disabled", "warning", "error"] as const;
type Compliance = (typeof TAG_POLICY_COMPLIANCE)[number];

interface ProviderSettingsConfig {
    ignoreTagKeys: string[];
    ignoreTagKeyPrefixes: string[];
    tagPolicyCompliance: Compliance;
}

/** Pulumi names the provider it creates for a package `default` or `default_<version>` (pulumi/pulumi pkg/resource/deploy/providers). */
export function isDefaultProvider(provider: PolicyProviderResource): boolean {
    return /::default(_[0-9_]+[^:]*)?$/.test(provider.urn);
}

export const providerSettings = resourcePolicy<ProviderSettingsConfig>(
    {
        name: "aws-provider-settings",
        description:
            "Every AWS resource is managed by an explicit AWS provider (not the engine's default one) whose ignoreTags covers the stack's aws.ignoreTags, and whose tagPolicyCompliance is at least the configured severity.",
        severity: "high",
        remediationSteps:
            "Declare the resource at the top of the program (the stack's AWS provider is then given to it), or pass the stack's AWS provider (or one with the same ignoreTags and tagPolicyCompliance) in its provider or providers option.",
        config: {
            ignoreTagKeys: stringList("Keys every AWS provider must ignore (npm run policy:config: aws.ignoreTags.keys)."),
            ignoreTagKeyPrefixes: stringList(
                "Key prefixes every AWS provider must ignore (npm run policy:config: aws.ignoreTags.keyPrefixes).",
            ),
            tagPolicyCompliance: {
                type: "string",
                enum: [...TAG_POLICY_COMPLIANCE],
                default: "disabled",
                description:
                    "The least tagPolicyCompliance every AWS provider must set (disabled < warning < error): with warning or error the provider itself checks each resource against the organization's tag policies.",
            },
        },
    },
    (args, config, report) => {
        const provider = args.provider;
        if (!args.type.startsWith("aws:") || !provider || provider.type !== "pulumi:providers:aws") {
            return;
        }
        const label = resourceLabel(args.type, args.name);
        if (isDefaultProvider(provider)) {
            report(`${label} is managed by the default AWS provider, which none of the stack's AWS settings (region, ignoreTags) reach`);
            return;
        }
        const ignore = providerIgnoreTags(provider);
        if (ignore) {
            const missing = [
                ...config.ignoreTagKeys.filter((k) => !ignore.keys.includes(k)).map((k) => `key ${JSON.stringify(k)}`),
                ...config.ignoreTagKeyPrefixes.filter((p) => !ignore.keyPrefixes.includes(p)).map((p) => `key prefix ${JSON.stringify(p)}`),
            ];
            if (missing.length > 0) {
                report(`${label}: its provider ${JSON.stringify(provider.name)} does not ignore ${missing.join(", ")} (aws.ignoreTags)`);
            }
        }
        const wanted = TAG_POLICY_COMPLIANCE.indexOf(config.tagPolicyCompliance);
        const set = providerInput(provider, "tagPolicyCompliance");
        if (wanted > 0 && set !== UNKNOWN) {
            const level = typeof set === "string" ? TAG_POLICY_COMPLIANCE.indexOf(set as Compliance) : 0;
            if (level < wanted) {
                report(
                    `${label}: its provider ${JSON.stringify(provider.name)} sets tagPolicyCompliance ${set === undefined ? "not at all" : JSON.stringify(set)}, below ${JSON.stringify(config.tagPolicyCompliance)} (the environment's TF_AWS_TAG_POLICY_COMPLIANCE does not count: the pack cannot see it, and it differs per runner)`,
                );
            }
        }
    },
);
