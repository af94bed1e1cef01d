/**
 * What the stack requires of the AWS provider that manages each AWS resource: not the engine's
 * default provider (configured from `aws:*` stack config, which this program never sets, so none of
 * the stack's settings reach it), and `ignoreTags` covering the configured keys and prefixes (a
 * provider's `ignoreTags` applies only to the resources it manages: terraform-provider-aws
 * `ignore_tags`, per provider configuration). Judged per resource, before it exists.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { asObject, known, UNKNOWN } from "../shared/values";

interface ProviderSettingsConfig {
    ignoreTagKeys: string[];
    ignoreTagKeyPrefixes: string[];
}

/** Pulumi names the provider it creates for a package `default` or `default_<version>` (pulumi/pulumi pkg/resource/deploy/providers). */
export function isDefaultProvider(provider: PolicyProviderResource): boolean {
    return /::default(_[0-9_]+[^:]*)?$/.test(provider.urn);
}

/** The provider's `ignoreTags`, decoded (provider inputs reach analyzers JSON-encoded, or as objects); UNKNOWN while unknown. */
function ignoreTagsOf(provider: PolicyProviderResource): { keys: string[]; keyPrefixes: string[] } | typeof UNKNOWN {
    const raw = known(() => provider.props.ignoreTags);
    if (raw === UNKNOWN) {
        return UNKNOWN;
    }
    let decoded: unknown = raw;
    if (typeof raw === "string") {
        try {
            decoded = JSON.parse(raw);
        } catch {
            decoded = undefined;
        }
    }
    const object = asObject(decoded) ?? {};
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    return { keys: strings(object.keys), keyPrefixes: strings(object.keyPrefixes) };
}

export const providerSettings = resourcePolicy<ProviderSettingsConfig>(
    {
        name: "aws-provider-settings",
        description:
            "Every AWS resource is managed by an explicit AWS provider (not the engine's default one) whose ignoreTags covers the stack's aws.ignoreTags.",
        severity: "high",
        remediationSteps:
            "Declare the resource at the top of the program (the stack's AWS provider is then given to it), or pass the stack's AWS provider (or one with the same ignoreTags) in its provider or providers option.",
        config: {
            ignoreTagKeys: stringList("Keys every AWS provider must ignore (npm run policy:config: aws.ignoreTags.keys)."),
            ignoreTagKeyPrefixes: stringList(
                "Key prefixes every AWS provider must ignore (npm run policy:config: aws.ignoreTags.keyPrefixes).",
            ),
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
        const ignore = ignoreTagsOf(provider);
        if (ignore === UNKNOWN) {
            return;
        }
        const missing = [
            ...config.ignoreTagKeys.filter((k) => !ignore.keys.includes(k)).map((k) => `key ${JSON.stringify(k)}`),
            ...config.ignoreTagKeyPrefixes.filter((p) => !ignore.keyPrefixes.includes(p)).map((p) => `key prefix ${JSON.stringify(p)}`),
        ];
        if (missing.length > 0) {
            report(`${label}: its provider ${JSON.stringify(provider.name)} does not ignore ${missing.join(", ")} (aws.ignoreTags)`);
        }
    },
);
