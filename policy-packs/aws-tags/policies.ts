/**
 * The aws-tags pack's policies, in the order docs/policy-packs.md documents them. Tests and benchmarks
 * import this module; only index.ts constructs the PolicyPack (which starts its gRPC server).
 */
import type { Policies } from "@pulumi/policy";
import { noNameUserTag, requiredTags, reservedTagKeys, tagCount, tagFormat } from "./tag-policies";
import { providerSettings } from "./provider-settings";
import { sideChannelTagRules } from "./side-channel-policy";
import { unjudgedContent, unjudgedTypes } from "./unjudged-types";
import { untaggedResources } from "./untagged-resources";

export const PACK_NAME = "aws-tags";
export const PACK_DESCRIPTION =
    "User-defined tags on every taggable AWS resource of a cluster-platform stack: required keys, reserved namespaces, Name, format and count limits, no untagged resources, in every tag set the providers' schemas locate, and advisories for what it cannot see.";

export const AWS_TAGS_POLICIES: Policies = [
    requiredTags,
    reservedTagKeys,
    noNameUserTag,
    tagFormat,
    tagCount,
    sideChannelTagRules,
    providerSettings,
    untaggedResources,
    unjudgedTypes,
    unjudgedContent,
];
