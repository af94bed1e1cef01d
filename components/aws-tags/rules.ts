/**
 * Rules for user-defined AWS tags (seed 004), shared by the config validator, the tagging
 * component and the aws-tags policy pack. Pure: no Pulumi imports.
 */
import { describeValue, formatPath, Problem } from "../shared/problems";

/** The installer's limit on user tags. */
export const MAX_USER_TAGS = 25;
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;
/** AWS's per-resource tag limit, and the lower one for S3 object tags. */
export const MAX_TAGS_PER_RESOURCE = 50;
export const MAX_S3_OBJECT_TAGS = 10;

/**
 * Letters, digits, spaces and `_ . : / = + - @`. The OpenShift API's pattern writes
 * `+-@` inside a class, which makes a range from `+` to `@` and lets `, ; < > ?` through;
 * the '-' here is last in the class so it is literal, as the design intends.
 */
export const TAG_CHARACTERS = /^[0-9A-Za-z_.:/=+@ -]+$/;
export const TAG_CHARACTERS_RULE = "letters, digits, spaces and _ . : / = + - @";

/** Namespaces reserved for the platform, with or without a subdomain (`x.kubernetes.io/a`). */
export const RESERVED_TAG_NAMESPACES = ["kubernetes.io", "openshift.io"] as const;

/** The reserved namespace a key falls in, if any. */
export function reservedNamespaceOf(key: string): string | undefined {
    const domain = key.split("/")[0];
    return RESERVED_TAG_NAMESPACES.find((ns) => domain === ns || domain.endsWith(`.${ns}`));
}

/** Problems with one tag key, as messages without a path. */
export function tagKeyProblems(key: string): string[] {
    const problems: string[] = [];
    if (key.length < 1 || key.length > MAX_TAG_KEY_LENGTH) {
        problems.push(`key has ${key.length} characters; must have 1 to ${MAX_TAG_KEY_LENGTH}`);
    }
    if (key.length > 0 && !TAG_CHARACTERS.test(key)) {
        problems.push(`key may only contain ${TAG_CHARACTERS_RULE}`);
    }
    const reserved = reservedNamespaceOf(key);
    if (reserved) {
        problems.push(`key uses the reserved prefix ${reserved}`);
    }
    if (key.toLowerCase().startsWith("aws:")) {
        problems.push("key uses the prefix aws:, which AWS reserves");
    }
    if (key === "Name") {
        problems.push("key Name is reserved: the installer sets it on each resource");
    }
    return problems;
}

/** Problems with one tag value, as messages without a path. */
export function tagValueProblems(value: string): string[] {
    const problems: string[] = [];
    if (value.length < 1 || value.length > MAX_TAG_VALUE_LENGTH) {
        problems.push(`value ${describeValue(value)} has ${value.length} characters; must have 1 to ${MAX_TAG_VALUE_LENGTH}`);
    }
    if (value.length > 0 && !TAG_CHARACTERS.test(value)) {
        problems.push(`value ${describeValue(value)} may only contain ${TAG_CHARACTERS_RULE}`);
    }
    return problems;
}

/** A problem with a user tag map: `key` is the offending tag, or undefined for the whole map. */
export interface TagIssue {
    key?: string;
    message: string;
}

/** Validates the user tag map from stack config: the count limit and every key and value. */
export function userTagIssues(tags: Record<string, string>): TagIssue[] {
    const issues: TagIssue[] = [];
    const keys = Object.keys(tags);
    if (keys.length > MAX_USER_TAGS) {
        issues.push({ message: `has ${keys.length} tags; at most ${MAX_USER_TAGS} user tags are allowed` });
    }
    for (const key of keys) {
        for (const message of [...tagKeyProblems(key), ...tagValueProblems(tags[key])]) {
            issues.push({ key, message });
        }
    }
    return issues;
}

/** `userTagIssues` as Problems, with each path naming the exact key under `pathPrefix`. */
export function userTagProblems(tags: Record<string, string>, pathPrefix: PropertyKey[]): Problem[] {
    return userTagIssues(tags).map((issue) => ({
        path: formatPath(issue.key === undefined ? pathPrefix : [...pathPrefix, issue.key]),
        message: issue.message,
    }));
}
