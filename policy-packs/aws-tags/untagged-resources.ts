/**
 * A taggable AWS resource (one whose schema gives it an own tag set) that would carry no tags at
 * all. A resource policy, so the engine judges each resource before it is created (a stack policy
 * runs only after `pulumi up` has changed the stack: pulumi/docs#3597), even when requiredTags is
 * empty, its default.
 */
import { resourceLabel } from "../../components/aws-tags/rules";
import { resourcePolicy } from "../shared/policy";
import { untagged } from "./tag-policies";
import { resourceTagView } from "./tags";

export const untaggedResources = resourcePolicy(
    {
        name: "aws-untagged-resources",
        description: "No taggable AWS resource is created without tags.",
        severity: "high",
        remediationSteps:
            "Create AWS resources through the stack's components, or after the stack's tagging safety net is registered, so each one gets aws.userTags; or give the resource tags of its own.",
    },
    (args, _config, report) => {
        const view = resourceTagView(args);
        // Tags the provider's defaultTags add are known only at deploy: judged then.
        if (view && untagged(view)) {
            report(`${resourceLabel(args.type, args.name)} carries no tags`);
        }
    },
);
