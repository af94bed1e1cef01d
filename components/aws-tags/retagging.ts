/**
 * OpenShift operators that re-apply `Infrastructure/cluster` `status.platformStatus.aws.resourceTags`
 * to AWS resources after they exist, and the one precedence that keeps the stack from fighting
 * them (issue 29, point 2). Pure: no Pulumi imports.
 *
 * - csi-operator's `EBSVolumeTagsController` (openshift/csi-operator
 *   pkg/driver/aws-ebs/aws_ebs_tags_controller.go): for every PersistentVolume of driver
 *   `ebs.csi.aws.com` whose `ebs.openshift.io/volume-tags-hash` annotation differs from the hash of
 *   the status tags, `ec2:CreateTags` with every status tag (values overwritten, nothing removed),
 *   resynced every 30 minutes. Volumes of the stack's tagged StorageClass are among them.
 * - cluster-image-registry-operator's `AWSTagController` (pkg/operator/awstagcontroller.go):
 *   on every change of the status tags, `GetBucketTagging`, then every valid status tag added or
 *   its value updated (`syncInfraTags`), `PutBucketTagging`; it never removes one, and it does not
 *   look at the registry's `managementState`.
 *
 * On what these operators re-tag, a value the stack gave a key the status carries would be
 * reverted by the operator, and restored by the next `pulumi up`: a fight. So on those resources
 * the status value wins, whatever layer set the key; everywhere else the seed's precedence holds.
 */
import { describeValue } from "../shared/problems";
import { MergedTags, TAG_SOURCE_LABELS } from "./rules";

/** The operators that re-apply the status tags, by what they re-tag. */
export const RETAGGING_OPERATORS = {
    ebsVolumes: "csi-operator's EBSVolumeTagsController (every EBS CSI volume, within 30 minutes)",
    registryBucket: "the image registry operator's AWSTagController (the registry's S3 bucket)",
} as const;
export type RetaggingOperator = keyof typeof RETAGGING_OPERATORS;

export interface PinnedTags {
    /** The tags the resource carries once the operator has run: the merge, with the status values pinned. */
    tags: Record<string, string>;
    /** One warning per key whose merged value the operator would revert. */
    warnings: string[];
}

/**
 * The merged tags of a resource `operator` re-tags, with every key of `install` (the status
 * tags) at its status value: the fixed point of the operator's rule, so the stack's tags and the
 * operator's converge on the same values.
 */
export function pinToOperator(
    label: string,
    merged: MergedTags,
    install: Readonly<Record<string, string>>,
    operator: RetaggingOperator,
): PinnedTags {
    const tags = { ...merged.tags };
    const warnings: string[] = [];
    for (const [key, value] of Object.entries(install)) {
        if (key in tags && tags[key] !== value) {
            warnings.push(
                `tag ${describeValue(key)} on ${label}: ${describeValue(tags[key])} from ${TAG_SOURCE_LABELS[merged.sources[key]]} cannot hold, ${RETAGGING_OPERATORS[operator]} re-applies ${describeValue(value)} from ${TAG_SOURCE_LABELS.install}; the stack sets ${describeValue(value)} so the two do not fight`,
            );
        }
        tags[key] = value;
    }
    return {
        tags: Object.fromEntries(
            Object.keys(tags)
                .sort()
                .map((k) => [k, tags[k]]),
        ),
        warnings,
    };
}
