import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { platformLabels } from "../shared/labels";
import { AwsAssetPlan, ImageRegistryStorage, RegistryTrust, WebhookImageRepository } from "../aws-assets";
import { EBS_CSI_PROVISIONER, ebsTagParameters } from "./consumers";
import { nextInstallTagKeys, nextTagKeyState, TagKeyState, unmanagedTagKeys } from "./day2";
import {
    day2LimitProblem,
    day2TagsField,
    day2UnreachedWarning,
    INFRASTRUCTURE_CRD,
    infrastructureTagsPatch,
    replacedEntriesWarning,
} from "./infrastructure";
import {
    INFRASTRUCTURE_API_VERSION,
    INFRASTRUCTURE_KIND,
    INFRASTRUCTURE_NAME,
    InstallTags,
    installTagsFromInfrastructure,
} from "./install-tags";
import { loadBalancerTagTransformation } from "./load-balancers";
import { ResourceTagger } from "./tagger";

/** What the read of `Infrastructure/cluster` registers as outputs. */
interface LiveInfrastructure {
    spec: pulumi.Output<unknown>;
    status: pulumi.Output<unknown>;
}

/** The StorageClass whose volumes carry the user tags when propagation is on. */
export const TAGGED_STORAGE_CLASS = "gp3-csi-tagged";

export interface AwsTagsArgs {
    /** The cluster: on OpenShift the install-time tags are read from it, and the day-2 tags written to it, when it is live. */
    readonly cluster: ClusterTarget;
    /** AWS region of the assets. */
    readonly region: string;
    /** `aws.userTags`, validated. */
    readonly userTags: Record<string, string>;
    /** Whether what the cluster creates in AWS gets the tags too (Infrastructure spec, EBS volumes, load balancers). */
    readonly propagate: boolean;
    /** The tag key state the previous update recorded (see day2.ts); empty on the first update. */
    readonly previousTagKeys: TagKeyState;
    /** The install-time tag keys earlier updates applied (see day2.ts); empty on the first update. */
    readonly previousInstallTagKeys: string[];
    /** Which assets to create (see `awsAssetPlan`). */
    readonly assets: AwsAssetPlan;
    /** Whom the image registry role trusts; required when `assets.registryStorage`. @default none (no registry storage) */
    readonly registryTrust?: RegistryTrust;
}

/**
 * User-defined tags on every AWS resource (seed 004), and the AWS assets this stack creates.
 * Reads the install-time tags (OpenShift), merges them with `aws.userTags` and each resource's
 * own tags into every taggable resource's create inputs (`ResourceTagger`), creates the assets
 * the plan asks for (webhook image repository, image registry storage), and, with propagation
 * on, writes `aws.userTags` to `Infrastructure/cluster` for the cluster's own operators (see
 * infrastructure.ts), creates the tagged EBS StorageClass and the load balancer annotation
 * transformation. Children inherit the `aws` and `kubernetes` providers given in `opts.providers`.
 */
export class AwsTags extends pulumi.ComponentResource {
    /** The merge and the safety-net transformation; `installAwsTags` (install.ts) registers the latter for the whole stack. */
    readonly tagger: ResourceTagger;
    /** This update's tag key state: exported as a stack output, read back by the next update. */
    readonly tagKeys: TagKeyState;
    /** The install-time keys applied so far: exported as a stack output, read back by the next update. */
    readonly installTagKeys: pulumi.Output<string[]>;
    /** The ECR repository's URL, when the plan has it. */
    readonly webhookRepositoryUrl?: pulumi.Output<string>;
    /** The image registry storage, when the plan has it. */
    readonly registryStorage?: ImageRegistryStorage;
    /** Name of the tagged EBS StorageClass (propagation on), else undefined. */
    readonly storageClassName?: string;
    /** Annotates LoadBalancer Services with the tags (propagation on), else undefined. */
    readonly loadBalancerTransformation?: pulumi.ResourceTransformation;

    constructor(name: string, args: AwsTagsArgs, opts?: pulumi.ComponentResourceOptions) {
        // The transformation is created with the tagger, after the cluster read below; children
        // constructed before it (the reads themselves) take no tags.
        const late: { tagger?: ResourceTagger } = {};
        super(
            "cluster-platform:aws-tags:AwsTags",
            name,
            {},
            {
                ...opts,
                transformations: [...(opts?.transformations ?? []), (a) => late.tagger?.transformation(a)],
            },
        );

        this.tagKeys = nextTagKeyState(args.previousTagKeys, Object.keys(args.userTags));
        const infrastructure = this.readInfrastructure(name, args);
        const installTags = this.installTagsOf(infrastructure);
        this.installTagKeys = pulumi
            .output(installTags)
            .apply((install) => nextInstallTagKeys(args.previousInstallTagKeys, Object.keys(install.tags)));
        const tagger = new ResourceTagger({
            userTags: args.userTags,
            installTags,
            releasedKeys: unmanagedTagKeys(this.tagKeys, args.previousInstallTagKeys),
        });
        this.tagger = late.tagger = tagger;

        if (args.assets.webhookRepository) {
            this.webhookRepositoryUrl = new WebhookImageRepository(
                `${name}-webhook-image`,
                { clusterName: args.cluster.name, tagger },
                { parent: this },
            ).repositoryUrl;
        }
        if (args.assets.registryStorage) {
            if (!args.registryTrust) {
                throw new pulumi.ResourceError(
                    "assets.registryStorage needs registryTrust (the config rules require aws.oidcProviderArn or aws.imageRegistryStorage.trustedPrincipalArn)",
                    this,
                );
            }
            this.registryStorage = new ImageRegistryStorage(
                `${name}-image-registry`,
                { clusterName: args.cluster.name, region: args.region, tagger, trust: args.registryTrust },
                { parent: this },
            );
        }

        if (args.propagate) {
            if (infrastructure) {
                this.patchInfrastructure(name, infrastructure, args.userTags, pulumi.output(installTags), args.assets.registryStorage);
            }
            new k8s.storage.v1.StorageClass(
                `${name}-${TAGGED_STORAGE_CLASS}`,
                {
                    metadata: { name: TAGGED_STORAGE_CLASS, labels: platformLabels("aws-tags") },
                    provisioner: EBS_CSI_PROVISIONER,
                    parameters: tagger
                        .consumerTagsFor(`StorageClass ${JSON.stringify(TAGGED_STORAGE_CLASS)}`, {}, "ebsVolumes")
                        .apply((tags) => ({
                            type: "gp3",
                            encrypted: "true",
                            "csi.storage.k8s.io/fstype": "ext4",
                            ...ebsTagParameters(tags),
                        })),
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
            installTagKeys: this.installTagKeys,
            webhookRepositoryUrl: this.webhookRepositoryUrl,
            registryBucket: this.registryStorage?.bucketName,
            storageClassName: this.storageClassName,
        });
    }

    /**
     * Reads `Infrastructure/cluster` on a live OpenShift cluster (the stack never writes its
     * `status`). A read through the constructor with an `id` is what `CustomResource.get` does,
     * but registers `spec` and `status` as outputs (`get` registers only apiVersion and kind).
     * Undefined elsewhere; rendering OpenShift to a directory says once what is skipped.
     */
    private readInfrastructure(name: string, args: AwsTagsArgs): LiveInfrastructure | undefined {
        if (args.cluster.platform !== "openshift") {
            return undefined;
        }
        if (!args.cluster.live) {
            const day2 = args.propagate
                ? ` and writing aws.userTags to Infrastructure/${INFRASTRUCTURE_NAME} spec.platformSpec.aws.resourceTags`
                : "";
            pulumi.log.warn(
                `${skippedWithoutCluster(`reading the install-time tags (Infrastructure/${INFRASTRUCTURE_NAME} status.platformStatus.aws.resourceTags)${day2}`)}; AWS resources get aws.userTags and their own tags only`,
                this,
            );
            return undefined;
        }
        return new k8s.apiextensions.CustomResource(
            `${name}-infrastructure`,
            { apiVersion: INFRASTRUCTURE_API_VERSION, kind: INFRASTRUCTURE_KIND, metadata: undefined, spec: undefined, status: undefined },
            { parent: this, id: INFRASTRUCTURE_NAME },
        ) as unknown as LiveInfrastructure;
    }

    private installTagsOf(infrastructure: LiveInfrastructure | undefined): pulumi.Input<InstallTags> {
        if (!infrastructure) {
            return { tags: {}, notes: [] };
        }
        return infrastructure.status.apply((status) => {
            const install = installTagsFromInfrastructure({ status });
            for (const note of install.notes) {
                pulumi.log.warn(note, this);
            }
            return install;
        });
    }

    /**
     * Server-side-applies `aws.userTags` to `spec.platformSpec.aws.resourceTags` (see
     * infrastructure.ts) when the cluster's Infrastructure CRD has that field; otherwise the
     * patch owns nothing, with one warning. The patch always exists with propagation on, so a
     * preview shows it whatever the cluster; deleting it (propagation off, AWS off, stack
     * destroyed) releases the entries it owns: they leave the list and stay on AWS resources.
     */
    private patchInfrastructure(
        name: string,
        infrastructure: LiveInfrastructure,
        userTags: Record<string, string>,
        installTags: pulumi.Output<InstallTags>,
        stackRegistryBucket: boolean,
    ): void {
        const crd = k8s.apiextensions.v1.CustomResourceDefinition.get(`${name}-infrastructure-crd`, INFRASTRUCTURE_CRD, { parent: this });
        const field = crd.spec.apply((spec) => day2TagsField({ spec }));
        // The warning waits for the install-time tags; the patch body does not.
        pulumi.all([field, installTags]).apply(([f, install]) => {
            const unreached = f.present ? undefined : day2UnreachedWarning(userTags, install.tags, stackRegistryBucket);
            if (unreached) {
                pulumi.log.warn(unreached, this);
            }
        });
        const body = field.apply((f) => {
            if (!f.present) {
                return infrastructureTagsPatch(userTags, false);
            }
            const limit = day2LimitProblem(f, userTags);
            if (limit) {
                // Attributed to this component, without a stack trace (the message says it all).
                throw new pulumi.ResourceError(limit, this, true);
            }
            return infrastructureTagsPatch(userTags, true);
        });
        // Only a warning depends on the live list, so the patch does not wait for it.
        pulumi.all([field, infrastructure.spec]).apply(([f, spec]) => {
            const replaced = f.present ? replacedEntriesWarning({ spec }, userTags, f.listType) : undefined;
            if (replaced) {
                pulumi.log.warn(replaced, this);
            }
        });
        new k8s.apiextensions.CustomResourcePatch(
            `${name}-infrastructure-tags`,
            {
                apiVersion: INFRASTRUCTURE_API_VERSION,
                kind: INFRASTRUCTURE_KIND,
                // The object's identity is known from config, so a preview always names the object patched.
                metadata: { name: INFRASTRUCTURE_NAME, annotations: body.apply((b) => b.metadata.annotations) },
                spec: body.apply((b) => b.spec),
            },
            { parent: this },
        );
    }
}
