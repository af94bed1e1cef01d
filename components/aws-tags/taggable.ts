/**
 * Which AWS resource types take tags, and in what shape, from the list derived from
 * @pulumi/aws's own declarations (`npm run gen:taggable`, checked for staleness by a test).
 * The tagger and the aws-tags policy pack both read it from here. Pure: no Pulumi imports.
 */
import taggableTypes from "./taggable-types.json";

export interface ListTagShape {
    itemType: string;
    keyField: string;
    valueField: string;
    requiredFields: Record<string, string>;
}

export type TagShape = { kind: "map" } | ({ kind: "list" } & ListTagShape);

export const TAGGABLE_SOURCE: string = taggableTypes.source;
const MAP_TAGGED: ReadonlySet<string> = new Set(taggableTypes.map);
const LIST_TAGGED: Readonly<Record<string, ListTagShape>> = taggableTypes.list;

/** Types whose `tags` input the derivation found and judged not to be the resource's own tags (a tag filter, a selector). */
const NOT_OWN_TAGS: ReadonlySet<string> = new Set(Object.keys(taggableTypes.other));

/** Whether the derived list knows `type` declares a `tags` input that is not a tag map of its own. */
export function hasNonTagTagsInput(type: string): boolean {
    return NOT_OWN_TAGS.has(type);
}

/** Every taggable type token, sorted. */
export const TAGGABLE_TYPES: readonly string[] = [...MAP_TAGGED, ...Object.keys(LIST_TAGGED)].sort();

/** The shape of a type's `tags` input, or undefined when the type takes no tags. */
export function tagShapeOf(type: string): TagShape | undefined {
    if (MAP_TAGGED.has(type)) {
        return { kind: "map" };
    }
    const list = LIST_TAGGED[type];
    return list ? { kind: "list", ...list } : undefined;
}

export function isTaggable(type: string): boolean {
    return tagShapeOf(type) !== undefined;
}

/**
 * Values the tagger gives the other required fields of list-shaped tag items. Each field the
 * derived list names must have one (a test checks), so a new list-shaped type in @pulumi/aws
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
