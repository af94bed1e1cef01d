/**
 * The `aws` config section's rules beyond its shape (pure: no Pulumi imports):
 *
 * - `normalizeAwsSection` runs on the raw section before it is parsed. It reads keys
 *   case-insensitively, as the installer reads install-config (its test honours
 *   `experimentalPropagateUsertags`), with a warning to fix the spelling; and it warns about
 *   tag values written as YAML numbers or booleans (see `tagValueText`).
 * - `awsTagConfigProblems` runs on the parsed config: whether every resource's merged tags fit
 *   its limit, and whether tags to propagate survive the consumers' `key=value` formats.
 */
import { CONFIG_NAMESPACE, formatPath, Problem } from "../shared/problems";
import { plannedAssetResources, PlannedResource } from "./assets";
import { consumerFormatProblems } from "./consumers";
import { mergeTags, PropagationFlags, propagateUserTags, propagationDeprecation, tagLimitProblem, tagValueText } from "./rules";

const warningAt = (path: PropertyKey[], message: string) => `${CONFIG_NAMESPACE}:${formatPath(path)}: ${message}`;

function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The raw `aws` section with mis-cased keys renamed, and the warnings about what was read how. */
export function normalizeAwsSection(raw: unknown, knownKeys: readonly string[]): { value: unknown; warnings: string[] } {
    if (!isPlainObject(raw)) {
        return { value: raw, warnings: [] };
    }
    const warnings: string[] = [];
    const value: Record<string, unknown> = {};
    for (const [key, entry] of Object.entries(raw)) {
        const canonical = knownKeys.includes(key) ? key : knownKeys.find((k) => k.toLowerCase() === key.toLowerCase());
        if (canonical !== undefined && canonical !== key && !(canonical in raw)) {
            warnings.push(warningAt(["aws", key], `read as aws.${canonical} (keys are matched case-insensitively, as the installer reads install-config); spell it ${canonical}`));
            value[canonical] = entry;
        } else {
            value[key] = entry;
        }
    }
    if (isPlainObject(value.userTags)) {
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
}

/**
 * Problems the tags would cause before anything is created: a planned resource whose own tags
 * plus `aws.userTags` exceed its limit (the install-time tags are only known after the cluster
 * read and are checked then), and tags that cannot be written in the consumers' formats when
 * propagation is on.
 */
export function awsTagConfigProblems(aws: AwsTagConfig, clusterName: string, planned: PlannedResource[] = plannedAssetResources(clusterName)): Problem[] {
    if (!aws.enabled) {
        return [];
    }
    const problems: Problem[] = [];
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
