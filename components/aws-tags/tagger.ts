/**
 * Puts the merged tags into the create inputs of AWS resources, so AWS applies them
 * atomically at creation (seed 004), and keeps released keys unmanaged (`ignoreChanges`).
 *
 * Two paths, one merge:
 * - components pass `tagger.tagsFor(type, name, ownTags)` as a resource's `tags` argument
 *   (explicit, visible in every preview and under mocks);
 * - `tagger.transformation`, a legacy `transformations` entry (it runs under Pulumi's mocks
 *   and for real, unlike `registerResourceTransform`), is the safety net: any taggable
 *   resource created below the component, and anywhere in the stack after it (index.ts
 *   registers it with `registerStackTransformation`), that did not get its tags from `tagsFor`
 *   gets them merged in, with its own `tags` as the highest layer.
 *
 * Provider `defaultTags` are deliberately not used: mocks ignore them (a render could not show
 * them), keys set both as default and resource tags give perpetual `tags`/`tagsAll` diffs, the
 * resource layer could not win per key with a warning, and list-shaped tags (Auto Scaling
 * groups) never receive them.
 */
import * as pulumi from "@pulumi/pulumi";
import { propagatableTags } from "./consumers";
import { releasedTagIgnores } from "./day2";
import { InstallTags } from "./install-tags";
import { pinToOperator, RetaggingOperator } from "./retagging";
import { MergedTags, mergeTags, overrideWarning, resourceLabel, tagLimitProblem, tagSetProblems } from "./rules";
import {
    LAUNCH_TEMPLATE_SPECIFICATIONS,
    ListTagShape,
    listTagsToMap,
    mapToListTags,
    NestedTagSet,
    TagShape,
    tagShapeOf,
    typeTagSpec,
    TypeTagSpec,
} from "./taggable";
import { isResolvedRecord } from "../shared/resolved-records";

export interface ResourceTaggerArgs {
    /** `aws.userTags`. */
    readonly userTags: Readonly<Record<string, string>>;
    /** The install-time tags (empty when there are none or they could not be read). */
    readonly installTags: pulumi.Input<InstallTags>;
    /** Keys released from `aws.userTags` and install-time keys applied before (see day2.ts): left on resources, never changed by the stack. */
    readonly releasedKeys: readonly string[];
}

type Tags = Record<string, string>;

export class ResourceTagger {
    /** The `tags` Outputs this tagger made, and the keys each resource declared itself. */
    private readonly made = new WeakMap<object, readonly string[]>();
    private readonly install: pulumi.Output<InstallTags>;

    constructor(private readonly args: ResourceTaggerArgs) {
        this.install = pulumi.output(args.installTags);
    }

    /**
     * Tags for what an in-cluster consumer (`consumer`, named in messages) creates: install-time
     * tags, then `aws.userTags`, then the consumer's own. Overrides warn as for resources; tags
     * the consumers' `key=value` formats cannot carry are left out with a warning (the config
     * rules refuse such user tags, so only install-time ones can be). `retaggedBy`: the operator
     * that re-applies the install-time tags to what the consumer creates (see retagging.ts).
     */
    consumerTagsFor(consumer: string, own: Readonly<Tags> = {}, retaggedBy?: RetaggingOperator): pulumi.Output<Tags> {
        return this.install.apply((install) => {
            const { tags, skipped } = propagatableTags(this.mergeAndWarn(consumer, install.tags, own, retaggedBy).tags);
            for (const reason of skipped) {
                pulumi.log.warn(`${consumer}: tag left out: ${reason}`);
            }
            return tags;
        });
    }

    /**
     * The `tags` argument for a resource of `type` named `name`: install-time tags, then
     * `aws.userTags`, then `ownTags`. Warns once for every key a higher layer overrides and
     * fails when the result exceeds the type's tag limit, naming the resource. `retaggedBy`: the
     * operator that re-applies the install-time tags to this resource (see retagging.ts).
     */
    tagsFor(type: string, name: string, ownTags: Readonly<Tags> = {}, retaggedBy?: RetaggingOperator): pulumi.Output<Tags> {
        const tags = this.merged(type, name, pulumi.output(ownTags), retaggedBy);
        this.made.set(tags, Object.keys(ownTags));
        return tags;
    }

    /** `ignoreChanges` entries that keep released keys unmanaged on a map-tagged resource. */
    ignoresFor(ownKeys: Iterable<string> = []): string[] {
        return releasedTagIgnores(this.args.releasedKeys, ownKeys);
    }

    /** The safety net; see the module comment. Bound, so it can be passed around as a value. */
    readonly transformation: pulumi.ResourceTransformation = ({ type, name, props, opts }) => {
        const spec = typeTagSpec(type);
        if (!spec) {
            return undefined;
        }
        refuseDeclaredSets(type, name, props, spec);
        const shape = tagShapeOf(type);
        const own = shape ? this.ownTags(type, name, shape, props, opts) : { props, opts };
        if (own === undefined) {
            return undefined;
        }
        const nested = this.nestedTags(type, name, own.props, spec);
        const volumes = "tags" in own && own.tags ? volumeTagsFor(type, props, own.tags) : {};
        if (nested === own.props && own.props === props && own.opts === opts && Object.keys(volumes).length === 0) {
            return undefined;
        }
        return { props: { ...nested, ...volumes }, opts: own.opts };
    };

    /** The resource's own tags merged (map or list), or undefined when `tagsFor` or this transformation already did. */
    private ownTags(
        type: string,
        name: string,
        shape: TagShape,
        props: pulumi.Inputs,
        opts: pulumi.CustomResourceOptions,
    ): { props: pulumi.Inputs; opts: pulumi.CustomResourceOptions; tags?: pulumi.Output<Tags> } | undefined {
        const made = this.made.get(props.tags);
        if (made) {
            // Tagged already, by tagsFor or by this transformation at another level.
            return shape.kind === "map" ? { props, opts: this.withIgnores(opts, made) } : undefined;
        }
        if (shape.kind === "list") {
            if (this.args.releasedKeys.length > 0) {
                pulumi.log.warn(
                    `${resourceLabel(type, name)}: its tags are a list, so the released keys ${this.args.releasedKeys.map((k) => JSON.stringify(k)).join(", ")} cannot be left unmanaged one by one; pulumi up removes them from it`,
                );
            }
            const tags = this.mergedList(type, name, shape, props.tags);
            this.made.set(tags, []);
            return { props: { ...props, tags }, opts };
        }
        const own = pulumi.output(props.tags as pulumi.Input<Tags | undefined>).apply((t) => t ?? {});
        const ownKeys = isResolvedRecord(props.tags) ? Object.keys(props.tags) : [];
        const tags = this.merged(type, name, own);
        this.made.set(tags, ownKeys);
        return { props: { ...props, tags }, opts: this.withIgnores(opts, ownKeys), tags };
    }

    /**
     * The tag sets a resource gives what it creates (the schema's nested sets that tag: tag
     * specifications, devices, replicas, a compute environment's instances), each the install-time
     * tags and `aws.userTags` with the set's own on top, as the aws-tags pack requires them
     * (aws-required-tags judges every such set the resource declares). A set the resource does not
     * declare is left out, as the pack leaves it; a launch template gets an `instance` and a
     * `volume` tag specification first (the provider's defaultTags never reach them).
     */
    private nestedTags(type: string, name: string, props: pulumi.Inputs, spec: TypeTagSpec): pulumi.Inputs {
        const sets = (spec.nested ?? []).filter((set) => set.role === "tags");
        const withSpecifications = launchTemplateSpecifications(type, props);
        if (sets.length === 0) {
            return withSpecifications;
        }
        const label = resourceLabel(type, name);
        const byTop = new Map<string, NestedTagSet[]>();
        for (const set of sets) {
            const top = set.path.split(".")[0].replace(/\[\]$/, "");
            byTop.set(top, [...(byTop.get(top) ?? []), set]);
        }
        const out: pulumi.Inputs = { ...withSpecifications };
        for (const [top, ofTop] of byTop) {
            if (out[top] === undefined) {
                continue;
            }
            out[top] = pulumi.all([this.install, out[top]]).apply(([install, value]) => {
                const merge = (where: string, own: Tags) =>
                    this.checked(type, `${label} ${where}`, this.mergeAndWarn(`${label} ${where}`, install.tags, own).tags);
                return ofTop.reduce<unknown>(
                    (current, set) => (fillTagSet({ [top]: current }, set.path.split("."), "", set, merge) as Record<string, unknown>)[top],
                    value,
                );
            });
        }
        return out;
    }

    private merged(type: string, name: string, own: pulumi.Output<Readonly<Tags>>, retaggedBy?: RetaggingOperator): pulumi.Output<Tags> {
        return pulumi.all([this.install, own]).apply(([install, resource]) => {
            const merged = this.mergeAndWarn(resourceLabel(type, name), install.tags, resource, retaggedBy);
            const limit = tagLimitProblem(type, name, merged);
            if (limit) {
                throw new pulumi.RunError(limit);
            }
            return this.checked(type, resourceLabel(type, name), merged.tags);
        });
    }

    /**
     * The rules every tag set passes (reserved and ownership keys, AWS's characters and lengths, the
     * limit: rules.ts `tagSetProblems`, as the aws-tags pack judges them; the cloud provider's
     * cluster key is left to the pack, which knows every id of the cluster); a resource breaking
     * them fails the update, naming it.
     */
    private checked(type: string, label: string, tags: Tags): Tags {
        const problems = tagSetProblems({ type }, tags, { clusterIds: [], anyClusterId: true });
        if (problems.length > 0) {
            throw new pulumi.RunError(`${label}: ${problems.join("; ")}`);
        }
        return tags;
    }

    /**
     * The three layers merged for `label`, with one warning per override (the seed's "event");
     * on what `retaggedBy` re-tags, the install-time values pinned (one warning per key whose
     * merged value the operator would revert, instead of the override's).
     */
    private mergeAndWarn(label: string, install: Readonly<Tags>, own: Readonly<Tags>, retaggedBy?: RetaggingOperator): MergedTags {
        const merged = mergeTags({ install, config: this.args.userTags, resource: own });
        const pinned = retaggedBy ? pinToOperator(label, merged, install, retaggedBy) : { tags: merged.tags, warnings: [] };
        for (const override of merged.overrides.filter((o) => !(retaggedBy && o.key in install))) {
            pulumi.log.warn(overrideWarning(label, override));
        }
        for (const warning of pinned.warnings) {
            pulumi.log.warn(warning);
        }
        return { ...merged, tags: pinned.tags };
    }

    private mergedList(type: string, name: string, shape: ListTagShape, declared: unknown): pulumi.Output<Record<string, unknown>[]> {
        const items = pulumi.output(declared as pulumi.Input<Record<string, unknown>[] | undefined>).apply((i) => i ?? []);
        const own = items.apply((i) => listTagsToMap(i, shape));
        return pulumi.all([this.merged(type, name, own), items]).apply(([tags, existing]) => mapToListTags(tags, shape, existing));
    }

    private withIgnores(opts: pulumi.CustomResourceOptions, ownKeys: readonly string[]): pulumi.CustomResourceOptions {
        const ignores = this.ignoresFor(ownKeys);
        if (ignores.length === 0) {
            return opts;
        }
        return { ...opts, ignoreChanges: [...new Set([...(opts.ignoreChanges ?? []), ...ignores])] };
    }
}

/**
 * The tag sets a resource declares with known values (its own and every nested set that tags),
 * judged by the rules before anything is merged: a resource that hands itself to another cluster's
 * destroy, or breaks AWS's key rules, fails at its declaration, naming it, every problem at once.
 * Sets given as Outputs are judged when they resolve (`checked`, after the merge).
 */
function refuseDeclaredSets(type: string, name: string, props: pulumi.Inputs, spec: TypeTagSpec): void {
    const problems: string[] = [];
    const sets = [
        ...(spec.own ? [{ ...spec.own, role: "tags" as const, doc: "" }] : []),
        ...(spec.nested ?? []).filter((set) => set.role === "tags"),
    ];
    for (const set of sets) {
        fillTagSet(props, set.path.split("."), "", set, (where, own) => {
            const at = set === sets[0] && spec.own ? "" : ` ${where}`;
            problems.push(
                ...tagSetProblems({ type }, own, { clusterIds: [], anyClusterId: true }, Infinity).map(
                    (problem) => `${resourceLabel(type, name)}${at}: ${problem}`,
                ),
            );
            return own;
        });
    }
    if (problems.length > 0) {
        throw new pulumi.RunError(problems.join("\n"));
    }
}

/**
 * An instance's volumes (types whose schema has `volumeTags`: instances, spot instance requests)
 * get the merged tags as `volumeTags` when the resource tags neither its volumes nor its devices
 * (@pulumi/aws ec2/instance.d.ts: `volumeTags` conflicts with per-device `tags`; devices that
 * declare tags get them merged as every nested set does).
 */
export function volumeTagsFor(type: string, props: Record<string, unknown>, tags: pulumi.Output<Tags>): Record<string, unknown> {
    if (!typeTagSpec(type)?.nested?.some((set) => set.path === "volumeTags")) {
        return {};
    }
    const devices = [props.rootBlockDevice, ...(Array.isArray(props.ebsBlockDevices) ? props.ebsBlockDevices : [])];
    const tagsDevices = devices.some((d) => !isResolvedRecord(d ?? {}) || (d as { tags?: unknown } | undefined)?.tags !== undefined);
    return props.volumeTags !== undefined || tagsDevices ? {} : { volumeTags: tags };
}

type TagSpecification = { resourceType?: string; tags?: unknown } & Record<string, unknown>;

/**
 * A launch template's tag specifications with an `instance` and a `volume` entry (empty tags,
 * merged afterwards as every nested set is): what it launches is tagged only through them.
 */
function launchTemplateSpecifications(type: string, props: pulumi.Inputs): pulumi.Inputs {
    const path = LAUNCH_TEMPLATE_SPECIFICATIONS[type];
    if (path === undefined) {
        return props;
    }
    const [top, ...rest] = path.split(".");
    if (rest.length > 0 && props[top] === undefined) {
        return props;
    }
    const completed = pulumi.output(props[top] as pulumi.Input<Record<string, unknown> | TagSpecification[] | undefined>).apply((value) => {
        // Empty tags in the shape the schema gives the specification's tags: a map (@pulumi/aws), {key, value} items (aws-native).
        const list = typeTagSpec(type)?.nested?.find((set) => set.path === `${path}[].tags`)?.shape === "list";
        const complete = (specs: unknown) => {
            const own = (Array.isArray(specs) ? specs : []) as TagSpecification[];
            const missing = ["instance", "volume"].filter((t) => !own.some((s) => s.resourceType === t));
            return [...own, ...missing.map((resourceType) => ({ resourceType, tags: list ? [] : {} }))];
        };
        if (rest.length === 0) {
            return complete(value);
        }
        const data = (isResolvedRecord(value) ? value : {}) as Record<string, unknown>;
        return { ...data, [rest[0]]: complete(data[rest[0]]) };
    });
    return { ...props, [top]: completed };
}

/**
 * `object` with the tag set at `segments` (a nested set's path from `object`) merged wherever the
 * resource declares it: a map with `merge`'s result, a list of items written back as items. What
 * is not declared is left out, as the pack leaves it.
 */
function fillTagSet(
    object: unknown,
    segments: readonly string[],
    where: string,
    set: NestedTagSet,
    merge: (where: string, own: Tags) => Tags,
): unknown {
    if (!isResolvedRecord(object)) {
        return object;
    }
    const [segment, ...rest] = segments;
    const list = segment.endsWith("[]");
    const name = list ? segment.slice(0, -2) : segment;
    const value = (object as Record<string, unknown>)[name];
    if (value === undefined || value === null) {
        return object;
    }
    const at = where === "" ? name : `${where}.${name}`;
    if (rest.length === 0) {
        return { ...object, [name]: mergedSet(value, set, at, merge) };
    }
    if (list) {
        return Array.isArray(value)
            ? { ...object, [name]: value.map((item, index) => fillTagSet(item, rest, `${at}[${index}]`, set, merge)) }
            : object;
    }
    return { ...object, [name]: fillTagSet(value, rest, at, set, merge) };
}

function mergedSet(value: unknown, set: NestedTagSet, where: string, merge: (where: string, own: Tags) => Tags): unknown {
    if (set.shape === "list" && Array.isArray(value)) {
        const shape = {
            itemType: set.itemType ?? "",
            keyField: set.keyField ?? "key",
            valueField: set.valueField ?? "value",
            requiredFields: set.requiredFields ?? {},
        };
        return mapToListTags(
            merge(where, listTagsToMap(value as Record<string, unknown>[], shape)),
            shape,
            value as Record<string, unknown>[],
        );
    }
    return set.shape !== "list" && isResolvedRecord(value) ? merge(where, value as Tags) : value;
}
