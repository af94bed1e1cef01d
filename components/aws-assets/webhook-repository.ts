import * as pulumi from "@pulumi/pulumi";
import { ASSET_TYPES, assetNames, assetOwnTags, assetResourceNames, webhookLifecyclePolicy, WEBHOOK_IMAGES_KEPT } from "./assets";
import { awsPackage } from "./aws-package";
import { TaggedAssetArgs } from "./tagged-asset";

/** The repository is `<cluster>/subscription-webhook`. */
export interface WebhookImageRepositoryArgs extends TaggedAssetArgs {
    /** Images kept by the lifecycle policy. @default 10 */
    readonly imagesKept?: number;
}

/**
 * The ECR repository the webhook image is pushed to (when `webhookImage.output` is
 * `registry`): images are scanned on push, and a lifecycle policy keeps the newest ones.
 * Tags stay mutable because the image is deployed by digest, never by tag. The repository is
 * retained when the image goes elsewhere or the stack is destroyed (`retainOnDelete`), and
 * `forceDelete` stays off: images a cluster may still run are never deleted with it.
 */
export class WebhookImageRepository extends pulumi.ComponentResource {
    /** `<account>.dkr.ecr.<region>.amazonaws.com/<cluster>/subscription-webhook`. */
    readonly repositoryUrl: pulumi.Output<string>;
    readonly repositoryName: pulumi.Output<string>;

    constructor(name: string, args: WebhookImageRepositoryArgs, opts?: pulumi.ComponentResourceOptions) {
        // The token keeps the area it was created under (aws-tags): it is part of every existing
        // stack's URNs, and a new token would replace the retained assets' children.
        super("cluster-platform:aws-tags:WebhookImageRepository", name, {}, opts);
        const repositoryName = assetNames(args.clusterName).ecrRepository;
        const resourceName = assetResourceNames(args.clusterName).ecrRepository;
        const aws = awsPackage();
        const repository = new aws.ecr.Repository(
            resourceName,
            {
                name: repositoryName,
                imageScanningConfiguration: { scanOnPush: true },
                imageTagMutability: "MUTABLE",
                encryptionConfigurations: [{ encryptionType: "AES256" }],
                forceDelete: false,
                tags: args.tagger.tagsFor(ASSET_TYPES.ecrRepository, resourceName, assetOwnTags(args.clusterName, repositoryName)),
            },
            { parent: this, retainOnDelete: true },
        );
        new aws.ecr.LifecyclePolicy(
            `${resourceName}-lifecycle`,
            { repository: repository.name, policy: webhookLifecyclePolicy(args.imagesKept ?? WEBHOOK_IMAGES_KEPT) },
            { parent: this },
        );
        this.repositoryUrl = repository.repositoryUrl;
        this.repositoryName = repository.name;
        this.registerOutputs({ repositoryUrl: this.repositoryUrl, repositoryName: this.repositoryName });
    }
}
