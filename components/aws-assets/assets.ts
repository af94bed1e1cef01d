/**
 * The AWS assets this stack creates when `aws.enabled` (seed 004): their names, the tags each
 * declares itself, and their policy documents. Pure: no Pulumi imports, so the pre-flight
 * checks and the tests see exactly what the components create.
 */
import { createHash } from "node:crypto";
import { CAPABILITY_LABEL } from "../shared/labels";
import { buildsWebhookImage, namesRegistryHost } from "../webhook-image/rules";

/** Type tokens of the taggable assets (checked against the derived taggable list by a test). */
export const ASSET_TYPES = {
    ecrRepository: "aws:ecr/repository:Repository",
    kmsKey: "aws:kms/key:Key",
    bucket: "aws:s3/bucket:Bucket",
    role: "aws:iam/role:Role",
    policy: "aws:iam/policy:Policy",
} as const;

/** Images the webhook repository keeps; older ones expire. */
export const WEBHOOK_IMAGES_KEPT = 10;
/** Days after which incomplete multipart uploads to the registry bucket are aborted. */
export const ABORT_INCOMPLETE_UPLOADS_DAYS = 7;
/** Days a replaced or deleted object version stays recoverable in the registry bucket. */
export const NONCURRENT_VERSION_DAYS = 30;
/** The key the registry bucket's tags name the cluster with. */
export const CLUSTER_TAG = "cluster-platform.io/cluster";

/** The OpenShift image registry's service accounts, which assume the registry role on STS clusters. */
export const REGISTRY_SERVICE_ACCOUNTS = [
    "system:serviceaccount:openshift-image-registry:cluster-image-registry-operator",
    "system:serviceaccount:openshift-image-registry:registry",
] as const;

/** `text` cut to `max` characters; when cut, the end is replaced by a short hash of the whole so names stay distinct. */
export function fitName(text: string, max: number): string {
    if (text.length <= max) {
        return text;
    }
    const hash = createHash("sha256").update(text).digest("hex").slice(0, 6);
    return `${text.slice(0, max - hash.length - 1).replace(/-+$/, "")}-${hash}`;
}

export interface AssetNames {
    /** ECR repository name: `<cluster>/subscription-webhook` (repeated '-' collapsed, as ECR requires). */
    ecrRepository: string;
    /** The S3 bucket name without its account and region suffix (added when the account is known). */
    bucketBase: string;
    kmsAlias: string;
    roleName: string;
    policyName: string;
}

/** Physical names, all derived from the cluster name so two clusters in one account never collide. */
export function assetNames(clusterName: string): AssetNames {
    const base = `${clusterName}-image-registry`;
    return {
        ecrRepository: `${clusterName.replace(/-{2,}/g, "-")}/subscription-webhook`,
        bucketBase: base,
        kmsAlias: `alias/${base}`,
        roleName: fitName(base, 64),
        policyName: fitName(base, 128),
    };
}

/**
 * The registry bucket's name: `<cluster>-image-registry-<account>-<region>`, at most 63
 * characters (bucket names are global across all AWS accounts, hence account and region).
 */
export function registryBucketName(clusterName: string, accountId: string, region: string): string {
    const suffix = `-${accountId}-${region}`;
    return `${fitName(assetNames(clusterName).bucketBase, 63 - suffix.length)}${suffix}`;
}

/** Pulumi resource names of the taggable assets. */
export function assetResourceNames(clusterName: string): Record<keyof typeof ASSET_TYPES, string> {
    return {
        ecrRepository: `${clusterName}-webhook-image`,
        kmsKey: `${clusterName}-image-registry`,
        bucket: `${clusterName}-image-registry`,
        role: `${clusterName}-image-registry`,
        policy: `${clusterName}-image-registry`,
    };
}

/** The tags an asset declares itself (the highest-precedence layer): its Name, the cluster and the capability. */
export function assetOwnTags(clusterName: string, name: string): Record<string, string> {
    return { Name: name, [CLUSTER_TAG]: clusterName, [CAPABILITY_LABEL]: "aws-tags" };
}

export interface PlannedResource {
    type: string;
    name: string;
    ownTags: Record<string, string>;
}

/** Which AWS assets the stack creates: only those something uses. */
export interface AwsAssetPlan {
    /** The webhook image's ECR repository: only when the image is published there. */
    webhookRepository: boolean;
    /** The image registry's bucket, key, role and policy: only when `aws.imageRegistryStorage.enabled`. */
    registryStorage: boolean;
}

export const NO_AWS_ASSETS: AwsAssetPlan = { webhookRepository: false, registryStorage: false };

/** What `awsAssetPlan` reads from the config sections. */
export interface AwsAssetPlanInputs {
    aws: { enabled: boolean; imageRegistryStorage: { enabled: boolean } };
    subscriptions: { enabled: boolean; webhook: { image?: string } };
    /** `webhookImage` with its output resolved (registry or oci-layout). */
    webhookImage: { output: string; repository: string };
}

/**
 * The ECR repository exists only when the stack builds the webhook image and pushes it
 * (`webhookImage.output` registry) to a repository without a registry host, which is what
 * sends it to ECR; the registry storage only when the config asks for it.
 */
export function awsAssetPlan({ aws, subscriptions, webhookImage }: AwsAssetPlanInputs): AwsAssetPlan {
    if (!aws.enabled) {
        return NO_AWS_ASSETS;
    }
    return {
        webhookRepository:
            buildsWebhookImage(subscriptions) && webhookImage.output === "registry" && !namesRegistryHost(webhookImage.repository),
        registryStorage: aws.imageRegistryStorage.enabled,
    };
}

/** Every taggable AWS resource the planned assets create, with its own tags (for pre-flight limit checks). */
export function plannedAssetResources(clusterName: string, plan: AwsAssetPlan): PlannedResource[] {
    const names = assetNames(clusterName);
    const resources = assetResourceNames(clusterName);
    const own = (name: string) => assetOwnTags(clusterName, name);
    return [
        ...(plan.webhookRepository
            ? [{ type: ASSET_TYPES.ecrRepository, name: resources.ecrRepository, ownTags: own(names.ecrRepository) }]
            : []),
        ...(plan.registryStorage
            ? [
                  { type: ASSET_TYPES.kmsKey, name: resources.kmsKey, ownTags: own(names.kmsAlias.slice("alias/".length)) },
                  { type: ASSET_TYPES.bucket, name: resources.bucket, ownTags: own(names.bucketBase) },
                  { type: ASSET_TYPES.role, name: resources.role, ownTags: own(names.roleName) },
                  { type: ASSET_TYPES.policy, name: resources.policy, ownTags: own(names.policyName) },
              ]
            : []),
    ];
}

/** The ECR lifecycle policy: keep the newest `kept` images, expire the rest. */
export function webhookLifecyclePolicy(kept = WEBHOOK_IMAGES_KEPT): string {
    return JSON.stringify({
        rules: [
            {
                rulePriority: 1,
                description: `Keep the last ${kept} images`,
                selection: { tagStatus: "any", countType: "imageCountMoreThan", countNumber: kept },
                action: { type: "expire" },
            },
        ],
    });
}

/** Refuses every request to the bucket that does not use TLS. */
export function bucketTlsOnlyPolicy(bucketArn: string): string {
    return JSON.stringify({
        Version: "2012-10-17",
        Statement: [
            {
                Sid: "DenyInsecureTransport",
                Effect: "Deny",
                Principal: "*",
                Action: "s3:*",
                Resource: [bucketArn, `${bucketArn}/*`],
                Condition: { Bool: { "aws:SecureTransport": "false" } },
            },
        ],
    });
}

/**
 * What the registry may do: read and write image blobs in its bucket, use the bucket's KMS key,
 * and read and write that bucket's tags. The tagging is not optional: the image registry
 * operator's `AWSTagController` (openshift/cluster-image-registry-operator
 * pkg/operator/awstagcontroller.go) calls `GetBucketTagging` and `PutBucketTagging` on the
 * configured bucket whenever the install-time tags change, whatever the registry's
 * `managementState`, and retries an AccessDenied forever. The stack pins the bucket's values for
 * the keys it applies (aws-tags/retagging.ts), so the operator's writes change nothing. No other
 * bucket administration: the stack owns the bucket's configuration.
 */
export function registryAccessPolicy(bucketArn: string, kmsKeyArn: string): string {
    return JSON.stringify({
        Version: "2012-10-17",
        Statement: [
            {
                Sid: "ListRegistryBucket",
                Effect: "Allow",
                Action: ["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"],
                Resource: bucketArn,
            },
            {
                Sid: "ReadWriteImageBlobs",
                Effect: "Allow",
                Action: ["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:ListMultipartUploadParts", "s3:PutObject"],
                Resource: `${bucketArn}/*`,
            },
            {
                Sid: "TagRegistryBucket",
                Effect: "Allow",
                Action: ["s3:GetBucketTagging", "s3:PutBucketTagging"],
                Resource: bucketArn,
            },
            {
                Sid: "UseRegistryKey",
                Effect: "Allow",
                Action: ["kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
                Resource: kmsKeyArn,
            },
        ],
    });
}

/** Whom the registry role trusts: the cluster's OIDC provider, or one named IAM role or user. */
export type RegistryTrust = { oidcProviderArn: string } | { principalArn: string };

/**
 * Who may assume the registry role, and nothing wider. With the cluster's IAM OIDC provider
 * (OpenShift STS, ROSA): the image registry's service accounts, through web identity, the
 * subjects OpenShift's CredentialsRequest for the registry names. Otherwise the one IAM role or
 * user the config names. Never an account root (`arn:aws:iam::<account>:root` would let every
 * principal of the account that is allowed `sts:AssumeRole` in); the config rules refuse it.
 */
export function registryTrustPolicy(trust: RegistryTrust): string {
    if ("oidcProviderArn" in trust) {
        const arn = trust.oidcProviderArn;
        const issuer = arn.slice(arn.indexOf("oidc-provider/") + "oidc-provider/".length);
        return JSON.stringify({
            Version: "2012-10-17",
            Statement: [
                {
                    Effect: "Allow",
                    Principal: { Federated: arn },
                    Action: "sts:AssumeRoleWithWebIdentity",
                    Condition: { StringEquals: { [`${issuer}:sub`]: [...REGISTRY_SERVICE_ACCOUNTS] } },
                },
            ],
        });
    }
    return JSON.stringify({
        Version: "2012-10-17",
        Statement: [{ Effect: "Allow", Principal: { AWS: trust.principalArn }, Action: "sts:AssumeRole" }],
    });
}
