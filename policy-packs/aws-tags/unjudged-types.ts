/**
 * AWS resources whose tags the pack cannot judge are refused unless allow-listed, never passed in
 * silence: an `aws:` type with a `tags` input that the taggable list derived from @pulumi/aws does
 * not know (a newer @pulumi/aws than the one the list was derived from), and an `aws-native:` type
 * that declares no tags or tags of a shape other than a list of `{key, value}` items or a string
 * map (no list is derived for aws-native, so a type without tags cannot be told from an untaggable
 * one). Regenerating the list (`npm run gen:taggable` after upgrading @pulumi/aws) judges the
 * former; `allowedTypes` names the types an admin has checked by hand.
 */
import { hasNonTagTagsInput, isTaggable, TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { known, UNKNOWN } from "../shared/values";
import { nativeTagShape } from "./tags";

interface UnjudgedConfig {
    allowedTypes: string[];
}

export const unjudgedTypes = resourcePolicy<UnjudgedConfig>(
    {
        name: "aws-unjudged-types",
        description:
            "AWS resources whose tags the pack cannot judge (aws: types missing from the derived taggable list that declare tags, aws-native types without tags or with tags of an unknown shape) are refused unless allow-listed.",
        severity: "high",
        remediationSteps:
            "Upgrade the project's @pulumi/aws to the version the stack uses and run npm run gen:taggable, so the derived list covers the type; for aws-native, give the resource tags as a list of {key, value} items. Check the resource's tags by hand until then, and list its type in allowedTypes.",
        config: { allowedTypes: stringList("Type tokens checked by hand, which the policy no longer refuses.") },
    },
    (args, config, report) => {
        if (config.allowedTypes.includes(args.type)) {
            return;
        }
        const native = args.type.startsWith("aws-native:");
        if (!(native || args.type.startsWith("aws:")) || isTaggable(args.type) || hasNonTagTagsInput(args.type)) {
            return;
        }
        const tags = known(() => args.props.tags);
        if (tags === UNKNOWN || (tags === undefined && !native)) {
            return;
        }
        if (!native) {
            report(
                `${resourceLabel(args.type, args.name)} cannot judge: not in the taggable list derived from ${TAGGABLE_SOURCE}, though it declares tags`,
            );
        } else if (tags === undefined) {
            report(
                `${resourceLabel(args.type, args.name)} cannot judge: it declares no tags, and no taggable list is derived for aws-native`,
            );
        } else if (!nativeTagShape(args)) {
            report(
                `${resourceLabel(args.type, args.name)} cannot judge: its tags are neither a list of {key, value} items nor a string map`,
            );
        }
    },
);
