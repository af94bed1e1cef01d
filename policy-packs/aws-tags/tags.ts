/**
 * The tags of an AWS resource as the engine shows it: its own `tags` (a map, or a list of items
 * for the types the derived list marks so), `tagsAll` (what the provider computes: its
 * `defaultTags` merged under the resource's tags), and the provider's `defaultTags`, which stand
 * in for `tagsAll` while it is unknown during a preview.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import { TagShape, tagShapeOf } from "../../components/aws-tags/taggable";
import { asArray, asObject, known, knownStringMap, Obj, Unknown, UNKNOWN } from "../shared/values";

export type TagMap = Record<string, string | Unknown>;

export interface ResourceTags {
    shape: TagShape;
    /** The resource's `tags` (an absent input is an empty map). */
    own: TagMap;
    /** `tagsAll`, or UNKNOWN while the provider has not computed it, or undefined for types without it. */
    all: TagMap | Unknown | undefined;
    /** The provider's `defaultTags.tags` (empty without a provider or default tags). */
    providerDefaults: TagMap;
}

function listTags(value: unknown, shape: Extract<TagShape, { kind: "list" }>): TagMap {
    const tags: TagMap = {};
    for (const entry of asArray(value)) {
        const item = asObject(entry) ?? {};
        const key = known(() => item[shape.keyField]);
        if (key !== UNKNOWN) {
            const value = known(() => item[shape.valueField]);
            tags[String(key)] = value === UNKNOWN ? UNKNOWN : String(value);
        }
    }
    return tags;
}

/**
 * Provider inputs reach analyzers as the provider received them: objects JSON-encoded as
 * strings (as Pulumi passes provider configuration), or as objects.
 */
export function providerDefaultTags(provider: PolicyProviderResource | undefined): TagMap {
    if (!provider || provider.type !== "pulumi:providers:aws") {
        return {};
    }
    const raw = known(() => provider.props.defaultTags);
    if (raw === UNKNOWN || raw === undefined) {
        return {};
    }
    let decoded: unknown = raw;
    if (typeof raw === "string") {
        try {
            decoded = JSON.parse(raw);
        } catch {
            return {};
        }
    }
    return knownStringMap(asObject(decoded)?.tags) ?? {};
}

/**
 * The tags of a taggable resource, undefined for types the derived list does not mark taggable.
 * A `tags` input that is unknown as a whole is read plainly, so the engine reports the policy as
 * unable to run during the preview instead of judging a resource whose tags it cannot see.
 */
export function resourceTags(args: { type: string; props: Obj; provider?: PolicyProviderResource }): ResourceTags | undefined {
    const shape = tagShapeOf(args.type);
    if (!shape) {
        return undefined;
    }
    const declared = args.props.tags;
    const own = shape.kind === "list" ? listTags(declared, shape) : knownStringMap(declared) ?? {};
    let all: ResourceTags["all"];
    if (shape.kind === "map") {
        const value = known(() => args.props.tagsAll);
        all = value === UNKNOWN ? UNKNOWN : knownStringMap(value);
    }
    return { shape, own, all, providerDefaults: providerDefaultTags(args.provider) };
}

/**
 * Every tag the resource will carry: `tagsAll` when known (it already holds the provider's
 * defaults), otherwise the provider's defaults; the resource's own tags win, as AWS applies them.
 */
export function effectiveTags(tags: ResourceTags): TagMap {
    const base = tags.all === undefined || tags.all === UNKNOWN ? tags.providerDefaults : tags.all;
    return { ...base, ...tags.own };
}

/** The keys that come from the stack-wide user layer: the provider's defaults, and what `tagsAll` adds to `tags`. */
export function providerLayerKeys(tags: ResourceTags): string[] {
    const fromAll = tags.all === undefined || tags.all === UNKNOWN ? [] : Object.keys(tags.all).filter((k) => !(k in tags.own));
    return [...new Set([...Object.keys(tags.providerDefaults), ...fromAll])];
}
