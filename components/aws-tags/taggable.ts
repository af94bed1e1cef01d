/**
 * Where each AWS resource type keeps its tags, for both providers the stack can meet
 * (`@pulumi/aws` and `@pulumi/aws-native`), from the schema derived from their own SDK
 * declarations (`npm run gen:taggable`, scripts/aws/taggable-types.ts; its fingerprint is checked
 * by a test). The tagger and the aws-tags policy pack both read it from here. Pure: no Pulumi
 * imports.
 *
 * Every type of the two schemas is one of: taggable (it has an own tag set, or tag sets of what
 * it creates: judged), untaggable (no tag set at all, or only tag sets that select other
 * resources: passes), or a container (it holds other resources in a document the schema does
 * not type: judged where the pack can read it, else reported as not judged). A type the schema
 * does not know is from a newer provider than the one the schema was derived from.
 */
import taggableTypes from "./taggable-types.json";

export type ProviderName = "aws" | "aws-native";
export const PROVIDERS: readonly ProviderName[] = ["aws", "aws-native"];

/** One tag set of a type: where it is (`tags`, `volumeTags`, `tagSpecifications[].tags`) and its shape. */
export interface TagSetSpec {
    /** Property path from the resource's inputs; a segment ending in `[]` is a list whose every item has the rest. */
    path: string;
    /** A string map, a list of `{key, value, ...}` items, or untyped (aws-native `any`: judged by the shape it is given). */
    shape: "map" | "list" | "any";
    /** For lists: the item type, the key and value fields, and the item's other fields with their types. */
    itemType?: string;
    keyField?: string;
    valueField?: string;
    requiredFields?: Record<string, string>;
    optionalFields?: Record<string, string>;
    /** Whether the provider's `defaultTags` reach this set (classic: `tagsAll`; aws-native: merged by the provider's Check). */
    defaults: boolean;
}

/** What a nested tag set is: tags of something the resource creates, a rule matching other resources' tags, or neither decidable. */
export type NestedRole = "tags" | "selects" | "unclassified";

export interface NestedTagSet extends TagSetSpec {
    role: NestedRole;
    /** The schema's description the role was read from (shortened). */
    doc: string;
}

export interface TypeTagSpec {
    /** The resource's own tags. */
    own?: TagSetSpec;
    /** Tag sets below the top level (and top-level ones other than the own set). */
    nested?: NestedTagSet[];
}

/** Why a container's contents cannot be read from its type: a CloudFormation template, a Cloud Control desired state, an extension's properties. */
export type ContainerKind = "cloudformation-template" | "cloudcontrol-desired-state" | "cloudformation-extension";

export interface ProviderTagSchema {
    /** `@pulumi/aws@7.48.0`. */
    package: string;
    /** Types with at least one tag set (own or nested, of any role). */
    taggable: Record<string, TypeTagSpec>;
    /** Types with no tag set at all. */
    untaggable: string[];
    containers: Record<string, ContainerKind>;
}

export interface TagSchema {
    generatedBy: string;
    /** sha256 of the package versions and the generating script: the test's staleness check. */
    fingerprint: string;
    providers: Record<ProviderName, ProviderTagSchema>;
}

export const TAG_SCHEMA = taggableTypes as unknown as TagSchema;

/** `@pulumi/aws@7.48.0 and @pulumi/aws-native@1.79.0`, for messages. */
export const TAGGABLE_SOURCE: string = PROVIDERS.map((p) => TAG_SCHEMA.providers[p].package).join(" and ");

const UNTAGGABLE: ReadonlySet<string> = new Set(PROVIDERS.flatMap((p) => TAG_SCHEMA.providers[p].untaggable));

/** The provider a type token belongs to, or undefined for non-AWS types. */
export function providerOf(type: string): ProviderName | undefined {
    return type.startsWith("aws:") ? "aws" : type.startsWith("aws-native:") ? "aws-native" : undefined;
}

/** The tag sets of a type, or undefined when it has none or the schema does not know it. */
export function typeTagSpec(type: string): TypeTagSpec | undefined {
    const provider = providerOf(type);
    return provider === undefined ? undefined : TAG_SCHEMA.providers[provider].taggable[type];
}

/** Whether the schema knows the type at all (taggable or not). */
export function isKnownType(type: string): boolean {
    return typeTagSpec(type) !== undefined || UNTAGGABLE.has(type);
}

/** Why the type's contents are out of the schema's sight, or undefined for ordinary types. */
export function containerOf(type: string): ContainerKind | undefined {
    const provider = providerOf(type);
    return provider === undefined ? undefined : TAG_SCHEMA.providers[provider].containers[type];
}

/** Every type token of one provider's schema, sorted. */
export function schemaTypes(provider: ProviderName): string[] {
    const schema = TAG_SCHEMA.providers[provider];
    return [...Object.keys(schema.taggable), ...schema.untaggable].sort();
}

/**
 * aws-native tokens by their CloudFormation type, compared case-insensitively: aws-native names
 * each type `aws-native:<service in lower case>:<type name in Pascal case>` from `AWS::<Service>::<Type>`
 * (so `AWS::EC2::VPC` is `aws-native:ec2:Vpc`).
 */
const NATIVE_BY_CFN_TYPE: ReadonlyMap<string, string> = new Map(
    schemaTypes("aws-native")
        .map((token) => token.split(":"))
        .filter((parts) => parts.length === 3 && parts[1] !== "index")
        .map((parts) => [`aws::${parts[1]}::${parts[2]}`.toLowerCase(), parts.join(":")]),
);

/** The aws-native token of a CloudFormation type (`AWS::S3::Bucket` → `aws-native:s3:Bucket`), if the schema knows it. */
export function nativeTokenOfCfnType(cfnType: string): string | undefined {
    return NATIVE_BY_CFN_TYPE.get(cfnType.toLowerCase());
}

/**
 * Where a launch template keeps the tag specifications of what it launches (instances, volumes):
 * they are tagged only through them (the provider's defaultTags do not reach them, @pulumi/aws
 * ec2/launchTemplate.d.ts), so both the tagger and the pack require an `instance` and a `volume` entry.
 */
export const LAUNCH_TEMPLATE_SPECIFICATIONS: Readonly<Record<string, string>> = {
    "aws:ec2/launchTemplate:LaunchTemplate": "tagSpecifications",
    "aws-native:ec2:LaunchTemplate": "launchTemplateData.tagSpecifications",
};

// ---------------------------------------------------------------- the own tag set, as the tagger uses it

export interface ListTagShape {
    itemType: string;
    keyField: string;
    valueField: string;
    requiredFields: Record<string, string>;
}

export type TagShape = { kind: "map" } | ({ kind: "list" } & ListTagShape);

/** The shape of a type's own `tags`, or undefined when the type has no own tag set the tagger can write (none, or untyped, or not named `tags`). */
export function tagShapeOf(type: string): TagShape | undefined {
    const own = typeTagSpec(type)?.own;
    if (!own || own.path !== "tags") {
        return undefined;
    }
    if (own.shape === "map") {
        return { kind: "map" };
    }
    if (own.shape === "list") {
        return {
            kind: "list",
            itemType: own.itemType as string,
            keyField: own.keyField as string,
            valueField: own.valueField as string,
            requiredFields: own.requiredFields ?? {},
        };
    }
    return undefined;
}

/** Whether the type has an own tag set. */
export function isTaggable(type: string): boolean {
    return typeTagSpec(type)?.own !== undefined;
}

/** Every type with an own tag set the tagger can write, sorted. */
export const TAGGABLE_TYPES: readonly string[] = PROVIDERS.flatMap((p) => Object.keys(TAG_SCHEMA.providers[p].taggable))
    .filter((type) => tagShapeOf(type) !== undefined)
    .sort();

/**
 * Values the tagger gives the other required fields of list-shaped tag items. Each field the
 * derived schema names on an own tag set must have one (a test checks), so a new list-shaped type
 * fails the build instead of being tagged wrongly.
 */
export const LIST_ITEM_FIELD_VALUES: Readonly<Record<string, unknown>> = {
    // An Auto Scaling group's tags also go on the instances it launches: every AWS resource, as the seed asks.
    propagateAtLaunch: true,
};

type ListItem = Record<string, unknown>;

/** A list of tag items read as a map (later items win, as AWS keeps one value per key). */
export function listTagsToMap(items: readonly ListItem[] | undefined, shape: ListTagShape): Record<string, string> {
    const tags: Record<string, string> = {};
    for (const item of items ?? []) {
        tags[String(item[shape.keyField])] = String(item[shape.valueField]);
    }
    return tags;
}

/**
 * Merged tags as a list of items: items the resource declared keep their other fields,
 * new ones get `LIST_ITEM_FIELD_VALUES`; in key order.
 */
export function mapToListTags(tags: Readonly<Record<string, string>>, shape: ListTagShape, existing: readonly ListItem[] = []): ListItem[] {
    const declared = new Map(existing.map((item) => [String(item[shape.keyField]), item]));
    return Object.keys(tags)
        .sort()
        .map((key) => {
            const base =
                declared.get(key) ?? Object.fromEntries(Object.keys(shape.requiredFields).map((f) => [f, LIST_ITEM_FIELD_VALUES[f]]));
            return { ...base, [shape.keyField]: key, [shape.valueField]: tags[key] };
        });
}
