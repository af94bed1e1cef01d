/**
 * The aws-tags capability in the stack: the AWS provider, the `AwsTags` component, the two
 * stack-wide transformations it brings, and the stack outputs it publishes. Registering the
 * transformations here, right after the component and before this function returns, is what
 * gives every taggable AWS resource and LoadBalancer Service declared later, in any component,
 * the tags: a stack transformation applies to resources registered after it
 * (pulumi/pulumi sdk/nodejs/runtime/stack.ts, registerStackTransformation).
 */
import type * as Aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget } from "../shared/cluster";
import { Carried, carriedOutputs } from "../shared/previous-update";
import { AwsAssetPlan, registryTrustOf, RegistryTrustConfig } from "../aws-assets";
import { awsPackage } from "../aws-assets/aws-package";
import { AwsTags } from "./component";
import { AwsTagConfig, IgnoreTags, propagateUserTags } from "./rules";
import { previousInstallTagKeys, previousTagKeyState } from "./day2";
import { stackAwsProvider } from "./providers";

/** The parts of the validated `aws` config section the capability installs from. */
export interface AwsStackSettings extends AwsTagConfig, RegistryTrustConfig {
    /** The AWS region of the stack's assets. */
    readonly region?: string;
    /** The AWS provider's `ignoreTags`. */
    readonly ignoreTags: IgnoreTags;
}

/**
 * Builds the AWS provider (its `ignoreTags` from `aws.ignoreTags`) and the `AwsTags` component,
 * then registers for the whole stack the tagging safety net and, with propagation on, the
 * LoadBalancer tags annotation. `previous` is what the previous update carried.
 */
export function installAwsTags(
    awsConfig: AwsStackSettings,
    assets: AwsAssetPlan,
    cluster: ClusterTarget,
    kubernetes: k8s.Provider,
    previous: Readonly<Partial<Carried>>,
): AwsTags {
    const awsProvider = new (awsPackage().Provider)("aws", {
        region: awsConfig.region as Aws.Region,
        ignoreTags: { keys: awsConfig.ignoreTags.keys, keyPrefixes: awsConfig.ignoreTags.keyPrefixes },
    });
    const awsTags = new AwsTags(
        "aws-tags",
        {
            cluster,
            region: awsConfig.region as string,
            userTags: awsConfig.userTags,
            propagate: propagateUserTags(awsConfig),
            previousTagKeys: previousTagKeyState(previous.awsUserTagKeys),
            previousInstallTagKeys: previousInstallTagKeys(previous.awsInstallTagKeys),
            assets,
            registryTrust: registryTrustOf(awsConfig),
        },
        { providers: { aws: awsProvider, kubernetes } },
    );
    pulumi.runtime.registerStackTransformation(awsTags.tagger.transformation);
    pulumi.runtime.registerStackTransformation(stackAwsProvider(awsProvider));
    if (awsTags.loadBalancerTransformation) {
        pulumi.runtime.registerStackTransformation(awsTags.loadBalancerTransformation);
    }
    return awsTags;
}

/** The AWS stack outputs: assets for other tools, and the tag key states the next update reads back. */
export function awsTagsOutputs(awsTags: AwsTags, awsConfig: AwsStackSettings): Record<string, unknown> {
    const storage = awsTags.registryStorage;
    return {
        ...carriedOutputs({ awsUserTagKeys: awsTags.tagKeys, awsInstallTagKeys: awsTags.installTagKeys }),
        ...(awsTags.webhookRepositoryUrl ? { awsWebhookImageRepositoryUrl: awsTags.webhookRepositoryUrl } : {}),
        ...(storage
            ? {
                  awsImageRegistryStorage: {
                      bucket: storage.bucketName,
                      region: awsConfig.region,
                      kmsKeyArn: storage.kmsKeyArn,
                      roleArn: storage.roleArn,
                  },
              }
            : {}),
        ...(awsTags.storageClassName ? { awsTaggedStorageClass: awsTags.storageClassName } : {}),
    };
}
