import * as pulumi from "@pulumi/pulumi";

/**
 * What the asset components need from the tagging room: the merged tags for one resource's
 * create inputs (`ResourceTagger.tagsFor` in components/aws-tags/tagger.ts satisfies it). Stated
 * here, structurally, so the assets depend on no module of the tagging room.
 */
export interface AssetTagger {
    /** `retaggedBy`: the OpenShift operator that re-applies the install-time tags to this resource (aws-tags/retagging.ts). */
    tagsFor(
        type: string,
        name: string,
        ownTags?: Readonly<Record<string, string>>,
        retaggedBy?: "registryBucket",
    ): pulumi.Output<Record<string, string>>;
}

/** What every component creating tagged AWS assets takes. */
export interface TaggedAssetArgs {
    /** Cluster name: every physical name derives from it. */
    readonly clusterName: string;
    /** Puts the merged tags into each taggable resource's create inputs. */
    readonly tagger: AssetTagger;
}
