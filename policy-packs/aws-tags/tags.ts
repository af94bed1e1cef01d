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
    /** Whether the provider's `defaultTags` are unknown (a preview where they come from another resource's output). */
    providerDefaultsUnknown: boolean;
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
 * Whether the provider's `defaultTags` (or one of its values) are not known yet: during a preview
 * they may come from another resource's output, and are known only at deploy.
 */
export function providerDefaultTagsUnknown(provider: PolicyProviderResource | undefined): boolean {
    if (!provider || provider.type !== "pulumi:providers:aws") {
        return false;
    }
    const raw = known(() => provider.props.defaultTags);
    if (raw === UNKNOWN) {
        return true;
    }
    if (typeof raw === "string") {
        // The engine encodes an unknown nested in provider config as its unknown sentinel.
        return raw.includes(UNKNOWN_SENTINEL);
    }
    const tags = asObject(asObject(raw)?.tags);
    return known(() => asObject(raw)?.tags) === UNKNOWN || Object.values(knownStringMap(tags) ?? {}).some((v) => v === UNKNOWN);
}
/** The value Pulumi gives an unknown inside JSON-encoded provider configuration. */
export const UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/**
 * The tags of a taggable resource, undefined for types the derived list does not mark taggable.
 * A `tags` input that is unknown as a whole is read plainly, so the engine reports the policy as
 * unable to run during the preview instead of judging a resource whose tags it cannot see.
 */
export function resourceTags(args: { type: string; props: Obj; provider?: PolicyProviderResource }): ResourceTags | undefined {
    const shape = tagShapeOf(args.type) ?? nativeTagShape(args);
    if (!shape) {
        return undefined;
    }
    const declared = args.props.tags;
    const own = shape.kind === "list" ? listTags(declared, shape) : (knownStringMap(declared) ?? {});
    let all: ResourceTags["all"];
    if (shape.kind === "map") {
        const value = known(() => args.props.tagsAll);
        all = value === UNKNOWN ? UNKNOWN : knownStringMap(value);
    }
    return {
        shape,
        own,
        all,
        providerDefaults: providerDefaultTags(args.provider),
        providerDefaultsUnknown: providerDefaultTagsUnknown(args.provider),
    };
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

/** aws-native's tag items (`{key, value}`, the CloudFormation `Tag` shape most aws-native types take). */
export const NATIVE_TAG_ITEMS: Extract<TagShape, { kind: "list" }> = {
    kind: "list",
    itemType: "aws-native Tag",
    keyField: "key",
    valueField: "value",
    requiredFields: {},
};

/**
 * The tag shape of an `aws-native:` resource, read from its own `tags`: no list is derived for
 * aws-native here (it is not a dependency), so a type is judged by the shape it declares: a list
 * of `{key, value}` items or a string map. Undefined when it declares no `tags` or another shape.
 */
export function nativeTagShape(args: { type: string; props: Obj }): TagShape | undefined {
    if (!args.type.startsWith("aws-native:")) {
        return undefined;
    }
    const tags = known(() => args.props.tags);
    if (tags === UNKNOWN || tags === undefined) {
        return undefined;
    }
    if (Array.isArray(tags)) {
        return tags.every((item) => {
            const entry = known(() => item);
            return entry === UNKNOWN || (asObject(entry) !== undefined && "key" in (entry as Obj) && "value" in (entry as Obj));
        })
            ? NATIVE_TAG_ITEMS
            : undefined;
    }
    const map = asObject(tags);
    return map &&
        Object.keys(map).every((k) => {
            const v = known(() => map[k]);
            return v === UNKNOWN || typeof v === "string";
        })
        ? { kind: "map" }
        : undefined;
}

/** A set of tags a resource puts on something else it creates (a launch's instances, an instance's volumes). */
export interface NestedTagSet {
    /** `tagSpecifications[0] (instance)`, `root volume (volumeTags)`. */
    where: string;
    tags: TagMap;
}

/**
 * The tags a launch template's `tagSpecifications` and an instance's volumes will carry. The AWS
 * provider does not propagate its `defaultTags` to launch template tag specifications ("Default
 * tags are currently not propagated", @pulumi/aws ec2/launchTemplate.d.ts), but does apply them
 * to an instance's root and EBS volumes (ec2/instance.d.ts: "default tags — applied to the
 * instance and to those volumes"), under `volumeTags` or each device's `tags`.
 */
export function nestedTagSets(args: { type: string; props: Obj }, providerDefaults: TagMap): NestedTagSet[] {
    if (args.type === "aws:ec2/launchTemplate:LaunchTemplate") {
        return asArray(args.props.tagSpecifications).map((entry, index) => {
            const specification = asObject(entry) ?? {};
            const resourceType = known(() => specification.resourceType);
            return {
                where: `tagSpecifications[${index}]${typeof resourceType === "string" ? ` (${resourceType})` : ""}`,
                tags: knownStringMap(specification.tags) ?? {},
            };
        });
    }
    if (args.type === "aws:autoscaling/group:Group") {
        // Only items with propagateAtLaunch reach the group's instances (and, through them, nothing
        // else): an item kept on the group alone tags no instance (@pulumi/aws autoscaling/group.d.ts).
        const propagated: TagMap = {};
        for (const entry of asArray(args.props.tags)) {
            const item = asObject(entry) ?? {};
            const key = known(() => item.key);
            const flag = known(() => item.propagateAtLaunch);
            if (typeof key === "string" && (flag === true || flag === UNKNOWN)) {
                const value = known(() => item.value);
                propagated[key] = value === UNKNOWN ? UNKNOWN : String(value);
            }
        }
        return [{ where: "instances (tags with propagateAtLaunch)", tags: propagated }];
    }
    if (args.type === "aws:ec2/spotFleetRequest:SpotFleetRequest") {
        return asArray(args.props.launchSpecifications).map((entry, index) => ({
            where: `launchSpecifications[${index}] instances`,
            tags: { ...providerDefaults, ...(knownStringMap(asObject(entry)?.tags) ?? {}) },
        }));
    }
    if (args.type === "aws:ec2/instance:Instance") {
        const volumeTags = knownStringMap(args.props.volumeTags);
        if (volumeTags) {
            return [{ where: "volumes (volumeTags)", tags: { ...providerDefaults, ...volumeTags } }];
        }
        const root = asObject(args.props.rootBlockDevice);
        const sets: NestedTagSet[] = [
            { where: "root volume (rootBlockDevice.tags)", tags: { ...providerDefaults, ...(knownStringMap(root?.tags) ?? {}) } },
        ];
        asArray(args.props.ebsBlockDevices).forEach((device, index) => {
            sets.push({
                where: `ebsBlockDevices[${index}].tags`,
                tags: { ...providerDefaults, ...(knownStringMap(asObject(device)?.tags) ?? {}) },
            });
        });
        return sets;
    }
    return [];
}

/**
 * What a resource launches that no tag specification reaches at all: a launch template without an
 * `instance` or a `volume` tag specification (its instances or their volumes start untagged; the
 * provider's defaultTags do not reach them, ec2/launchTemplate.d.ts), and a spot fleet's inline
 * launch specifications, whose block devices take no tags. One message per gap.
 */
export function missingNestedSets(args: { type: string; props: Obj }): string[] {
    if (args.type === "aws:ec2/launchTemplate:LaunchTemplate") {
        const types = asArray(args.props.tagSpecifications).map((entry) => known(() => asObject(entry)?.resourceType));
        if (types.includes(UNKNOWN)) {
            return [];
        }
        return ["instance", "volume"]
            .filter((t) => !types.includes(t))
            .map(
                (t) =>
                    `has no tagSpecifications entry for resourceType "${t}": the ${t === "instance" ? "instances" : "volumes"} it launches carry no tags`,
            );
    }
    if (args.type === "aws:ec2/spotFleetRequest:SpotFleetRequest") {
        return asArray(args.props.launchSpecifications).map(
            (_entry, index) =>
                `launchSpecifications[${index}]: the volumes of inline launch specifications take no tags; launch from a launch template with a "volume" tag specification`,
        );
    }
    return [];
}
