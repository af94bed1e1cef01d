import * as path from "node:path";
import { installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";
import { mergeTags } from "../../components/aws-tags/rules";
import { isTaggable, listTagsToMap, tagShapeOf, TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { ClusterState } from "../../scripts/render/cluster-state";
import { readConfigFile } from "../../scripts/render/config-file";
import { renderFile, ROOT } from "../helpers/render";

const EXAMPLE = "examples/openshift-aws.yaml";
const CLUSTER = path.join(__dirname, "..", "fixtures", "certificates", "openshift-aws.cluster.yaml");

/** A resource's tags from its create inputs, whatever their shape. */
function tagsOf(type: string, tags: unknown): Record<string, string> {
    const shape = tagShapeOf(type);
    if (shape?.kind === "list") {
        return listTagsToMap(tags as Record<string, unknown>[], shape);
    }
    return (tags ?? {}) as Record<string, string>;
}

describe("acceptance: every taggable AWS resource carries every merged user tag at creation", () => {
    test(`GIVEN ${EXAMPLE} and its cluster WHEN rendered THEN 100% of the taggable AWS resources (per the list derived from ${TAGGABLE_SOURCE}) carry the merged user tags in their create inputs`, async () => {
        const result = await renderFile(EXAMPLE, { cluster: ClusterState.fromFile(CLUSTER) });
        expect(result.errors).toEqual([]);

        // The merged user tags: install-time tags read from the cluster, overridden by aws.userTags.
        const config = readConfigFile(path.join(ROOT, EXAMPLE));
        const userTags = (JSON.parse(config.values["cluster-platform:aws"]) as { userTags: Record<string, string> }).userTags;
        const infrastructure = ClusterState.fromFile(CLUSTER).find("kubernetes:config.openshift.io/v1:Infrastructure", "cluster");
        const merged = mergeTags({ install: installTagsFromInfrastructure(infrastructure).tags, config: userTags }).tags;
        expect(merged).toEqual({ adminContact: "jdoe", costCenter: "7536", owner: "platform-team", "red-hat-managed": "true" });

        const aws = result.resources.filter((r) => r.type.startsWith("aws:") && r.read === undefined);
        const taggable = aws.filter((r) => isTaggable(r.type));
        const missingOf = (type: string, tags: unknown) =>
            Object.entries(merged)
                .filter(([key, value]) => tagsOf(type, tags)[key] !== value)
                .map(([key, value]) => `${key}=${value}`);
        const missing = taggable.filter((r) => missingOf(r.type, r.inputs.tags).length > 0).map((r) => `${r.type} ${r.name} lacks ${missingOf(r.type, r.inputs.tags).join(", ")}`);
        const carrying = taggable.length - missing.length;
        console.log(
            `aws-tags acceptance: ${carrying}/${taggable.length} taggable AWS resources (of ${aws.length} AWS resources) carry all ${Object.keys(merged).length} merged user tags in their create inputs`,
        );
        expect(missing).toEqual([]);
        expect(taggable.map((r) => `${r.type}::${r.name}`)).toEqual([
            "aws:ecr/repository:Repository::prod-east-webhook-image",
            "aws:kms/key:Key::prod-east-image-registry",
            "aws:s3/bucket:Bucket::prod-east-image-registry",
            "aws:iam/role:Role::prod-east-image-registry",
            "aws:iam/policy:Policy::prod-east-image-registry",
        ]);
        // And the AWS resources that are not taggable are exactly those @pulumi/aws gives no tags input.
        expect(aws.filter((r) => !isTaggable(r.type)).map((r) => r.type)).toEqual([
            "aws:ecr/lifecyclePolicy:LifecyclePolicy",
            "aws:kms/alias:Alias",
            "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
            "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
            "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
            "aws:s3/bucketVersioning:BucketVersioning",
            "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
            "aws:s3/bucketPolicy:BucketPolicy",
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        ]);
    });
});
