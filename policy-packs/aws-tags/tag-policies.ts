/**
 * The resource policies of the aws-tags pack over every tag set a resource carries (tags.ts: its
 * own, what it gives what it creates, the tag a tag resource writes, the tags inside a Cloud
 * Control document), located by the schema derived from the providers' SDKs: the required tags
 * are present, no key is reserved, `Name` does not come from the stack-wide default tags, keys
 * and values have the allowed length and characters, and each set fits AWS's limit. Every rule is
 * components/aws-tags/rules.ts's, the one the config validator and the tagging safety net apply.
 */
import {
    awsTagTextProblems,
    keysIgnoredBy,
    nameKeyProblem,
    reservedTagProblems,
    resourceLabel,
    tagKeyProblems,
    tagLimitText,
} from "../../components/aws-tags/rules";
import { providerOf } from "../../components/aws-tags/taggable";
import { formatPath } from "../../components/shared/problems";
import type { ReportViolation, ResourceValidationArgs, ResourceValidationPolicy } from "@pulumi/policy";
import { PolicyConfigError, PolicyMeta, resourcePolicy, stringList } from "../shared/policy";
import { asObject, UNKNOWN } from "../shared/values";
import { JudgedTagSet, providerInput, ResourceTagView, resourceTagView, TagMap } from "./tags";

const quoted = (keys: readonly string[]) => keys.map((k) => JSON.stringify(k)).join(", ");

/** How messages name a tag set: the resource, then where the set is. */
export function setLabel(args: { type: string; name: string }, set: Pick<JudgedTagSet, "where">): string {
    return `${resourceLabel(args.type, args.name)}${set.where === "" ? "" : ` ${set.where}`}`;
}

/** A policy over the resources that carry tag sets, given them. */
function taggedResourcePolicy<C = Record<string, never>>(
    meta: PolicyMeta,
    check: (args: ResourceValidationArgs, view: ResourceTagView, config: C, report: ReportViolation) => void,
): ResourceValidationPolicy {
    return resourcePolicy<C>(meta, (args, config, report) => {
        const view = resourceTagView(args);
        if (view) {
            check(args, view, config, report);
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

/** The AWS provider's `ignoreTags` (keys and key prefixes), decoded; undefined while unknown or for other providers. */
export function providerIgnoreTags(provider: ResourceValidationArgs["provider"]): { keys: string[]; keyPrefixes: string[] } | undefined {
    if (!provider || provider.type !== "pulumi:providers:aws") {
        return undefined;
    }
    const decoded = providerInput(provider, "ignoreTags");
    if (decoded === UNKNOWN) {
        return undefined;
    }
    const object = asObject(decoded) ?? {};
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    return { keys: strings(object.keys), keyPrefixes: strings(object.keyPrefixes) };
}

export const requiredTags = resourcePolicy<RequiredTagsConfig>(
    {
        name: REQUIRED_TAGS_POLICY,
        description:
            "Every taggable AWS resource carries the required tags (by default the keys of the stack's aws.userTags), and so does every tag set it gives what it creates (launch template tag specifications, instance volumes, an Auto Scaling group's instances, replicas); its provider's ignoreTags covers none of them.",
        severity: "high",
        remediationSteps:
            "Add the missing keys to aws.userTags (the stack tags every taggable resource it creates with them), or to the resource's own tags and the tag sets it gives what it creates; remove a required key from the provider's ignoreTags. Generate this policy's config from the stack with `npm run policy:config` so requiredTags follows aws.userTags.",
        config: {
            requiredTags: stringList(
                "Tag keys every taggable AWS resource must carry; pass the stack's aws.userTags keys (npm run policy:config).",
            ),
        },
    },
    (args, config, report) => {
        checkedRequiredTags(config.requiredTags);
        if (config.requiredTags.length === 0) {
            return;
        }
        const view = resourceTagView(args);
        if (!view) {
            return;
        }
        for (const set of view.sets) {
            // Keys the provider's defaultTags may add are known only at deploy: judged then, not in the preview.
            if (!set.requiresKeys || set.defaultsUnknown) {
                continue;
            }
            const missing = config.requiredTags.filter((key) => !(key in set.tags));
            if (missing.length > 0) {
                const has = Object.keys(set.tags).sort();
                report(
                    `${setLabel(args, set)} lacks the required tag${missing.length === 1 ? "" : "s"} ${quoted(missing)} (it carries ${has.length === 0 ? "no tags" : quoted(has)})`,
                );
            }
        }
        for (const missing of view.missing) {
            report(`${resourceLabel(args.type, args.name)} ${missing}`);
        }
        const ignore = providerIgnoreTags(args.provider);
        const ignored = ignore && view.sets.length > 0 ? keysIgnoredBy(ignore, config.requiredTags) : [];
        if (ignored.length > 0) {
            report(
                `${resourceLabel(args.type, args.name)}: its provider ${JSON.stringify(args.provider?.name)} ignores the required tag${ignored.length === 1 ? "" : "s"} ${quoted(ignored)} (ignoreTags), so it neither applies nor tracks ${ignored.length === 1 ? "it" : "them"}`,
            );
        }
    },
);

interface ReservedKeysConfig {
    allowedKeys: string[];
    clusterIds: string[];
}

export const reservedTagKeys = taggedResourcePolicy<ReservedKeysConfig>(
    {
        name: "aws-reserved-tag-keys",
        description:
            "No tag key of any tag set an AWS resource carries or writes is reserved: the kubernetes.io and openshift.io namespaces (and subdomains), aws:, or a cluster ownership key of the installer or Cluster API (openshiftClusterID, sigs.k8s.io/cluster-api-provider-aws/...).",
        severity: "high",
        remediationSteps:
            "Rename the key out of the reserved namespace (for example example.com/team instead of kubernetes.io/team). The platform and AWS own these keys: OpenShift and Kubernetes controllers act on them, openshift-install destroy deletes what carries a cluster's ownership keys, and AWS refuses aws: keys. A key the platform itself must set can be listed in allowedKeys.",
        config: {
            allowedKeys: stringList(
                "Reserved keys that may still be set: exact keys, or prefixes ending with * (kubernetes.io/cluster/*).",
            ),
            clusterIds: stringList(
                "This cluster's ids (its name; on OpenShift its infra id): kubernetes.io/cluster/<id> passes on subnets and security groups (npm run policy:config sets it).",
            ),
        },
    },
    (args, view, config, report) => {
        for (const set of view.sets.filter((s) => s.judgesText)) {
            const target = { type: view.schemaType, resourceId: set.resourceId };
            for (const [key, value] of Object.entries(set.tags)) {
                for (const problem of reservedTagProblems(target, key, value === UNKNOWN ? undefined : value, config)) {
                    report(`${setLabel(args, set)} tag ${JSON.stringify(key)}: ${problem}`);
                }
            }
        }
    },
);

export const noNameUserTag = taggedResourcePolicy(
    {
        name: "aws-no-name-user-tag",
        description: "The key Name does not come from the stack-wide user tags (an AWS or aws-native provider's defaultTags).",
        severity: "medium",
        remediationSteps:
            "Remove Name from the provider's defaultTags (and from aws.userTags, which the config validator already refuses). Each resource sets its own Name; a stack-wide one would give every resource the same.",
    },
    (args, view, _config, report) => {
        for (const set of view.sets) {
            for (const key of set.providerKeys) {
                const problem = nameKeyProblem(key);
                if (problem) {
                    const provider = providerOf(args.type) === "aws-native" ? "aws-native" : "AWS";
                    report(
                        `${setLabel(args, set)} tag ${JSON.stringify(key)} comes from the ${provider} provider's defaultTags: ${problem}`,
                    );
                }
            }
        }
    },
);

export const tagFormat = taggedResourcePolicy(
    {
        name: "aws-tag-format",
        description:
            "Tag keys have 1-128 and values 1-256 characters that AWS accepts (Unicode letters, numbers and spaces, _ . : / = + - @), and no value is only whitespace, in every tag set a resource carries or writes.",
        severity: "medium",
        remediationSteps:
            "Shorten the key or value, replace the characters AWS refuses, or give a blank value a meaning. (The stack's aws.userTags are held to OpenShift's narrower ASCII set by the config validator, because they reach the cluster's operators.)",
    },
    (args, view, _config, report) => {
        for (const set of view.sets.filter((s) => s.judgesText)) {
            for (const [key, value] of Object.entries(set.tags)) {
                const problems = [...awsTagTextProblems("key", key), ...(value === UNKNOWN ? [] : awsTagTextProblems("value", value))];
                for (const problem of problems) {
                    report(`${setLabel(args, set)} tag ${JSON.stringify(key)}: ${problem}`);
                }
            }
        }
    },
);

/** A set's count over its limit, as the message names it. */
export function countProblem(args: { type: string; name: string }, set: JudgedTagSet, type: string): string | undefined {
    const count = Object.keys(set.tags).length;
    if (count <= set.limit) {
        return undefined;
    }
    return `${setLabel(args, set)} carries ${count} tags; ${set.own ? tagLimitText(type) : `AWS allows at most ${set.limit} tags on a resource`}`;
}

export const tagCount = taggedResourcePolicy(
    {
        name: "aws-tag-count",
        description:
            "Every tag set of an AWS resource fits AWS's limit: 50 tags (10 for S3 objects), counting the provider's default tags where they reach it.",
        severity: "high",
        remediationSteps:
            "Remove tags from the resource, from the tag sets it gives what it creates, or from the provider's defaultTags: AWS refuses the create or update of a resource over its limit.",
    },
    (args, view, _config, report) => {
        for (const set of view.sets.filter((s) => s.judgesText)) {
            const problem = countProblem(args, set, view.schemaType);
            if (problem) {
                report(problem);
            }
        }
    },
);

/** Whether a resource's own tag set would be empty (judged only when its provider's defaults are known). */
export function untagged(view: ResourceTagView): boolean {
    const own = view.sets.find((set) => set.own);
    return view.hasOwn && own !== undefined && !own.defaultsUnknown && Object.keys(own.tags).length === 0;
}

export type { TagMap };
