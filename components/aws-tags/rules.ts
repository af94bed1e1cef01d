/**
 * Rules for user-defined AWS tags (seed 004), shared by the config validator, the tagging
 * component and the aws-tags policy pack; the only module of the room config imports
 * (tests/toolchain/import-rules.test.ts). Pure: no Pulumi imports.
 *
 * Messages start with the installer's own wording (`key is in the kubernetes.io namespace`,
 * `value contains invalid characters`, ...) so admins who know OpenShift's install-config
 * recognise them, then say what exactly is wrong and what is allowed.
 */
import type { PlannedResource } from "../aws-assets/assets";
import { compareText } from "../shared/order";
import { CONFIG_NAMESPACE, describeValue, formatPath, Problem } from "../shared/problems";
import { isRecord } from "../shared/records";
import { consumerFormatProblems } from "./consumers";

/** The installer's limit on user tags. */
export const MAX_USER_TAGS = 25;
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;
/** AWS's per-resource tag limit, and the lower one for S3 object tags. */
export const MAX_TAGS_PER_RESOURCE = 50;
export const MAX_S3_OBJECT_TAGS = 10;
/** Types whose tags are S3 *object* tags (limit 10), not resource tags. */
export const S3_OBJECT_TYPES: ReadonlySet<string> = new Set([
    "aws:s3/bucketObject:BucketObject",
    "aws:s3/bucketObjectv2:BucketObjectv2",
    "aws:s3/objectCopy:ObjectCopy",
]);

/**
 * Letters, digits, spaces and `_ . : / = + - @`. The OpenShift API's pattern writes
 * `+-@` inside a class, which makes a range from `+` to `@` and lets `, ; < > ?` through;
 * here the '-' is escaped so it is literal, as the design intends.
 */
export const TAG_CHARACTERS = /^[0-9A-Za-z _.:/=+\-@]*$/;
const TAG_CHARACTER = /[0-9A-Za-z _.:/=+\-@]/;
export const TAG_CHARACTERS_RULE = "letters, digits, spaces and _ . : / = + - @";

/** Namespaces reserved for the platform, with or without a subdomain (`x.kubernetes.io/a`). */
export const RESERVED_TAG_NAMESPACES = ["kubernetes.io", "openshift.io"] as const;
/** AWS reserves this key prefix, in any letter case, for its own tags. */
export const AWS_RESERVED_PREFIX = "aws:";

/**
 * The reserved namespace a key falls in, if any: its domain (the part before the first `/`)
 * is the namespace or a subdomain of it. `otheropenshift.io/x` and `a/openshift.io/b` are not in it.
 */
export function reservedNamespaceOf(key: string): string | undefined {
    const domain = key.split("/")[0];
    return RESERVED_TAG_NAMESPACES.find((ns) => domain === ns || domain.endsWith(`.${ns}`));
}

/** The distinct characters of `text` outside the tag character set, each quoted, in order of appearance. */
export function invalidCharacters(text: string): string[] {
    const found: string[] = [];
    for (const char of text) {
        const quoted = JSON.stringify(char);
        if (!TAG_CHARACTER.test(char) && !found.includes(quoted)) {
            found.push(quoted);
        }
    }
    return found;
}

/**
 * The `Name` key (any letter case, as the installer compares) as a user tag: each resource sets
 * its own Name, so a stack-wide one would give every resource the same. Undefined for other keys.
 */
export function nameKeyProblem(key: string): string | undefined {
    if (key.toLowerCase() !== "name") {
        return undefined;
    }
    const alias = key === "Name" ? "" : ` (${describeValue(key)} matches it: the installer compares case-insensitively)`;
    return `"Name" key is not allowed for user defined tags${alias}: each resource sets its own Name`;
}

/** A key's characters and length. */
export function tagKeyFormatProblems(key: string): string[] {
    const problems: string[] = [];
    const invalid = invalidCharacters(key);
    if (invalid.length > 0) {
        problems.push(`key contains invalid characters ${invalid.join(", ")}; allowed are ${TAG_CHARACTERS_RULE}`);
    }
    if (key.length === 0) {
        problems.push(`key is empty: a key has 1 to ${MAX_TAG_KEY_LENGTH} characters`);
    } else if (key.length > MAX_TAG_KEY_LENGTH) {
        problems.push(`key is too long: ${key.length} characters, at most ${MAX_TAG_KEY_LENGTH}`);
    }
    return problems;
}

/**
 * The tag keys by which `openshift-install destroy` finds a cluster's AWS resources: the installer
 * records them as the cluster's `Identifier` filters in metadata.json (openshift/installer
 * pkg/asset/cluster/aws/aws.go `Metadata`: `kubernetes.io/cluster/<infraID>: owned`,
 * `openshiftClusterID: <clusterID>`, `sigs.k8s.io/cluster-api-provider-aws/cluster/<infraID>: owned`),
 * and destroy deletes every resource that carries all tags of any one filter
 * (pkg/destroy/aws/aws.go `Filter`, `FindTaggedResourcesToDelete`). A resource of this stack
 * carrying one of them with another cluster's value is deleted when that cluster is destroyed.
 */
export const INSTALLER_OWNERSHIP_KEY = "openshiftClusterID";
/** Cluster API Provider AWS's namespace: its cluster ownership key (destroy's third filter) and its `role` key, by which the installer's machinery finds subnets and security groups. */
export const CAPA_KEY_PREFIX = "sigs.k8s.io/cluster-api-provider-aws/";
export const CAPA_CLUSTER_KEY_PREFIX = `${CAPA_KEY_PREFIX}cluster/`;
/** The AWS cloud provider's and the installer's cluster key (in the reserved kubernetes.io namespace). */
export const KUBERNETES_CLUSTER_KEY_PREFIX = "kubernetes.io/cluster/";

/** Why a key hands a resource to a cluster's destroy or to CAPA, or undefined. */
export function ownershipKeyProblem(key: string): string | undefined {
    if (key === INSTALLER_OWNERSHIP_KEY) {
        return `key ${INSTALLER_OWNERSHIP_KEY} is the installer's cluster ownership tag: openshift-install destroy deletes every resource carrying a cluster's id under it (openshift/installer pkg/destroy/aws/aws.go)`;
    }
    if (key.startsWith(CAPA_CLUSTER_KEY_PREFIX)) {
        return `key is Cluster API Provider AWS's cluster ownership tag: openshift-install destroy deletes every resource carrying ${CAPA_CLUSTER_KEY_PREFIX}<infra id>=owned (openshift/installer pkg/asset/cluster/aws/aws.go)`;
    }
    if (key.startsWith(CAPA_KEY_PREFIX)) {
        return `key is in Cluster API Provider AWS's namespace ${CAPA_KEY_PREFIX}, by which the cluster's machinery finds its resources`;
    }
    return undefined;
}

/**
 * A key in a namespace the platform reserves (kubernetes.io, openshift.io), with AWS's prefix aws:,
 * or one of the installer's and CAPA's cluster ownership keys.
 */
export function reservedKeyProblems(key: string): string[] {
    const problems: string[] = [];
    const reserved = reservedNamespaceOf(key);
    if (reserved) {
        problems.push(`key is in the ${reserved} namespace, which the platform reserves`);
    }
    const ownership = ownershipKeyProblem(key);
    if (ownership) {
        problems.push(ownership);
    }
    if (key.toLowerCase().startsWith(AWS_RESERVED_PREFIX)) {
        problems.push(
            `key starts with ${describeValue(key.slice(0, AWS_RESERVED_PREFIX.length))}: AWS reserves the prefix aws: for its own tags`,
        );
    }
    return problems;
}

/** Problems with one user tag key, as messages without a path (the path names the key). */
export function tagKeyProblems(key: string): string[] {
    const name = nameKeyProblem(key);
    return [...(name === undefined ? [] : [name]), ...tagKeyFormatProblems(key), ...reservedKeyProblems(key)];
}

/** Problems with one tag value, as messages without a path. */
export function tagValueProblems(value: string): string[] {
    const problems: string[] = [];
    const invalid = invalidCharacters(value);
    if (invalid.length > 0) {
        problems.push(
            `value contains invalid characters ${invalid.join(", ")} in ${describeValue(value)}; allowed are ${TAG_CHARACTERS_RULE}`,
        );
    }
    if (value.length === 0) {
        problems.push(`value is empty: a value has 1 to ${MAX_TAG_VALUE_LENGTH} characters (some AWS services reject empty values)`);
    } else if (value.trim().length === 0) {
        problems.push(`value ${describeValue(value)} is only whitespace: it names nothing, and services that trim it see an empty value`);
    } else if (value.length > MAX_TAG_VALUE_LENGTH) {
        problems.push(`value is too long: ${value.length} characters, at most ${MAX_TAG_VALUE_LENGTH}`);
    }
    return problems;
}

// ---------------------------------------------------------------- what AWS itself accepts

/**
 * The characters AWS accepts in tag keys and values on any resource: Unicode letters, numbers
 * and spaces, and `_ . : / = + - @` (AWS General Reference, "Tagging best practices": "letters,
 * numbers, and spaces representable in UTF-8"). Wider than TAG_CHARACTERS, which is what
 * OpenShift's Infrastructure API takes for the tags it hands its operators; the pack judges a
 * resource by what AWS accepts, so an `é` on a resource the stack does not propagate passes.
 */
const AWS_TAG_CHARACTER = /^[\p{L}\p{N}\p{Zs}_.:/=+\-@]$/u;
export const AWS_TAG_CHARACTERS_RULE = "Unicode letters, numbers and spaces, and _ . : / = + - @";

function awsInvalidCharacters(text: string): string[] {
    return [...new Set([...text].filter((c) => !AWS_TAG_CHARACTER.test(c)).map((c) => JSON.stringify(c)))];
}

/** A tag key or value by AWS's own rules (lengths in characters, as AWS counts them); `value` also refuses blank text. */
export function awsTagTextProblems(kind: "key" | "value", text: string): string[] {
    const max = kind === "key" ? MAX_TAG_KEY_LENGTH : MAX_TAG_VALUE_LENGTH;
    const problems: string[] = [];
    const invalid = awsInvalidCharacters(text);
    if (invalid.length > 0) {
        problems.push(`${kind} contains characters AWS refuses ${invalid.join(", ")}; allowed are ${AWS_TAG_CHARACTERS_RULE}`);
    }
    const length = [...text].length;
    if (length === 0) {
        problems.push(`${kind} is empty: a ${kind} has 1 to ${max} characters`);
    } else if (text.trim().length === 0) {
        problems.push(
            `${kind} ${describeValue(text)} is only whitespace: it names nothing, and services that trim it see an empty ${kind}`,
        );
    } else if (length > max) {
        problems.push(`${kind} is too long: ${length} characters, at most ${max}`);
    }
    return problems;
}

// ---------------------------------------------------------------- every tag set a resource carries

/**
 * The reserved keys a correct stack that builds a cluster's network still writes, on the resources
 * the AWS cloud provider reads them from (kubernetes/cloud-provider-aws pkg/providers/v1/tags.go:
 * `kubernetes.io/cluster/<id>` with `owned` or `shared` finds the cluster's subnets and security
 * groups; aws.go: subnets for load balancers by `kubernetes.io/role/elb` and
 * `kubernetes.io/role/internal-elb`, value `1` or empty), for this cluster's own ids. The
 * installer writes exactly these onto shared subnets (openshift/installer
 * pkg/asset/cluster/aws/aws.go `tagSharedVPCResources`). `value` is undefined while unknown.
 */
export function cloudProviderKey(
    target: { type: string; resourceId?: string },
    key: string,
    value: string | undefined,
    clusterIds: readonly string[],
): boolean {
    const kind = cloudProviderTarget(target);
    if ((kind === "subnet" || kind === "either") && (key === "kubernetes.io/role/elb" || key === "kubernetes.io/role/internal-elb")) {
        return value === undefined || value === "1" || value === "";
    }
    if (kind !== undefined && key.startsWith(KUBERNETES_CLUSTER_KEY_PREFIX)) {
        return (
            clusterIds.includes(key.slice(KUBERNETES_CLUSTER_KEY_PREFIX.length)) &&
            (value === undefined || value === "owned" || value === "shared")
        );
    }
    return false;
}

/**
 * What a tag lands on, for the cloud provider's keys: a subnet or security group resource, or an
 * EC2 tag resource (`aws:ec2/tag:Tag`) whose `resourceId` is one (`subnet-…`, `sg-…`) or not known
 * yet (an output of the subnet it tags).
 */
function cloudProviderTarget(target: { type: string; resourceId?: string }): "subnet" | "security-group" | "either" | undefined {
    switch (target.type) {
        case "aws:ec2/subnet:Subnet":
        case "aws-native:ec2:Subnet":
            return "subnet";
        case "aws:ec2/securityGroup:SecurityGroup":
        case "aws-native:ec2:SecurityGroup":
            return "security-group";
        case "aws:ec2/tag:Tag":
            return target.resourceId === undefined
                ? "either"
                : target.resourceId.startsWith("subnet-")
                  ? "subnet"
                  : target.resourceId.startsWith("sg-")
                    ? "security-group"
                    : undefined;
        default:
            return undefined;
    }
}

/** An allow-list entry matches a key exactly, or as a prefix when it ends with `*`. */
export function allowedKey(key: string, allowList: readonly string[]): boolean {
    return allowList.some((entry) => (entry.endsWith("*") ? key.startsWith(entry.slice(0, -1)) : key === entry));
}

export interface TagSetTarget {
    /** The type token of the resource that carries (or writes) the tags. */
    type: string;
    /** For tag resources: the id of the resource the tag lands on, when known. */
    resourceId?: string;
}

export interface TagSetRules {
    /** This cluster's ids (its name; on OpenShift its infra id): the cloud provider's keys pass for them. */
    clusterIds: readonly string[];
    /**
     * The cloud provider's cluster key passes for any id on its resources: for the tagging safety
     * net, which cannot know every id the cluster goes by (the infra id is unknown when rendering
     * to a directory); the pack judges those keys by its `clusterIds`.
     */
    anyClusterId?: boolean;
    /** Reserved keys that may still be set: exact keys, or prefixes ending with `*`. */
    allowedKeys?: readonly string[];
}

/**
 * The reserved-key problems of one tag: none for the cloud provider's own keys on their resources
 * and for allow-listed keys. `value` is undefined while unknown.
 */
export function reservedTagProblems(target: TagSetTarget, key: string, value: string | undefined, rules: TagSetRules): string[] {
    const ids =
        rules.anyClusterId && key.startsWith(KUBERNETES_CLUSTER_KEY_PREFIX)
            ? [key.slice(KUBERNETES_CLUSTER_KEY_PREFIX.length)]
            : rules.clusterIds;
    if (allowedKey(key, rules.allowedKeys ?? []) || cloudProviderKey(target, key, value, ids)) {
        return [];
    }
    return reservedKeyProblems(key);
}

/**
 * Every problem of one tag set a resource carries (its own, or the tags it gives what it creates),
 * as `tag "<key>": <problem>` lines, plus the count: reserved keys, AWS's characters and lengths,
 * and AWS's limit. The one rule the tagging safety net and the aws-tags pack apply to every tag
 * set. Values undefined are unknown (a preview): their text is judged when known.
 */
export function tagSetProblems(
    target: TagSetTarget,
    tags: Readonly<Record<string, string | undefined>>,
    rules: TagSetRules,
    limit: number = tagLimitFor(target.type),
): string[] {
    const problems: string[] = [];
    for (const [key, value] of Object.entries(tags)) {
        for (const problem of [
            ...reservedTagProblems(target, key, value, rules),
            ...awsTagTextProblems("key", key),
            ...(value === undefined ? [] : awsTagTextProblems("value", value)),
        ]) {
            problems.push(`tag ${describeValue(key)}: ${problem}`);
        }
    }
    const count = Object.keys(tags).length;
    if (count > limit) {
        problems.push(
            `${count} tags; ${limit === MAX_S3_OBJECT_TAGS ? tagLimitText(target.type) : `AWS allows at most ${limit} tags on a resource`}`,
        );
    }
    return problems;
}

/** A problem with a tag map: `key` is the offending tag, or undefined for the whole map. */
export interface TagIssue {
    key?: string;
    message: string;
}

/**
 * Validates a user tag map: the count limit (25) and every key and value. Values that are not
 * strings are left to whoever read them (see `tagValueText`); their keys are still checked.
 */
export function userTagIssues(tags: Readonly<Record<string, unknown>>): TagIssue[] {
    const issues: TagIssue[] = [];
    const keys = Object.keys(tags);
    if (keys.length > MAX_USER_TAGS) {
        issues.push({ message: `Too many: ${keys.length}: must have at most ${MAX_USER_TAGS} items (the installer's limit on user tags)` });
    }
    for (const key of keys) {
        const value = tags[key];
        for (const message of [...tagKeyProblems(key), ...(typeof value === "string" ? tagValueProblems(value) : [])]) {
            issues.push({ key, message });
        }
    }
    return issues;
}

/** `userTagIssues` as Problems, with each path naming the exact key under `pathPrefix`. */
export function userTagProblems(tags: Readonly<Record<string, unknown>>, pathPrefix: PropertyKey[]): Problem[] {
    return userTagIssues(tags).map((issue) => ({
        path: formatPath(issue.key === undefined ? pathPrefix : [...pathPrefix, issue.key]),
        message: issue.message,
    }));
}

// ---------------------------------------------------------------- values written as YAML scalars

/**
 * How a tag value given as a YAML/JSON scalar becomes tag text. Strings are taken as they are.
 * Integers and booleans are accepted as their canonical text (`7536`, `true`): the documented
 * install-config sample writes `costCenter: 7536`, the installer accepts it, and
 * `pulumi config set --path` stores integers and true/false that way. They come with a
 * warning, because YAML has already lost the text the admin typed (`007536` and `0x1D70` both
 * arrive as 7536). Other numbers are refused: `1.50` arrives as 1.5 and `1e3` as 1000.
 */
export type TagValueText = { ok: true; text: string; warning?: string } | { ok: false; problem: string };

export function tagValueText(value: unknown): TagValueText {
    if (typeof value === "string") {
        return { ok: true, text: value };
    }
    if (typeof value === "boolean" || (typeof value === "number" && Number.isSafeInteger(value))) {
        const text = String(value);
        return {
            ok: true,
            text,
            warning: `the YAML ${typeof value} ${text} is used as the tag value "${text}"; quote it in the stack file (or use pulumi config set --path --type string) so the value is exactly the text you wrote`,
        };
    }
    if (typeof value === "number") {
        return {
            ok: false,
            problem: `the YAML number ${describeValue(value)} is not an integer, so the text you wrote cannot be recovered from it (1.50 arrives as 1.5, 1e3 as 1000); quote the value`,
        };
    }
    return {
        ok: false,
        problem: `expected a string tag value, got ${value === null ? "null" : `${Array.isArray(value) ? "array" : typeof value} ${describeValue(value)}`}`,
    };
}

// ---------------------------------------------------------------- propagation flags

export interface PropagationFlags {
    propagateUserTags?: boolean;
    experimentalPropagateUserTags?: boolean;
}

/**
 * Whether user tags go to what the cluster creates in AWS. The deprecated
 * `experimentalPropagateUserTags` wins when both are set, and neither set means true (seed 004,
 * day-2 proposal: "an omitted value means that the user tags will be propagated to the cluster").
 */
export function propagateUserTags(flags: PropagationFlags): boolean {
    return flags.experimentalPropagateUserTags ?? flags.propagateUserTags ?? true;
}

/** The deprecation warning for `experimentalPropagateUserTags`, or undefined when it is not set. */
export function propagationDeprecation(flags: PropagationFlags): string | undefined {
    if (flags.experimentalPropagateUserTags === undefined) {
        return undefined;
    }
    const both =
        flags.propagateUserTags === undefined
            ? ""
            : flags.propagateUserTags === flags.experimentalPropagateUserTags
              ? " (propagateUserTags is also set, to the same value)"
              : ` and wins over propagateUserTags (${flags.propagateUserTags}): propagation is ${flags.experimentalPropagateUserTags ? "on" : "off"}`;
    return `deprecated: use aws.propagateUserTags instead; experimentalPropagateUserTags (${flags.experimentalPropagateUserTags}) still applies${both}`;
}

// ---------------------------------------------------------------- precedence merge

/** Where a tag comes from, lowest precedence first. */
export const TAG_SOURCES = ["install", "config", "resource"] as const;
export type TagSource = (typeof TAG_SOURCES)[number];

export const TAG_SOURCE_LABELS: Record<TagSource, string> = {
    install: "the install-time tags (Infrastructure/cluster status.platformStatus.aws.resourceTags)",
    config: "aws.userTags",
    resource: "the resource's own tags",
};

export type TagLayers = Partial<Record<TagSource, Readonly<Record<string, string>>>>;

/** A key where a higher layer replaced a different value from a lower one. */
export interface TagOverride {
    key: string;
    value: string;
    source: TagSource;
    overridden: { value: string; source: TagSource };
}

export interface MergedTags {
    /** The merged tags, keys sorted. */
    tags: Record<string, string>;
    /** The layer each merged key's value came from. */
    sources: Record<string, TagSource>;
    /** Every key where a higher layer overrode a different value, in key then layer order. */
    overrides: TagOverride[];
}

/**
 * Merges tag layers: install-time < aws.userTags < the resource's own tags. A key that a
 * higher layer sets to the same value is not an override (the seed: a conflict that causes
 * no change is not reported).
 */
export function mergeTags(layers: TagLayers): MergedTags {
    const tags: Record<string, string> = {};
    const sources: Record<string, TagSource> = {};
    const overrides: TagOverride[] = [];
    for (const source of TAG_SOURCES) {
        for (const [key, value] of Object.entries(layers[source] ?? {})) {
            const previous = sources[key];
            if (previous !== undefined && tags[key] !== value) {
                overrides.push({ key, value, source, overridden: { value: tags[key], source: previous } });
            }
            tags[key] = value;
            sources[key] = source;
        }
    }
    const sortedKeys = Object.keys(tags).sort();
    overrides.sort((a, b) => (a.key === b.key ? TAG_SOURCES.indexOf(a.source) - TAG_SOURCES.indexOf(b.source) : compareText(a.key, b.key)));
    return {
        tags: Object.fromEntries(sortedKeys.map((k) => [k, tags[k]])),
        sources: Object.fromEntries(sortedKeys.map((k) => [k, sources[k]])),
        overrides,
    };
}

/** How a resource is named in messages: its type token and Pulumi name. */
export function resourceLabel(type: string, name: string): string {
    return `${type} ${describeValue(name)}`;
}

/** The warning for one override (the seed's "event"): names the key, both values and the resource. */
export function overrideWarning(resource: string, override: TagOverride): string {
    return `tag ${describeValue(override.key)} on ${resource}: ${describeValue(override.value)} from ${TAG_SOURCE_LABELS[override.source]} supersedes ${describeValue(override.overridden.value)} from ${TAG_SOURCE_LABELS[override.overridden.source]}`;
}

// ---------------------------------------------------------------- per-resource limits

/** AWS's tag limit for a resource type: 10 for S3 object tags, 50 otherwise. */
export function tagLimitFor(type: string): number {
    return S3_OBJECT_TYPES.has(type) ? MAX_S3_OBJECT_TAGS : MAX_TAGS_PER_RESOURCE;
}

/** The error for a merged tag set over the type's limit, with where the tags come from; undefined when it fits. */
export function tagLimitProblem(type: string, name: string, merged: Pick<MergedTags, "sources">): string | undefined {
    const count = Object.keys(merged.sources).length;
    const limit = tagLimitFor(type);
    if (count <= limit) {
        return undefined;
    }
    const bySource = TAG_SOURCES.map((source) => [source, Object.values(merged.sources).filter((s) => s === source).length] as const)
        .filter(([, n]) => n > 0)
        .map(([source, n]) => `${n} from ${TAG_SOURCE_LABELS[source]}`);
    return `${resourceLabel(type, name)} would carry ${count} tags (${bySource.join(", ")}); ${tagLimitText(type)}`;
}

/** What AWS allows a resource of `type`, for messages. */
export function tagLimitText(type: string): string {
    return S3_OBJECT_TYPES.has(type)
        ? `S3 allows at most ${MAX_S3_OBJECT_TAGS} tags on an object`
        : `AWS allows at most ${MAX_TAGS_PER_RESOURCE} tags on a resource`;
}

/**
 * The keys of `keys` that an AWS provider's `ignoreTags` covers (an exact key or a key prefix):
 * the provider neither applies nor tracks such a tag (terraform-provider-aws `ignore_tags`), so
 * a required or stack-set key covered by it never reaches AWS through that provider.
 */
export function keysIgnoredBy(ignore: { keys: readonly string[]; keyPrefixes: readonly string[] }, keys: readonly string[]): string[] {
    return keys.filter((key) => ignore.keys.includes(key) || ignore.keyPrefixes.some((prefix) => key.startsWith(prefix)));
}

/** The error for a resource that carries `count` tags (its own and its provider's defaults), over its type's limit; undefined when it fits. */
export function tagCountProblem(type: string, name: string, count: number): string | undefined {
    return count <= tagLimitFor(type) ? undefined : `${resourceLabel(type, name)} carries ${count} tags; ${tagLimitText(type)}`;
}

// The `aws` config section's rules beyond its shape:
// - `normalizeAwsSection` runs on the raw section before it is parsed. It reads keys
//   case-insensitively, as the installer reads install-config (its test honours
//   `experimentalPropagateUsertags`), with a warning to fix the spelling; and it warns about
//   tag values written as YAML numbers or booleans (see `tagValueText`).
// - `awsTagConfigProblems` runs on the parsed config: whether every resource's merged tags fit
//   its limit, whether tags to propagate survive the consumers' `key=value` formats, and whether
//   `aws.ignoreTags` leaves every tag the stack sets alone.

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
