/**
 * The `aws` config section's rules beyond its shape (pure: no Pulumi imports):
 *
 * - `normalizeAwsSection` runs on the raw section before it is parsed. It reads keys
 *   case-insensitively, as the installer reads install-config (its test honours
 *   `experimentalPropagateUsertags`), with a warning to fix the spelling; and it warns about
 *   tag values written as YAML numbers or booleans (see `tagValueText`).
 * - `awsTagConfigProblems` runs on the parsed config: whether every resource's merged tags fit
 *   its limit, whether tags to propagate survive the consumers' `key=value` formats, and whether
 *   `aws.ignoreTags` leaves every tag the stack sets alone.
 */
import { CONFIG_NAMESPACE, formatPath, Problem } from "../shared/problems";
import { PlannedResource } from "../aws-assets/assets";
import { consumerFormatProblems } from "./consumers";
import {
    keysIgnoredBy,
    mergeTags,
    PropagationFlags,
    propagateUserTags,
    propagationDeprecation,
    tagLimitProblem,
    tagValueText,
} from "./rules";
import { isRecord } from "../shared/records";

const warningAt = (path: PropertyKey[], message: string) => `${CONFIG_NAMESPACE}:${formatPath(path)}: ${message}`;

/** The raw `aws` section with mis-cased keys renamed, and the warnings about what was read how. */
export function normalizeAwsSection(raw: unknown, knownKeys: readonly string[]): { value: unknown; warnings: string[] } {
    if (!isRecord(raw)) {
        return { value: raw, warnings: [] };
    }
    const warnings: string[] = [];
    const value: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(raw)) {
        const canonical = knownKeys.includes(key) ? key : knownKeys.find((k) => k.toLowerCase() === key.toLowerCase());
        if (canonical !== undefined && canonical !== key && !(canonical in raw)) {
            warnings.push(
                warningAt(
                    ["aws", key],
                    `read as aws.${canonical} (keys are matched case-insensitively, as the installer reads install-config); spell it ${canonical}`,
                ),
            );
            value[canonical] = entry;
        } else {
            value[key] = entry;
        }
    }
    if (isRecord(value.userTags)) {
        for (const [key, tagValue] of Object.entries(value.userTags)) {
            const text = tagValueText(tagValue);
            if (text.ok && text.warning) {
                warnings.push(warningAt(["aws", "userTags", key], text.warning));
            }
        }
    }
    const flags = value as PropagationFlags;
    if (typeof flags.experimentalPropagateUserTags === "boolean") {
        const deprecation = propagationDeprecation({
            experimentalPropagateUserTags: flags.experimentalPropagateUserTags,
            propagateUserTags: typeof flags.propagateUserTags === "boolean" ? flags.propagateUserTags : undefined,
        });
        if (deprecation) {
            warnings.push(warningAt(["aws", "experimentalPropagateUserTags"], deprecation));
        }
    }
    return { value, warnings };
}

/** The parts of the parsed `aws` section these rules need. */
export interface AwsTagConfig extends PropagationFlags {
    enabled: boolean;
    userTags: Record<string, string>;
    ignoreTags?: IgnoreTags;
}

/** The AWS provider's `ignoreTags`, as `aws.ignoreTags` configures it. */
export interface IgnoreTags {
    keys: string[];
    keyPrefixes: string[];
}

/**
 * Problems the tags would cause before anything is created: a planned resource whose own tags
 * plus `aws.userTags` exceed its limit (the install-time tags are only known after the cluster
 * read and are checked then), tags that cannot be written in the consumers' formats when
 * propagation is on, and `aws.ignoreTags` entries that cover a tag the stack sets (the provider
 * would neither apply nor track it).
 */
export function awsTagConfigProblems(aws: AwsTagConfig, planned: readonly PlannedResource[]): Problem[] {
    if (!aws.enabled) {
        return [];
    }
    const problems: Problem[] = [];
    if (aws.ignoreTags) {
        problems.push(...ignoreTagsProblems(aws.ignoreTags, aws.userTags, planned));
    }
    for (const resource of planned) {
        const limit = tagLimitProblem(resource.type, resource.name, mergeTags({ config: aws.userTags, resource: resource.ownTags }));
        if (limit) {
            problems.push({ path: "aws.userTags", message: limit });
        }
    }
    if (propagateUserTags(aws)) {
        for (const [key, value] of Object.entries(aws.userTags)) {
            for (const problem of consumerFormatProblems(key, value)) {
                problems.push({
                    path: formatPath(["aws", "userTags", key]),
                    message: `cannot be propagated to in-cluster consumers: ${problem}; change the tag or set aws.propagateUserTags to false`,
                });
            }
        }
    }
    return problems;
}

/** `aws.ignoreTags` entries that cover a key of `aws.userTags` or a key a planned resource sets itself. */
function ignoreTagsProblems(
    ignore: IgnoreTags,
    userTags: Readonly<Record<string, string>>,
    planned: readonly PlannedResource[],
): Problem[] {
    const problems: Problem[] = [];
    const own = [...new Set(planned.flatMap((r) => Object.keys(r.ownTags)))];
    const check = (field: "keys" | "keyPrefixes", index: number, entry: IgnoreTags) => {
        const user = keysIgnoredBy(entry, Object.keys(userTags));
        const stack = keysIgnoredBy(entry, own);
        const named = [
            ...user.map((k) => `aws.userTags ${JSON.stringify(k)}`),
            ...stack.map((k) => `the stack's own tag ${JSON.stringify(k)}`),
        ];
        if (named.length > 0) {
            problems.push({
                path: formatPath(["aws", "ignoreTags", field, index]),
                message: `${JSON.stringify(field === "keys" ? ignore.keys[index] : ignore.keyPrefixes[index])} covers ${named.join(", ")}: the AWS provider would neither apply nor track a tag it ignores; ignoreTags is for tags other tools manage`,
            });
        }
    };
    ignore.keys.forEach((key, i) => check("keys", i, { keys: [key], keyPrefixes: [] }));
    ignore.keyPrefixes.forEach((prefix, i) => check("keyPrefixes", i, { keys: [], keyPrefixes: [prefix] }));
    return problems;
}
