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
import { MergedTags, mergeTags, overrideWarning, resourceLabel, tagLimitProblem } from "./rules";
import { ListTagShape, listTagsToMap, mapToListTags, tagShapeOf } from "./taggable";
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
    private readonly install: pulumi.Output<Tags>;

    constructor(private readonly args: ResourceTaggerArgs) {
        this.install = pulumi.output(args.installTags).apply((install) => install.tags);
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
            const { tags, skipped } = propagatableTags(this.mergeAndWarn(consumer, install, own, retaggedBy).tags);
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
        const shape = tagShapeOf(type);
        if (!shape) {
            return undefined;
        }
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
        return { props: { ...props, tags, ...nestedVolumeTags(type, props, tags) }, opts: this.withIgnores(opts, ownKeys) };
    };

    private merged(type: string, name: string, own: pulumi.Output<Readonly<Tags>>, retaggedBy?: RetaggingOperator): pulumi.Output<Tags> {
        return pulumi.all([this.install, own]).apply(([install, resource]) => {
            const merged = this.mergeAndWarn(resourceLabel(type, name), install, resource, retaggedBy);
            const limit = tagLimitProblem(type, name, merged);
            if (limit) {
                throw new pulumi.RunError(limit);
            }
            return merged.tags;
        });
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

type TagSpecification = { resourceType?: string; tags?: Tags } & Record<string, unknown>;

/**
 * What an instance or a launch template creates beyond itself gets the merged tags too, as the
 * aws-tags pack requires (aws-required-tags, nested sets): an instance without any volume tags
 * gets `volumeTags` (@pulumi/aws ec2/instance.d.ts: it conflicts with per-device `tags`, so a
 * resource that tags its devices itself is left as it is); a launch template gets an `instance`
 * and a `volume` tag specification, its own entries keeping their tags on top (the provider's
 * defaultTags never reach them, ec2/launchTemplate.d.ts).
 */
export function nestedVolumeTags(type: string, props: Record<string, unknown>, tags: pulumi.Output<Tags>): Record<string, unknown> {
    if (type === "aws:ec2/instance:Instance") {
        const devices = [props.rootBlockDevice, ...(Array.isArray(props.ebsBlockDevices) ? props.ebsBlockDevices : [])];
        const tagsDevices = devices.some((d) => !isResolvedRecord(d ?? {}) || (d as { tags?: unknown } | undefined)?.tags !== undefined);
        return props.volumeTags !== undefined || tagsDevices ? {} : { volumeTags: tags };
    }
    if (type === "aws:ec2/launchTemplate:LaunchTemplate") {
        const declared = pulumi.output(props.tagSpecifications as pulumi.Input<TagSpecification[] | undefined>);
        return {
            tagSpecifications: pulumi.all([tags, declared]).apply(([merged, specs]) => {
                const own = specs ?? [];
                const missing = ["instance", "volume"].filter((t) => !own.some((s) => s.resourceType === t));
                return [
                    ...own.map((s) =>
                        s.resourceType === "instance" || s.resourceType === "volume" ? { ...s, tags: { ...merged, ...(s.tags ?? {}) } } : s,
                    ),
                    ...missing.map((resourceType) => ({ resourceType, tags: merged })),
                ];
            }),
        };
    }
    return {};
}
