/**
 * A tag a tag resource writes onto another resource (`aws:ec2/tag:Tag`, `aws:autoscaling/tag:Tag`,
 * any `<service>/tag:Tag`) is one more tag set: the key, format and count policies judge it as
 * they judge every other (tags.ts). What is left for this policy: an Auto Scaling tag of a
 * required key that does not reach the group's instances.
 */
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { asObject, known } from "../shared/values";

interface SideChannelConfig {
    requiredTags: string[];
}

export const sideChannelTagRules = resourcePolicy<SideChannelConfig>(
    {
        name: "aws-side-channel-tags",
        description:
            "An Auto Scaling tag resource (aws:autoscaling/tag:Tag) that writes a required key propagates it to the group's instances.",
        severity: "high",
        remediationSteps:
            "Set propagateAtLaunch on the tag so the group's instances carry it, or put the tag in the group's own tags (or aws.userTags).",
        config: {
            requiredTags: stringList("The required tag keys (npm run policy:config: the keys of aws.userTags)."),
        },
    },
    (args, config, report) => {
        if (args.type !== "aws:autoscaling/tag:Tag") {
            return;
        }
        const tag = asObject(known(() => args.props.tag)) ?? {};
        const key = known(() => tag.key);
        if (typeof key === "string" && known(() => tag.propagateAtLaunch) === false && config.requiredTags.includes(key)) {
            report(
                `${resourceLabel(args.type, args.name)} writes tag ${JSON.stringify(key)}: propagateAtLaunch is false, so the group's instances do not carry this required tag`,
            );
        }
    },
);
