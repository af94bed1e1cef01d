import * as pulumi from "@pulumi/pulumi";
import { awsPackage } from "../aws-assets/aws-package";

/**
 * A legacy transformation (registered for the whole stack) that gives every AWS resource declared
 * at the top of the program without a provider the stack's own AWS provider, so the settings the
 * stack requires of AWS providers (`ignoreTags` from `aws.ignoreTags`, the region) apply to it too:
 * the engine's default provider is configured from `aws:*` stack config, which this program never
 * sets, and a provider's `ignoreTags` reaches only the resources it manages (hashicorp
 * terraform-provider-aws `ignore_tags`, per provider). A resource inside a component takes the
 * component's providers, which the transformation cannot see; the aws-tags pack's
 * `aws-provider-settings` policy refuses one that ends up on the default provider, before it
 * exists.
 */
export function stackAwsProvider(provider: pulumi.ProviderResource): pulumi.ResourceTransformation {
    return ({ type, props, opts }) => {
        if (!type.startsWith("aws:") || opts.parent !== undefined || opts.provider !== undefined || hasAwsProvider(opts)) {
            return undefined;
        }
        return { props, opts: { ...opts, provider } };
    };
}

function hasAwsProvider(opts: pulumi.ResourceOptions): boolean {
    const providers = (opts as pulumi.ComponentResourceOptions).providers;
    if (providers === undefined) {
        return false;
    }
    return Array.isArray(providers) ? providers.some((p) => awsPackage().Provider.isInstance(p)) : "aws" in providers;
}
