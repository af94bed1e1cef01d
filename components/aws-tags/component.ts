import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { platformLabels } from "../shared/labels";
import { EBS_CSI_PROVISIONER, ebsTagParameters } from "./consumers";
import { nextTagKeyState, TagKeyState } from "./day2";
import { INFRASTRUCTURE_API_VERSION, INFRASTRUCTURE_KIND, INFRASTRUCTURE_NAME, InstallTags, installTagsFromInfrastructure } from "./install-tags";
import { loadBalancerTagTransformation } from "./load-balancers";
import { ImageRegistryStorage } from "./registry-storage";
import { ResourceTagger } from "./tagger";
import { WebhookImageRepository } from "./webhook-repository";

/** The StorageClass whose volumes carry the user tags when propagation is on. */
export const TAGGED_STORAGE_CLASS = "gp3-csi-tagged";

export interface AwsTagsArgs {
    /** The cluster: on OpenShift the install-time tags are read from it, when it can be read (`live`). */
    cluster: ClusterTarget;
    /** AWS region of the assets. */
    region: string;
    /** `aws.userTags`, validated. */
    userTags: Record<string, string>;
    /** Whether what in-cluster consumers create (EBS volumes, load balancers) gets the tags too. */
    propagate: boolean;
    /** The tag key state the previous update recorded (see day2.ts); empty on the first update. */
    previousTagKeys: TagKeyState;
    /** The cluster's IAM OIDC provider, for the image registry role's trust (STS clusters). */
    oidcProviderArn?: string;
}

/**
 * User-defined tags on every AWS resource (seed 004), and the AWS assets this stack creates.
 * Reads the install-time tags (OpenShift), merges them with `aws.userTags` and each resource's
 * own tags into every taggable resource's create inputs (`ResourceTagger`), creates the
 * webhook image repository and the image registry storage, and, with propagation on, the
 * tagged EBS StorageClass and the load balancer annotation transformation. Children inherit
 * the `aws` and `kubernetes` providers given in `opts.providers`.
 */
export class AwsTags extends pulumi.ComponentResource {
    /** The merge and the safety-net transformation; index.ts registers the latter for the whole stack. */
    readonly tagger: ResourceTagger;
    /** This update's tag key state: exported as a stack output, read back by the next update. */
    readonly tagKeys: TagKeyState;
    readonly webhookRepositoryUrl: pulumi.Output<string>;
    readonly registryStorage: ImageRegistryStorage;
    /** Name of the tagged EBS StorageClass (propagation on), else undefined. */
    readonly storageClassName?: string;
    /** Annotates LoadBalancer Services with the tags (propagation on), else undefined. */
    readonly loadBalancerTransformation?: pulumi.ResourceTransformation;

    constructor(name: string, args: AwsTagsArgs, opts?: pulumi.ComponentResourceOptions) {
        // The transformation is created with the tagger, after the cluster read below; children
        // constructed before it (the read itself) take no tags.
        const late: { tagger?: ResourceTagger } = {};
        super("cluster-platform:aws-tags:AwsTags", name, {}, {
            ...opts,
            transformations: [...(opts?.transformations ?? []), (a) => late.tagger?.transformation(a)],
        });

        this.tagKeys = nextTagKeyState(args.previousTagKeys, Object.keys(args.userTags));
        const tagger = new ResourceTagger({
            userTags: args.userTags,
            installTags: this.readInstallTags(name, args.cluster),
            releasedKeys: this.tagKeys.released,
        });
        this.tagger = late.tagger = tagger;

        this.webhookRepositoryUrl = new WebhookImageRepository(`${name}-webhook-image`, { clusterName: args.cluster.name, tagger }, { parent: this })
            .repositoryUrl;
        this.registryStorage = new ImageRegistryStorage(
            `${name}-image-registry`,
            { clusterName: args.cluster.name, region: args.region, tagger, oidcProviderArn: args.oidcProviderArn },
            { parent: this },
        );

        if (args.propagate) {
            new k8s.storage.v1.StorageClass(
                `${name}-${TAGGED_STORAGE_CLASS}`,
                {
                    metadata: { name: TAGGED_STORAGE_CLASS, labels: platformLabels("aws-tags") },
                    provisioner: EBS_CSI_PROVISIONER,
                    parameters: tagger
                        .consumerTagsFor(`StorageClass ${JSON.stringify(TAGGED_STORAGE_CLASS)}`)
                        .apply((tags) => ({ type: "gp3", encrypted: "true", "csi.storage.k8s.io/fstype": "ext4", ...ebsTagParameters(tags) })),
                    reclaimPolicy: "Delete",
                    volumeBindingMode: "WaitForFirstConsumer",
                    allowVolumeExpansion: true,
                },
                // A StorageClass's parameters cannot be updated: a tag change replaces it, under
                // the same name, so the old one goes first. Bound volumes do not depend on it.
                { parent: this, deleteBeforeReplace: true },
            );
            this.storageClassName = TAGGED_STORAGE_CLASS;
            this.loadBalancerTransformation = loadBalancerTagTransformation((service, own) => tagger.consumerTagsFor(service, own));
        }

        this.registerOutputs({
            tagKeys: this.tagKeys,
            webhookRepositoryUrl: this.webhookRepositoryUrl,
            registryBucket: this.registryStorage.bucketName,
            storageClassName: this.storageClassName,
        });
    }

    /**
     * Reads `Infrastructure/cluster` on OpenShift (never writes it). A read through the
     * constructor with an `id` is what `CustomResource.get` does, but registers `status` as an
     * output (`get` registers only apiVersion and kind).
     */
    private readInstallTags(name: string, cluster: ClusterTarget): pulumi.Input<InstallTags> {
        const none: InstallTags = { tags: {}, notes: [], problems: [] };
        if (cluster.platform !== "openshift") {
            return none;
        }
        if (!cluster.live) {
            pulumi.log.warn(
                `${skippedWithoutCluster(`reading the install-time tags (Infrastructure/${INFRASTRUCTURE_NAME} status.platformStatus.aws.resourceTags)`)}; AWS resources get aws.userTags and their own tags only`,
                this,
            );
            return none;
        }
        const infrastructure = new k8s.apiextensions.CustomResource(
            `${name}-infrastructure`,
            { apiVersion: INFRASTRUCTURE_API_VERSION, kind: INFRASTRUCTURE_KIND, metadata: undefined, status: undefined },
            { parent: this, id: INFRASTRUCTURE_NAME },
        );
        const status = (infrastructure as unknown as { status: pulumi.Output<unknown> }).status;
        return status.apply((s) => {
            const install = installTagsFromInfrastructure({ status: s });
            for (const note of install.notes) {
                pulumi.log.warn(note, this);
            }
            return install;
        });
    }
}
