/**
 * The stack's taggable AWS resources that carry no tags at all, listed in one message, so an
 * admin sees at once what escaped tagging (a resource created outside the components, say).
 */
import { resourceLabel } from "../../components/aws-tags/rules";
import { stackPolicy } from "../shared/policy";
import { known, UNKNOWN } from "../shared/values";
import { effectiveTags, resourceTags } from "./tags";

export const untaggedResources = stackPolicy(
    {
        name: "aws-untagged-resources",
        description: "No taggable AWS resource of the stack is left without tags.",
        severity: "high",
        remediationSteps:
            "Create AWS resources through the stack's components, or pass the AwsTags component's tagger.transformation in their transformations option, so each one gets aws.userTags; or give the resource tags of its own.",
    },
    (args, _config, report) => {
        const untagged: string[] = [];
        for (const resource of args.resources) {
            // A resource whose tags are not known yet (a preview) is judged when they are.
            const tags = known(() => resourceTags(resource));
            if (tags !== UNKNOWN && tags !== undefined && Object.keys(effectiveTags(tags)).length === 0) {
                untagged.push(resourceLabel(resource.type, resource.name));
            }
        }
        if (untagged.length > 0) {
            report(
                `${untagged.length} taggable AWS resource${untagged.length === 1 ? " carries" : "s carry"} no tags: ${untagged.join(", ")}`,
            );
        }
    },
);
