/**
 * AWS resources whose tags the pack cannot judge are reported, never passed in silence: an `aws:`
 * type with a `tags` input that the taggable list derived from @pulumi/aws does not know (a newer
 * @pulumi/aws than the one the list was derived from), and an `aws-native:` type whose `tags` are
 * neither a list of `{key, value}` items nor a string map. Advisory: the pack says what it did not
 * judge; regenerating the list (`npm run gen:taggable` after upgrading @pulumi/aws) judges them.
 */
import { hasNonTagTagsInput, isTaggable, TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy } from "../shared/policy";
import { known, UNKNOWN } from "../shared/values";
import { nativeTagShape } from "./tags";

export const unjudgedTypes = resourcePolicy(
    {
        name: "aws-unjudged-types",
        description:
            "AWS resources with tags the pack cannot judge (types missing from the derived taggable list, aws-native tags of an unknown shape) are reported as not judged.",
        severity: "medium",
        enforcementLevel: "advisory",
        remediationSteps:
            "Upgrade the project's @pulumi/aws to the version the stack uses and run npm run gen:taggable, so the derived list covers the type; for aws-native, give the resource tags as a list of {key, value} items. Check the resource's tags by hand until then.",
    },
    (args, _config, report) => {
        const native = args.type.startsWith("aws-native:");
        if (!(native || args.type.startsWith("aws:")) || isTaggable(args.type) || hasNonTagTagsInput(args.type)) {
            return;
        }
        const tags = known(() => args.props.tags);
        if (tags === undefined || tags === UNKNOWN) {
            return;
        }
        if (!native) {
            report(
                `${resourceLabel(args.type, args.name)} cannot judge: not in the taggable list derived from ${TAGGABLE_SOURCE}, though it declares tags`,
            );
        } else if (!nativeTagShape(args)) {
            report(
                `${resourceLabel(args.type, args.name)} cannot judge: its tags are neither a list of {key, value} items nor a string map`,
            );
        }
    },
);
