/**
 * Tags written through side-channel resources (side-channels.ts) pass the same rules as a
 * resource's own: no reserved key, no stack-wide Name, AWS's characters and lengths, no blank
 * value; and an Auto Scaling tag of a required key reaches the group's instances.
 */
import { awsTagTextProblems, nameKeyProblem, reservedKeyProblems, resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { UNKNOWN } from "../shared/values";
import { sideChannelTags } from "./side-channels";
import { allowed } from "./tag-policies";

interface SideChannelConfig {
    allowedKeys: string[];
    requiredTags: string[];
}

export const sideChannelTagRules = resourcePolicy<SideChannelConfig>(
    {
        name: "aws-side-channel-tags",
        description:
            "A tag written by a tag resource (aws:ec2/tag:Tag, aws:autoscaling/tag:Tag, any <service>/tag:Tag) passes the tag rules, and an Auto Scaling tag of a required key is propagated at launch.",
        severity: "high",
        remediationSteps:
            "Put the tag in the tagged resource's own tags (or aws.userTags), where every rule applies; for an Auto Scaling group set propagateAtLaunch so its instances carry it.",
        config: {
            allowedKeys: stringList("Reserved keys a tag resource may still write: exact keys, or prefixes ending with *."),
            requiredTags: stringList("The required tag keys (npm run policy:config: the keys of aws.userTags)."),
        },
    },
    (args, config, report) => {
        const tag = sideChannelTags(args);
        if (!tag || tag.key === UNKNOWN) {
            return;
        }
        const label = `${resourceLabel(args.type, args.name)} writes tag ${JSON.stringify(tag.key)}`;
        const name = nameKeyProblem(tag.key);
        const problems = [
            ...(name === undefined ? [] : [name]),
            ...(allowed(tag.key, config.allowedKeys) ? [] : reservedKeyProblems(tag.key)),
            ...awsTagTextProblems("key", tag.key),
            ...(tag.value === UNKNOWN ? [] : awsTagTextProblems("value", tag.value)),
        ];
        if (tag.propagateAtLaunch === false && config.requiredTags.includes(tag.key)) {
            problems.push("propagateAtLaunch is false, so the group's instances do not carry this required tag");
        }
        for (const problem of problems) {
            report(`${label}: ${problem}`);
        }
    },
);
