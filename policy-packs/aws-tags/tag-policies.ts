/**
 * The resource policies of the aws-tags pack: on every AWS resource the derived taggable list
 * (components/aws-tags/taggable-types.json, from @pulumi/aws) marks taggable, the required tags
 * are present, no key is reserved, `Name` does not come from the stack-wide user tags, keys and
 * values have the allowed length and characters, and the count fits AWS's limit. Every rule is
 * components/aws-tags/rules.ts's, the one the config validator and the tagger apply.
 */
import {
    awsTagTextProblems,
    nameKeyProblem,
    reservedKeyProblems,
    resourceLabel,
    tagCountProblem,
    tagKeyProblems,
} from "../../components/aws-tags/rules";
import { formatPath } from "../../components/shared/problems";
import type { ReportViolation, ResourceValidationArgs, ResourceValidationPolicy } from "@pulumi/policy";
import { PolicyConfigError, PolicyMeta, resourcePolicy, stringList } from "../shared/policy";
import { UNKNOWN } from "../shared/values";
import { effectiveTags, missingNestedSets, nestedTagSets, providerLayerKeys, ResourceTags, resourceTags, TagMap } from "./tags";

const quoted = (keys: readonly string[]) => keys.map((k) => JSON.stringify(k)).join(", ");

/** A policy over the resources the derived list marks taggable, given their tags. */
function taggedResourcePolicy<C = Record<string, never>>(
    meta: PolicyMeta,
    check: (args: ResourceValidationArgs, tags: ResourceTags, config: C, report: ReportViolation) => void,
): ResourceValidationPolicy {
    return resourcePolicy<C>(meta, (args, config, report) => {
        const tags = resourceTags(args);
        if (tags) {
            check(args, tags, config, report);
        }
    });
}

interface RequiredTagsConfig {
    requiredTags: string[];
}

export const REQUIRED_TAGS_POLICY = "aws-required-tags";

/** The required keys are user tags: each must pass the user tag rules, all problems reported at once. */
export function requiredTagsConfigProblems(requiredTags: readonly string[]): string[] {
    return requiredTags.flatMap((key) => tagKeyProblems(key).map((problem) => `${formatPath(["requiredTags", key])}: ${problem}`));
}

/** The config is the same for every resource of a run: its problems are worked out once per key list. */
const configProblemsSeen = new Map<string, string[]>();
function checkedRequiredTags(requiredTags: readonly string[]): void {
    const id = JSON.stringify(requiredTags);
    let problems = configProblemsSeen.get(id);
    if (problems === undefined) {
        problems = requiredTagsConfigProblems(requiredTags);
        configProblemsSeen.set(id, problems);
    }
    if (problems.length > 0) {
        throw new PolicyConfigError(REQUIRED_TAGS_POLICY, problems);
    }
}

export const requiredTags = resourcePolicy<RequiredTagsConfig>(
    {
        name: REQUIRED_TAGS_POLICY,
        description:
            "Every taggable AWS resource carries the required tags (by default the keys of the stack's aws.userTags), and so do the launch template tag specifications and instance volumes it creates.",
        severity: "high",
        remediationSteps:
            "Add the missing keys to aws.userTags (the stack tags every taggable resource it creates with them), or to the resource's own tags. Generate this policy's config from the stack with `npm run policy:config` so requiredTags follows aws.userTags.",
        config: {
            requiredTags: stringList(
                "Tag keys every taggable AWS resource must carry; pass the stack's aws.userTags keys (npm run policy:config).",
            ),
        },
    },
    (args, config, report) => {
        checkedRequiredTags(config.requiredTags);
        const tags = resourceTags(args);
        if (!tags || config.requiredTags.length === 0) {
            return;
        }
        const lacking = (what: string, present: TagMap) => {
            const missing = config.requiredTags.filter((key) => !(key in present));
            if (missing.length > 0) {
                const has = Object.keys(present).sort();
                report(
                    `${what} lacks the required tag${missing.length === 1 ? "" : "s"} ${quoted(missing)} (it carries ${has.length === 0 ? "no tags" : quoted(has)})`,
                );
            }
        };
        // Keys the provider's defaultTags may add are known only at deploy: judged then, not in the preview.
        if (!tags.providerDefaultsUnknown) {
            lacking(resourceLabel(args.type, args.name), effectiveTags(tags));
        }
        // What the resource creates with tags of its own: a launch template's instances and volumes, an
        // instance's volumes, an Auto Scaling group's instances (only the items propagated at launch).
        for (const nested of nestedTagSets(args, tags.providerDefaults)) {
            lacking(`${resourceLabel(args.type, args.name)} ${nested.where}`, nested.tags);
        }
        for (const missing of missingNestedSets(args)) {
            report(`${resourceLabel(args.type, args.name)} ${missing}`);
        }
    },
);

interface ReservedKeysConfig {
    allowedKeys: string[];
    clusterIds: string[];
}

/**
 * The keys the AWS cloud provider itself reads, on the resources it reads them from
 * (kubernetes/cloud-provider-aws pkg/providers/v1/tags.go: `kubernetes.io/cluster/<id>` with
 * `owned` or `shared` finds the cluster's subnets and security groups; aws.go: subnets for load
 * balancers by `kubernetes.io/role/elb` and `kubernetes.io/role/internal-elb`). A correct stack
 * that builds a cluster's network sets them; any other use of the namespace stays refused.
 */
export function cloudProviderKey(type: string, key: string, value: string | typeof UNKNOWN, clusterIds: readonly string[]): boolean {
    const subnet = type === "aws:ec2/subnet:Subnet";
    if (subnet && (key === "kubernetes.io/role/elb" || key === "kubernetes.io/role/internal-elb")) {
        return value === UNKNOWN || value === "1" || value === "";
    }
    const prefix = "kubernetes.io/cluster/";
    if ((subnet || type === "aws:ec2/securityGroup:SecurityGroup") && key.startsWith(prefix)) {
        return clusterIds.includes(key.slice(prefix.length)) && (value === UNKNOWN || value === "owned" || value === "shared");
    }
    return false;
}

/** An allow-list entry matches a key exactly, or as a prefix when it ends with `*`. */
export function allowed(key: string, allowList: readonly string[]): boolean {
    return allowList.some((entry) => (entry.endsWith("*") ? key.startsWith(entry.slice(0, -1)) : key === entry));
}

export const reservedTagKeys = taggedResourcePolicy<ReservedKeysConfig>(
    {
        name: "aws-reserved-tag-keys",
        description:
            "No tag key on a taggable AWS resource is in a reserved namespace: kubernetes.io, openshift.io (and their subdomains) or aws:.",
        severity: "high",
        remediationSteps:
            "Rename the key out of the reserved namespace (for example example.com/team instead of kubernetes.io/team). The platform and AWS own these keys: OpenShift and Kubernetes controllers act on them, and AWS refuses aws: keys. A key the platform itself must set (kubernetes.io/cluster/<infra id>) can be listed in allowedKeys.",
        config: {
            allowedKeys: stringList(
                "Reserved keys that may still be set: exact keys, or prefixes ending with * (kubernetes.io/cluster/*).",
            ),
            clusterIds: stringList(
                "This cluster's ids (its name; on OpenShift its infra id): kubernetes.io/cluster/<id> passes on subnets and security groups (npm run policy:config sets it).",
            ),
        },
    },
    (args, tags, config, report) => {
        const all = effectiveTags(tags);
        for (const key of Object.keys(all).filter(
            (k) => !allowed(k, config.allowedKeys) && !cloudProviderKey(args.type, k, all[k], config.clusterIds),
        )) {
            for (const problem of reservedKeyProblems(key)) {
                report(`${resourceLabel(args.type, args.name)} tag ${JSON.stringify(key)}: ${problem}`);
            }
        }
    },
);

export const noNameUserTag = taggedResourcePolicy(
    {
        name: "aws-no-name-user-tag",
        description: "The key Name does not come from the stack-wide user tags (the AWS provider's defaultTags).",
        severity: "medium",
        remediationSteps:
            "Remove Name from the AWS provider's defaultTags (and from aws.userTags, which the config validator already refuses). Each resource sets its own Name; a stack-wide one would give every resource the same.",
    },
    (args, tags, _config, report) => {
        for (const key of providerLayerKeys(tags)) {
            const problem = nameKeyProblem(key);
            if (problem) {
                report(
                    `${resourceLabel(args.type, args.name)} tag ${JSON.stringify(key)} comes from the AWS provider's defaultTags: ${problem}`,
                );
            }
        }
    },
);

export const tagFormat = taggedResourcePolicy(
    {
        name: "aws-tag-format",
        description:
            "Tag keys have 1-128 and values 1-256 characters that AWS accepts (Unicode letters, numbers and spaces, _ . : / = + - @), and no value is only whitespace.",
        severity: "medium",
        remediationSteps:
            "Shorten the key or value, replace the characters AWS refuses, or give a blank value a meaning. (The stack's aws.userTags are held to OpenShift's narrower ASCII set by the config validator, because they reach the cluster's operators.)",
    },
    (args, tags, _config, report) => {
        for (const [key, value] of Object.entries(effectiveTags(tags))) {
            const problems = [...awsTagTextProblems("key", key), ...(value === UNKNOWN ? [] : awsTagTextProblems("value", value))];
            for (const problem of problems) {
                report(`${resourceLabel(args.type, args.name)} tag ${JSON.stringify(key)}: ${problem}`);
            }
        }
    },
);

export const tagCount = taggedResourcePolicy(
    {
        name: "aws-tag-count",
        description: "A taggable AWS resource carries at most 50 tags (10 for S3 objects), counting the provider's default tags.",
        severity: "high",
        remediationSteps:
            "Remove tags from the resource or from the AWS provider's defaultTags: AWS refuses the create or update of a resource over its limit.",
    },
    (args, tags, _config, report) => {
        const problem = tagCountProblem(args.type, args.name, Object.keys(effectiveTags(tags)).length);
        if (problem) {
            report(problem);
        }
    },
);
