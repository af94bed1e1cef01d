/**
 * What the pack cannot judge is never passed in silence:
 *
 * - `aws-unjudged-types` (mandatory) refuses an AWS type the derived schema does not know (a newer
 *   @pulumi/aws or @pulumi/aws-native than the one it was derived from) that declares `tags`,
 *   unless allow-listed: regenerating the schema (`npm run gen:taggable` after upgrading) judges it;
 * - `aws-unjudged-content` (advisory) reports what a known type holds out of the pack's sight: the
 *   resources a CloudFormation template declares, a Cloud Control resource of a type the aws-native
 *   schema does not know, a nested tag set the schema does not say is resource tags, untyped tags
 *   of a shape it cannot read, and an unknown AWS type without tags.
 */
import { isKnownType, providerOf, TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy, stringList } from "../shared/policy";
import { known, UNKNOWN } from "../shared/values";
import { resourceTagView } from "./tags";

interface UnjudgedConfig {
    allowedTypes: string[];
}

/** An AWS type the schema does not know, and whether it declares tags (UNKNOWN while they are unknown). */
function unknownType(args: { type: string; props: Record<string, unknown> }): { tags: boolean | typeof UNKNOWN } | undefined {
    if (providerOf(args.type) === undefined || isKnownType(args.type)) {
        return undefined;
    }
    const tags = known(() => args.props.tags);
    return { tags: tags === UNKNOWN ? UNKNOWN : tags !== undefined };
}

export const unjudgedTypes = resourcePolicy<UnjudgedConfig>(
    {
        name: "aws-unjudged-types",
        description:
            "An AWS resource type the schema derived from the providers does not know, and that declares tags, is refused unless allow-listed.",
        severity: "high",
        remediationSteps:
            "Upgrade the project's @pulumi/aws or @pulumi/aws-native to the version the stack uses and run npm run gen:taggable, so the derived schema covers the type. Check the resource's tags by hand until then, and list its type in allowedTypes.",
        config: { allowedTypes: stringList("Type tokens checked by hand, which the policy no longer refuses.") },
    },
    (args, config, report) => {
        if (config.allowedTypes.includes(args.type) || unknownType(args)?.tags !== true) {
            return;
        }
        report(
            `${resourceLabel(args.type, args.name)} cannot judge: not in the schema derived from ${TAGGABLE_SOURCE}, though it declares tags`,
        );
    },
);

export const unjudgedContent = resourcePolicy(
    {
        name: "aws-unjudged-content",
        description:
            "Reports, as not judged, what an AWS resource holds out of the pack's sight: a CloudFormation template's resources, a Cloud Control resource of a type the aws-native schema does not know, tag sets the schema does not say are resource tags, untyped tags of an unreadable shape, and types the schema does not know.",
        severity: "medium",
        enforcementLevel: "advisory",
        remediationSteps:
            "Check those tags by hand (or declare the resources directly, where the pack judges them); for an unknown type, upgrade the providers the project pins and run npm run gen:taggable.",
    },
    (args, _config, report) => {
        const label = resourceLabel(args.type, args.name);
        const unknown = unknownType(args);
        if (unknown) {
            if (unknown.tags === false) {
                report(`${label} not judged: not in the schema derived from ${TAGGABLE_SOURCE}`);
            }
            return;
        }
        for (const line of resourceTagView(args)?.unjudged ?? []) {
            report(`${label} not judged: ${line}`);
        }
    },
);
