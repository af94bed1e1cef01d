/**
 * How user tags reach what in-cluster consumers create in AWS when propagation is on
 * (seed 004): EBS volumes through a StorageClass's `tagSpecification_N` parameters, and load
 * balancers through a Service annotation. Pure: no Pulumi imports.
 *
 * Both formats are `key=value` text that the consumers split again: the EBS CSI driver splits
 * each parameter at its first `=`, and the AWS cloud provider splits the annotation at `,`
 * and every `=`, after trimming spaces around each pair. A tag that would not survive that
 * round trip cannot be propagated; `consumerFormatProblems` says which and why.
 */

/** The EBS CSI driver's provisioner name. */
export const EBS_CSI_PROVISIONER = "ebs.csi.aws.com";
/** The parameter prefix the EBS CSI driver reads volume tags from. */
export const EBS_TAG_PARAMETER_PREFIX = "tagSpecification_";
/** The Service annotation the AWS cloud provider and load balancer controller read extra tags from. */
export const LOAD_BALANCER_TAGS_ANNOTATION = "service.beta.kubernetes.io/aws-load-balancer-additional-resource-tags";

/** Why a tag cannot be carried by the consumers' `key=value` formats; empty when it can. */
export function consumerFormatProblems(key: string, value: string): string[] {
    const problems: string[] = [];
    if (key.includes("=")) {
        problems.push(
            `key ${JSON.stringify(key)} contains "=", which the EBS CSI driver and the load balancer annotation use to separate key from value`,
        );
    }
    if (value.includes("=")) {
        problems.push(`value ${JSON.stringify(value)} contains "=", which the load balancer annotation would cut off`);
    }
    if (key !== key.trimStart()) {
        problems.push(`key ${JSON.stringify(key)} starts with a space, which the load balancer annotation trims`);
    }
    if (value !== value.trimEnd()) {
        problems.push(`value ${JSON.stringify(value)} ends with a space, which the load balancer annotation trims`);
    }
    return problems;
}

/** The tags that can be propagated, and a reason for each one that cannot. */
export function propagatableTags(tags: Readonly<Record<string, string>>): { tags: Record<string, string>; skipped: string[] } {
    const kept: Record<string, string> = {};
    const skipped: string[] = [];
    for (const key of Object.keys(tags).sort()) {
        const problems = consumerFormatProblems(key, tags[key]);
        if (problems.length === 0) {
            kept[key] = tags[key];
        } else {
            skipped.push(...problems);
        }
    }
    return { tags: kept, skipped };
}

/** StorageClass parameters carrying `tags`: `tagSpecification_1: "key=value"`, … in key order. */
export function ebsTagParameters(tags: Readonly<Record<string, string>>): Record<string, string> {
    const parameters: Record<string, string> = {};
    Object.keys(tags)
        .sort()
        .forEach((key, index) => {
            parameters[`${EBS_TAG_PARAMETER_PREFIX}${index + 1}`] = `${key}=${tags[key]}`;
        });
    return parameters;
}

/** The value of the load balancer tags annotation: `k1=v1,k2=v2` in key order. */
export function loadBalancerTagAnnotation(tags: Readonly<Record<string, string>>): string {
    return Object.keys(tags)
        .sort()
        .map((key) => `${key}=${tags[key]}`)
        .join(",");
}

/**
 * Reads an existing load balancer tags annotation back into tags, the way the AWS cloud
 * provider does (pairs split at `,`, then at `=`; surrounding spaces trimmed; a bare key has
 * an empty value), so a Service's own tags can take precedence over the stack's.
 */
export function parseLoadBalancerTagAnnotation(annotation: string): Record<string, string> {
    const tags: Record<string, string> = {};
    for (const pair of annotation.trim().split(",")) {
        const [key, value = ""] = pair.trim().split("=");
        if (key.length > 0) {
            tags[key] = value;
        }
    }
    return tags;
}
