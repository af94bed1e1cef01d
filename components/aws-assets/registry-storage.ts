import * as pulumi from "@pulumi/pulumi";
import {
    ABORT_INCOMPLETE_UPLOADS_DAYS,
    ASSET_TYPES,
    assetNames,
    assetOwnTags,
    assetResourceNames,
    bucketTlsOnlyPolicy,
    NONCURRENT_VERSION_DAYS,
    registryAccessPolicy,
    registryBucketName,
    RegistryTrust,
    registryTrustPolicy,
} from "./assets";
import { awsPackage } from "./aws-package";
import { TaggedAssetArgs } from "./tagged-asset";

export interface ImageRegistryStorageArgs extends TaggedAssetArgs {
    /** AWS region of the bucket (part of its name). */
    readonly region: string;
    /** Whom the registry role trusts: the cluster's IAM OIDC provider (STS clusters) or one named IAM role or user. */
    readonly trust: RegistryTrust;
}

/**
 * Storage for the cluster's image registry: an S3 bucket encrypted with its own KMS key
 * (rotated yearly), public access blocked, owner-enforced, TLS-only, versioned (replaced blobs
 * stay recoverable for 30 days), plus the IAM role and policy the registry uses to reach it.
 * Built from the split S3 resources of @pulumi/aws 7, not the deprecated inline bucket
 * arguments. The bucket and its key are retained when the storage leaves the config or the stack
 * is destroyed (`retainOnDelete`): the images outlive the stack, and so does the key that
 * decrypts them (deleting it would schedule it, and with it the images, for destruction).
 */
export class ImageRegistryStorage extends pulumi.ComponentResource {
    readonly bucketName: pulumi.Output<string>;
    readonly bucketArn: pulumi.Output<string>;
    readonly kmsKeyArn: pulumi.Output<string>;
    readonly roleArn: pulumi.Output<string>;

    constructor(name: string, args: ImageRegistryStorageArgs, opts?: pulumi.ComponentResourceOptions) {
        // The token keeps the area it was created under (aws-tags): it is part of every existing
        // stack's URNs, and a new token would replace the retained assets' children.
        super("cluster-platform:aws-tags:ImageRegistryStorage", name, {}, opts);
        const { clusterName, tagger } = args;
        const names = assetNames(clusterName);
        const resources = assetResourceNames(clusterName);
        const own = (physical: string) => assetOwnTags(clusterName, physical);
        const parent = { parent: this };
        const aws = awsPackage();
        const account = aws.getCallerIdentityOutput({}, parent);

        const key = new aws.kms.Key(
            resources.kmsKey,
            {
                description: `Encrypts the image registry bucket of cluster ${clusterName}`,
                enableKeyRotation: true,
                deletionWindowInDays: 30,
                tags: tagger.tagsFor(ASSET_TYPES.kmsKey, resources.kmsKey, own(names.kmsAlias.slice("alias/".length))),
            },
            { ...parent, retainOnDelete: true },
        );
        new aws.kms.Alias(`${resources.kmsKey}-alias`, { name: names.kmsAlias, targetKeyId: key.keyId }, parent);

        const bucket = new aws.s3.Bucket(
            resources.bucket,
            {
                bucket: account.accountId.apply((id) => registryBucketName(clusterName, id, args.region)),
                forceDestroy: false,
                tags: tagger.tagsFor(ASSET_TYPES.bucket, resources.bucket, own(names.bucketBase), "registryBucket"),
            },
            { ...parent, retainOnDelete: true },
        );
        const ownership = new aws.s3.BucketOwnershipControls(
            `${resources.bucket}-ownership`,
            { bucket: bucket.id, rule: { objectOwnership: "BucketOwnerEnforced" } },
            parent,
        );
        // Retained with the bucket, so a retained bucket never loses its public access block.
        const publicAccess = new aws.s3.BucketPublicAccessBlock(
            `${resources.bucket}-public-access`,
            { bucket: bucket.id, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true },
            { ...parent, retainOnDelete: true },
        );
        new aws.s3.BucketServerSideEncryptionConfiguration(
            `${resources.bucket}-encryption`,
            {
                bucket: bucket.id,
                rules: [
                    { applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: key.arn }, bucketKeyEnabled: true },
                ],
            },
            parent,
        );
        const versioning = new aws.s3.BucketVersioning(
            `${resources.bucket}-versioning`,
            { bucket: bucket.id, versioningConfiguration: { status: "Enabled" } },
            parent,
        );
        new aws.s3.BucketLifecycleConfiguration(
            `${resources.bucket}-lifecycle`,
            {
                bucket: bucket.id,
                rules: [
                    {
                        id: "abort-incomplete-uploads",
                        status: "Enabled",
                        filter: { prefix: "" },
                        abortIncompleteMultipartUpload: { daysAfterInitiation: ABORT_INCOMPLETE_UPLOADS_DAYS },
                    },
                    {
                        id: "expire-noncurrent-versions",
                        status: "Enabled",
                        filter: { prefix: "" },
                        noncurrentVersionExpiration: { noncurrentDays: NONCURRENT_VERSION_DAYS },
                    },
                ],
            },
            { parent: this, dependsOn: [versioning] },
        );
        // The policy goes on after public access is blocked, so there is never a window where it is not.
        new aws.s3.BucketPolicy(
            `${resources.bucket}-tls-only`,
            { bucket: bucket.id, policy: bucket.arn.apply(bucketTlsOnlyPolicy) },
            { parent: this, dependsOn: [publicAccess, ownership] },
        );

        const role = new aws.iam.Role(
            resources.role,
            {
                name: names.roleName,
                description: `Used by the image registry of cluster ${clusterName} to store images in its bucket`,
                assumeRolePolicy: registryTrustPolicy(args.trust),
                tags: tagger.tagsFor(ASSET_TYPES.role, resources.role, own(names.roleName)),
            },
            parent,
        );
        const policy = new aws.iam.Policy(
            resources.policy,
            {
                name: names.policyName,
                description: `Lets the image registry of cluster ${clusterName} read and write its bucket`,
                policy: pulumi.all([bucket.arn, key.arn]).apply(([b, k]) => registryAccessPolicy(b, k)),
                tags: tagger.tagsFor(ASSET_TYPES.policy, resources.policy, own(names.policyName)),
            },
            parent,
        );
        new aws.iam.RolePolicyAttachment(`${resources.role}-access`, { role: role.name, policyArn: policy.arn }, parent);

        this.bucketName = bucket.bucket;
        this.bucketArn = bucket.arn;
        this.kmsKeyArn = key.arn;
        this.roleArn = role.arn;
        this.registerOutputs({ bucketName: this.bucketName, bucketArn: this.bucketArn, kmsKeyArn: this.kmsKeyArn, roleArn: this.roleArn });
    }
}
