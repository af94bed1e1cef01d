/**
 * Every tag set an AWS resource carries, as the engine shows the resource, located by the tag
 * schema derived from the providers' own SDK declarations (components/aws-tags/taggable.ts):
 *
 * - its own tags: `tags` (or the aws-native type's own `…Tags` property), with the provider's
 *   `defaultTags` where the provider applies them: `tagsAll` for @pulumi/aws (or its provider's
 *   `defaultTags` while `tagsAll` is unknown), the aws-native provider's `defaultTags` merged
 *   under the resource's own (pulumi-aws-native default_tags/merging.go: a key the resource sets
 *   wins);
 * - the tags it gives what it creates (nested sets the schema marks `tags`: launch template tag
 *   specifications, an instance's volumes, a spot fleet's instances, a global table's replicas),
 *   and the instances an Auto Scaling group launches (its items with `propagateAtLaunch`);
 * - the tag a tag resource writes onto another resource (`aws:ec2/tag:Tag`, any `<service>/tag:Tag`);
 * - the tags inside a Cloud Control resource's `desiredState` and an aws-native
 *   ExtensionResource's `properties`, located through the aws-native schema of their
 *   CloudFormation type (CloudFormation's property names: `Tags`, items `{Key, Value}`).
 *
 * What it cannot judge is returned as `unjudged` (reported as not judged, never passed in
 * silence): a template's resources, a Cloud Control type the schema does not know, a nested tag
 * set the schema does not say is resource tags, untyped tags of a shape it cannot read. Pure.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import {
    containerOf,
    LAUNCH_TEMPLATE_SPECIFICATIONS,
    nativeTokenOfCfnType,
    NestedTagSet,
    providerOf,
    ProviderName,
    TagSetSpec,
    typeTagSpec,
    TypeTagSpec,
} from "../../components/aws-tags/taggable";
import { MAX_TAGS_PER_RESOURCE, tagLimitFor } from "../../components/aws-tags/rules";
import { asArray, asObject, known, knownStringMap, Obj, Unknown, UNKNOWN } from "../shared/values";

export type TagMap = Record<string, string | Unknown>;

/** One tag set of a resource, as the policies judge it. */
export interface JudgedTagSet {
    /** How messages name it after the resource: "" for its own tags, `tagSpecifications[0].tags (instance)` for others. */
    where: string;
    /** The tags it will carry, the provider's defaults included where they reach it. */
    tags: TagMap;
    /** Its own tags (not what it gives what it creates, not a tag it writes elsewhere). */
    own: boolean;
    /** Keys that come only from the provider's default tags (or what `tagsAll` adds to `tags`). */
    providerKeys: string[];
    /** Whether the provider's default tags that reach this set are unknown (a preview): required keys wait for the update. */
    defaultsUnknown: boolean;
    /** Whether the required keys apply (not to one tag written by a tag resource). */
    requiresKeys: boolean;
    /** Whether its keys and values are judged here; not for a set drawn from another one (an Auto Scaling group's launched instances), judged there. */
    judgesText: boolean;
    /** AWS's limit on the set. */
    limit: number;
    /** The resource id a tag resource writes onto, when known (the cloud provider's keys depend on it). */
    resourceId?: string;
}

export interface ResourceTagView {
    /** The type whose rules apply (a Cloud Control resource: the aws-native type of its CloudFormation type). */
    schemaType: string;
    /** Whether the type has its own tag set (then "carries no tags" is judged on it). */
    hasOwn: boolean;
    sets: JudgedTagSet[];
    /** Tag sets that must exist and do not: what a launch template or spot fleet would launch untagged. */
    missing: string[];
    /** What the pack cannot see, one line each (reported by the advisory aws-unjudged-content). */
    unjudged: string[];
}

interface Args {
    type: string;
    props: Obj;
    provider?: PolicyProviderResource;
}

// ---------------------------------------------------------------- the provider's default tags

/** The value Pulumi gives an unknown inside JSON-encoded provider configuration. */
export const UNKNOWN_SENTINEL = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const PROVIDER_TYPES: Record<ProviderName, string> = { aws: "pulumi:providers:aws", "aws-native": "pulumi:providers:aws-native" };

/** A provider input as the analyzer receives it: objects JSON-encoded (as Pulumi passes provider configuration) or objects. */
export function providerInput(provider: PolicyProviderResource, name: string): unknown {
    const raw = known(() => provider.props[name]);
    if (typeof raw === "string") {
        if (raw.includes(UNKNOWN_SENTINEL)) {
            return UNKNOWN;
        }
        try {
            return JSON.parse(raw) as unknown;
        } catch {
            return raw;
        }
    }
    return raw;
}

export interface ProviderDefaults {
    tags: TagMap;
    /** Whether they (or one of their values) are not known yet: during a preview they may come from another resource's output. */
    unknown: boolean;
}

/**
 * The `defaultTags` of the provider that manages a resource of `provider`'s package:
 * `{tags: {...}}` for both providers (the aws-native provider also takes a plain map: pulumi-aws-native
 * provider/pkg/provider/provider.go `Configure`).
 */
export function providerDefaultTags(provider: PolicyProviderResource | undefined, of: ProviderName): ProviderDefaults {
    if (!provider || provider.type !== PROVIDER_TYPES[of]) {
        return { tags: {}, unknown: false };
    }
    const decoded = providerInput(provider, "defaultTags");
    if (decoded === UNKNOWN) {
        return { tags: {}, unknown: true };
    }
    const object = asObject(decoded);
    const tagsField = object === undefined ? undefined : known(() => object.tags);
    if (tagsField === UNKNOWN) {
        return { tags: {}, unknown: true };
    }
    const map =
        knownStringMap(tagsField) ?? (of === "aws-native" && object && !("tags" in object) ? knownStringMap(object) : undefined) ?? {};
    return { tags: map, unknown: Object.values(map).some((v) => v === UNKNOWN) };
}

// ---------------------------------------------------------------- reading paths and tag values

interface Located {
    where: string;
    value: unknown;
    /** The object holding the value (for a tag specification's `resourceType`). */
    parent: Obj | undefined;
}

/** The key a plain or proxied object holds `name` under; CloudFormation documents match names case-insensitively. */
function keyOf(object: Obj, name: string, anyCase: boolean): string {
    return anyCase ? (Object.keys(object).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name) : name;
}

function property(object: Obj, name: string, anyCase: boolean): unknown {
    const key = keyOf(object, name, anyCase);
    return known(() => object[key]);
}

/** Every value at `path` (`a[].b.tags`) below `root`, with its concrete location; UNKNOWN where a part is not known yet. */
export function valuesAt(root: Obj, path: string, anyCase = false): Located[] {
    let current: Located[] = [{ where: "", value: root, parent: undefined }];
    for (const segment of path.split(".")) {
        const list = segment.endsWith("[]");
        const name = list ? segment.slice(0, -2) : segment;
        const next: Located[] = [];
        for (const { where, value } of current) {
            const object = asObject(value);
            if (value === UNKNOWN || object === undefined) {
                continue;
            }
            const key = keyOf(object, name, anyCase);
            const found = known(() => object[key]);
            const at = where === "" ? key : `${where}.${key}`;
            if (found === undefined || found === null) {
                continue;
            }
            if (list && found !== UNKNOWN) {
                asArray(found).forEach((item, index) => next.push({ where: `${at}[${index}]`, value: known(() => item), parent: object }));
            } else {
                next.push({ where: at, value: found, parent: object });
            }
        }
        current = next;
    }
    return current;
}

type Read = { kind: "tags"; tags: TagMap } | { kind: "unknown" } | { kind: "unreadable" };

const text = (value: unknown): string | Unknown => (value === UNKNOWN ? UNKNOWN : String(value ?? ""));

/** Tags from a list of `{key, value}` items (CloudFormation's `{Key, Value}` too); an item whose key is unknown is skipped. */
function listTags(value: unknown, keyField: string, valueField: string, anyCase: boolean): Read {
    if (!Array.isArray(value)) {
        return { kind: "unreadable" };
    }
    const tags: TagMap = {};
    for (const entry of value) {
        const item = asObject(known(() => entry));
        if (!item) {
            return { kind: "unreadable" };
        }
        const key = property(item, keyField, anyCase);
        if (key !== UNKNOWN && key !== undefined) {
            tags[String(key)] = text(property(item, valueField, anyCase));
        }
    }
    return { kind: "tags", tags };
}

const SCALAR = new Set(["string", "number", "boolean"]);

/** Tags of a set of `spec`'s shape; an untyped (aws-native `any`) set is read as whichever shape it has. */
export function readTags(value: unknown, spec: Pick<TagSetSpec, "shape" | "keyField" | "valueField">, anyCase = false): Read {
    if (value === UNKNOWN) {
        return { kind: "unknown" };
    }
    if (spec.shape === "list" || (spec.shape === "any" && Array.isArray(value))) {
        return listTags(value, spec.keyField ?? "key", spec.valueField ?? "value", anyCase);
    }
    const object = Array.isArray(value) ? undefined : asObject(value);
    if (object === undefined) {
        return { kind: "unreadable" };
    }
    if (spec.shape === "any") {
        const values = Object.keys(object).map((key) => known(() => object[key]));
        if (!values.every((v) => v === UNKNOWN || SCALAR.has(typeof v))) {
            return { kind: "unreadable" };
        }
    }
    return { kind: "tags", tags: knownStringMap(object) ?? {} };
}

// ---------------------------------------------------------------- the view

const SPOT_FLEET = "aws:ec2/spotFleetRequest:SpotFleetRequest";
const SIDE_CHANNEL = /^aws:[A-Za-z0-9]+\/tag:Tag$/;
const CLOUD_CONTROL = "aws:cloudcontrol/resource:Resource";
const EXTENSION = "aws-native:index:ExtensionResource";

/** The effective tags of a set: the defaults that reach it, the set's own keys winning. */
function withDefaults(tags: TagMap, defaults: TagMap): TagMap {
    return { ...defaults, ...tags };
}

/** A tag resource's one tag: judged for keys and text like any other, onto the resource it names. */
function sideChannelSet(args: Args): JudgedTagSet | undefined {
    const tag = args.type === "aws:autoscaling/tag:Tag" ? (asObject(known(() => args.props.tag)) ?? {}) : args.props;
    const key = known(() => tag.key);
    if (key === UNKNOWN || key === undefined) {
        return undefined;
    }
    const resourceId = known(() => args.props.resourceId);
    return {
        where: "",
        tags: { [String(key)]: text(known(() => tag.value)) },
        own: false,
        providerKeys: [],
        defaultsUnknown: false,
        requiresKeys: false,
        judgesText: true,
        limit: MAX_TAGS_PER_RESOURCE,
        ...(typeof resourceId === "string" ? { resourceId } : {}),
    };
}

/** The provider defaults that reach a set of `spec`. */
function defaultsFor(spec: TagSetSpec, defaults: ProviderDefaults): ProviderDefaults {
    return spec.defaults ? defaults : { tags: {}, unknown: false };
}

interface Source {
    /** What the schema says about the type. */
    spec: TypeTagSpec;
    /** The object the spec's paths start from: the resource's inputs, or a desired state / properties document. */
    root: Obj;
    /** CloudFormation property names (a document), matched in any case. */
    anyCase: boolean;
    /** The provider's defaults for the type's package (none for a Cloud Control document). */
    defaults: ProviderDefaults;
    /** For @pulumi/aws own map tags: `tagsAll` (UNKNOWN while the provider computes it; undefined without one). */
    tagsAll?: TagMap | Unknown;
    /** How messages name the place the paths start from (`desiredState.`). */
    prefix: string;
}

/** The tag sets of a document or the resource's inputs, following the schema of its type. */
function setsOf(type: string, source: Source, unjudged: string[], missing: string[]): JudgedTagSet[] {
    const sets: JudgedTagSet[] = [];
    const { spec, root, anyCase, prefix } = source;
    const own = spec.own;
    if (own) {
        const located = valuesAt(root, own.path, anyCase)[0];
        // Unknown as a whole: read plainly, so the engine reports the policy as unable to run during the preview.
        const read: Read =
            located === undefined
                ? { kind: "tags", tags: {} }
                : located.value === UNKNOWN && !anyCase
                  ? plain(root, own.path)
                  : readTags(located.value, own, anyCase);
        if (read.kind === "unreadable") {
            unjudged.push(`its ${prefix}${own.path} is not a tag ${own.shape === "list" ? "list" : "map"} the pack can read`);
        } else if (read.kind === "tags") {
            const defaults = defaultsFor(own, source.defaults);
            const base = source.tagsAll !== undefined && source.tagsAll !== UNKNOWN ? source.tagsAll : defaults.tags;
            sets.push({
                where: "",
                tags: withDefaults(read.tags, own.defaults ? base : {}),
                own: true,
                providerKeys: own.defaults ? Object.keys(base).filter((k) => !(k in read.tags)) : [],
                defaultsUnknown: own.defaults && defaults.unknown && (source.tagsAll === undefined || source.tagsAll === UNKNOWN),
                requiresKeys: true,
                judgesText: true,
                limit: tagLimitFor(type),
            });
            // Auto Scaling groups (both providers): the items with propagateAtLaunch also tag the instances it launches.
            if (own.shape === "list" && "propagateAtLaunch" in { ...own.requiredFields, ...own.optionalFields }) {
                sets.push(launchedInstances(located?.value));
            }
        }
    }
    const nested = spec.nested ?? [];
    const volumes = nested.some((n) => n.path === "volumeTags");
    for (const set of nested) {
        if (set.role === "selects" || (volumes && isVolumeSet(set))) {
            continue;
        }
        for (const located of valuesAt(root, set.path, anyCase)) {
            const read = readTags(located.value, set, anyCase);
            if (read.kind !== "tags") {
                if (read.kind === "unreadable") {
                    unjudged.push(`its ${prefix}${located.where} is not a tag ${set.shape === "list" ? "list" : "map"} the pack can read`);
                }
                continue;
            }
            if (set.role === "unclassified") {
                if (Object.keys(read.tags).length > 0) {
                    unjudged.push(
                        `its ${prefix}${located.where} holds tags the schema does not say are the tags of a resource it creates ("${set.doc || "no description"}")`,
                    );
                }
                continue;
            }
            const resourceType = located.parent ? property(located.parent, "resourceType", anyCase) : undefined;
            const defaults = defaultsFor(set, source.defaults);
            sets.push(
                nestedSet(`${prefix}${located.where}${typeof resourceType === "string" ? ` (${resourceType})` : ""}`, read.tags, defaults),
            );
        }
    }
    if (volumes) {
        sets.push(...volumeSets(root, source.defaults));
    }
    const template = LAUNCH_TEMPLATE_SPECIFICATIONS[type];
    if (template) {
        missing.push(...missingSpecifications(root, template, anyCase, prefix));
    }
    if (type === SPOT_FLEET) {
        asArray(known(() => root.launchSpecifications)).forEach((_entry, index) =>
            missing.push(
                `launchSpecifications[${index}]: the volumes of inline launch specifications take no tags; launch from a launch template with a "volume" tag specification`,
            ),
        );
    }
    return sets;
}

function nestedSet(where: string, tags: TagMap, defaults: ProviderDefaults): JudgedTagSet {
    return {
        where,
        tags: withDefaults(tags, defaults.tags),
        own: false,
        providerKeys: Object.keys(defaults.tags).filter((k) => !(k in tags)),
        defaultsUnknown: defaults.unknown,
        requiresKeys: true,
        judgesText: true,
        limit: MAX_TAGS_PER_RESOURCE,
    };
}

/** Reads `path` without catching an unknown: the SDK's proxy then throws, and the engine reports the policy as unable to run yet. */
function plain(root: Obj, path: string): Read {
    const value = path.split(".").reduce<unknown>((object, name) => (asObject(object) ?? {})[name], root);
    return { kind: "tags", tags: knownStringMap(value) ?? {} };
}

/** The instances an Auto Scaling group launches carry the items with `propagateAtLaunch` (@pulumi/aws autoscaling/group.d.ts). */
function launchedInstances(items: unknown): JudgedTagSet {
    const tags: TagMap = {};
    for (const entry of asArray(items)) {
        const item = asObject(known(() => entry)) ?? {};
        const key = known(() => item.key);
        const flag = known(() => item.propagateAtLaunch);
        if (typeof key === "string" && (flag === true || flag === UNKNOWN)) {
            tags[key] = text(known(() => item.value));
        }
    }
    return { ...nestedSet("instances (tags with propagateAtLaunch)", tags, { tags: {}, unknown: false }), judgesText: false };
}

function isVolumeSet(set: NestedTagSet): boolean {
    return set.path === "volumeTags" || set.path === "rootBlockDevice.tags" || set.path === "ebsBlockDevices[].tags";
}

/**
 * An instance's (or spot instance request's) volumes: `volumeTags`, or each device's `tags` (they
 * conflict). The provider's default tags reach them either way ("default tags — applied to the
 * instance and to those volumes", @pulumi/aws ec2/instance.d.ts). Without either, the root volume
 * is judged with no tags of its own.
 */
function volumeSets(root: Obj, defaults: ProviderDefaults): JudgedTagSet[] {
    const volumeTags = known(() => root.volumeTags);
    if (volumeTags !== undefined && volumeTags !== UNKNOWN) {
        return [nestedSet("volumes (volumeTags)", knownStringMap(volumeTags) ?? {}, defaults)];
    }
    if (volumeTags === UNKNOWN) {
        return [];
    }
    const rootDevice = asObject(known(() => root.rootBlockDevice));
    const sets = [nestedSet("root volume (rootBlockDevice.tags)", knownStringMap(known(() => rootDevice?.tags)) ?? {}, defaults)];
    for (const device of valuesAt(root, "ebsBlockDevices[]")) {
        sets.push(nestedSet(`${device.where}.tags`, knownStringMap(known(() => asObject(device.value)?.tags)) ?? {}, defaults));
    }
    return sets;
}

/** A launch template without an `instance` or a `volume` tag specification launches them untagged. */
function missingSpecifications(root: Obj, path: string, anyCase: boolean, prefix: string): string[] {
    const types = valuesAt(root, `${path}[]`, anyCase).map((entry) => {
        const object = asObject(entry.value);
        return object === undefined ? UNKNOWN : property(object, "resourceType", anyCase);
    });
    if (types.includes(UNKNOWN)) {
        return [];
    }
    const name = `${prefix}${path}`;
    return ["instance", "volume"]
        .filter((t) => !types.includes(t))
        .map(
            (t) =>
                `has no ${name} entry for resourceType "${t}": the ${t === "instance" ? "instances" : "volumes"} it launches carry no tags`,
        );
}

/** A CloudFormation document (Cloud Control's `desiredState`, a JSON string; an extension's `properties`). */
function document(value: unknown): Obj | Unknown | undefined {
    if (value === UNKNOWN) {
        return UNKNOWN;
    }
    if (typeof value === "string") {
        try {
            return asObject(JSON.parse(value));
        } catch {
            return undefined;
        }
    }
    return asObject(value);
}

/**
 * A Cloud Control resource or an aws-native extension: the tags inside its document, by the
 * aws-native schema of its CloudFormation type; an extension of a type the schema does not know is
 * read through the `tagsProperty`/`tagsStyle` it declares (pulumi-aws-native
 * provider/pkg/resources/extension_resource.go).
 */
function documentView(args: Args): ResourceTagView {
    const cloudControl = args.type === CLOUD_CONTROL;
    const cfnType = known(() => (cloudControl ? args.props.typeName : args.props.type));
    const content = document(known(() => (cloudControl ? args.props.desiredState : args.props.properties)));
    const field = cloudControl ? "desiredState" : "properties";
    const view: ResourceTagView = { schemaType: args.type, hasOwn: false, sets: [], missing: [], unjudged: [] };
    if (cfnType === UNKNOWN || content === UNKNOWN) {
        return view;
    }
    if (content === undefined) {
        view.unjudged.push(`its ${field} is not a JSON object the pack can read`);
        return view;
    }
    const token = typeof cfnType === "string" ? nativeTokenOfCfnType(cfnType) : undefined;
    const defaults = cloudControl ? { tags: {}, unknown: false } : providerDefaultTags(args.provider, "aws-native");
    let spec = token === undefined ? undefined : typeTagSpec(token);
    if (token === undefined && !cloudControl) {
        // A third-party extension: its declared tags property, merged with the provider's defaults as the provider does.
        const tagsProperty = known(() => args.props.tagsProperty);
        const style = known(() => args.props.tagsStyle);
        if (typeof tagsProperty === "string" && tagsProperty !== "") {
            spec = {
                own: {
                    path: tagsProperty,
                    shape: style === "stringMap" ? "map" : "list",
                    keyField: "Key",
                    valueField: "Value",
                    defaults: style !== "none",
                },
            };
        }
    }
    if (token === undefined && spec === undefined) {
        view.unjudged.push(
            `its CloudFormation type ${JSON.stringify(cfnType)} is not in the aws-native schema, so the tags in its ${field} cannot be located`,
        );
        return view;
    }
    if (spec === undefined) {
        return { ...view, schemaType: token as string };
    }
    view.schemaType = token ?? args.type;
    view.hasOwn = spec.own !== undefined;
    view.sets = setsOf(
        view.schemaType,
        { spec, root: content, anyCase: true, defaults, prefix: `${field}.`, tagsAll: undefined },
        view.unjudged,
        view.missing,
    );
    return view;
}

/**
 * Every tag set of a resource, or undefined for resources that carry none (untaggable types, non-AWS
 * types, types the schema does not know: those are aws-unjudged-types' and aws-unjudged-content's).
 */
export function resourceTagView(args: Args): ResourceTagView | undefined {
    const provider = providerOf(args.type);
    if (provider === undefined) {
        return undefined;
    }
    if (SIDE_CHANNEL.test(args.type)) {
        const set = sideChannelSet(args);
        return set ? { schemaType: args.type, hasOwn: false, sets: [set], missing: [], unjudged: [] } : undefined;
    }
    if (args.type === CLOUD_CONTROL || args.type === EXTENSION) {
        return documentView(args);
    }
    const spec = typeTagSpec(args.type);
    const container = containerOf(args.type);
    if (!spec && !container) {
        return undefined;
    }
    const view: ResourceTagView = { schemaType: args.type, hasOwn: spec?.own !== undefined, sets: [], missing: [], unjudged: [] };
    if (container === "cloudformation-template") {
        view.unjudged.push("the resources its template declares are not judged: the pack cannot see their tags");
    }
    if (spec) {
        const tagsAll = provider === "aws" && spec.own?.shape === "map" ? known(() => args.props.tagsAll) : undefined;
        view.sets = setsOf(
            args.type,
            {
                spec,
                root: args.props,
                anyCase: false,
                defaults: providerDefaultTags(args.provider, provider),
                tagsAll: tagsAll === UNKNOWN ? UNKNOWN : tagsAll === undefined ? undefined : (knownStringMap(tagsAll) ?? {}),
                prefix: "",
            },
            view.unjudged,
            view.missing,
        );
    }
    return view;
}
