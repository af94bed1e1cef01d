/**
 * `@pulumi/aws`, loaded when an AWS resource is first declared. Requiring it costs about 0.2 s of
 * CPU in every program run, and a stack with `aws.enabled: false` (a cluster off AWS, the real
 * tier's stacks) declares no AWS resource, so its previews and updates need not pay that.
 * Types come from `import type`, which TypeScript erases.
 */
import type * as Aws from "@pulumi/aws";

export function awsPackage(): typeof Aws {
    return require("@pulumi/aws") as typeof Aws;
}
