import * as path from "node:path";
import { installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";
import { mergeTags } from "../../components/aws-tags/rules";
import { isTaggable, listTagsToMap, tagShapeOf, TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { ClusterState } from "../../scripts/render/cluster-state";
import { readConfigFile } from "../../scripts/render/config-file";
import { KubeObject } from "../../scripts/render/cluster-state";
import { RenderResult } from "../../scripts/render/render";
import { renderConfig, renderFile, resourceNamed, resourcesOfType, ROOT } from "../helpers/render";

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
        // The registry bucket: what the image registry operator's AWSTagController leaves on it
        // (cluster-image-registry-operator syncInfraTags: every install-time tag added or its value
        // updated), so the stack and the operator agree.
        const install = installTagsFromInfrastructure(infrastructure).tags;
        const expectedOf = (type: string) => (type === "aws:s3/bucket:Bucket" ? { ...merged, ...install } : merged);
        const missingOf = (type: string, tags: unknown) =>
            Object.entries(expectedOf(type))
                .filter(([key, value]) => tagsOf(type, tags)[key] !== value)
                .map(([key, value]) => `${key}=${value}`);
        const missing = taggable
            .filter((r) => missingOf(r.type, r.inputs.tags).length > 0)
            .map((r) => `${r.type} ${r.name} lacks ${missingOf(r.type, r.inputs.tags).join(", ")}`);
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

describe("acceptance: issue 16 (day-2 tags for the cluster's operators, stack-wide tagging, least privilege)", () => {
    const CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
    const PATCH = "kubernetes:config.openshift.io/v1:InfrastructurePatch";
    const userTags = { adminContact: "jdoe", costCenter: "7536", "red-hat-managed": "true" };
    const realCrd = ClusterState.fromFile(CLUSTER).find(CRD_TYPE, "infrastructures.config.openshift.io") as KubeObject;
    const infrastructure = ClusterState.fromFile(CLUSTER).find("kubernetes:config.openshift.io/v1:Infrastructure", "cluster") as KubeObject;
    /** The real CRD with the seed's spec.platformSpec.aws.resourceTags (the seed's "Required updates in API"). */
    const seedCrd = (): KubeObject => {
        type Node = { properties?: Record<string, Node> } & Record<string, unknown>;
        const crd = JSON.parse(JSON.stringify(realCrd)) as KubeObject & { spec: { versions: { schema: { openAPIV3Schema: Node } }[] } };
        const at = (node: Node, ...path: string[]): Node => path.reduce((n, step) => (n.properties as Record<string, Node>)[step], node);
        const aws = at(crd.spec.versions[0].schema.openAPIV3Schema, "spec", "platformSpec", "aws");
        (aws.properties as Record<string, Node>).resourceTags = {
            type: "array",
            maxItems: 25,
            items: {
                type: "object",
                required: ["key", "value"],
                properties: {
                    key: { type: "string", maxLength: 128, minLength: 1 },
                    value: { type: "string", maxLength: 256, minLength: 1 },
                },
            },
        };
        return crd;
    };
    const openshift = (aws: Record<string, unknown>) => ({
        cluster: { name: "prod-east", platform: "openshift", kubeContext: "test" },
        aws: { enabled: true, region: "us-east-1", userTags, ...aws },
    });
    const patchOf = (result: RenderResult) => resourceNamed(result, PATCH, "aws-tags-infrastructure-tags").inputs;
    const exactlyTheUserTags = {
        apiVersion: "config.openshift.io/v1",
        kind: "Infrastructure",
        metadata: {
            name: "cluster",
            annotations: { "pulumi.com/patchForce": "true", "pulumi.com/patchFieldManager": "cluster-platform-aws-tags" },
        },
        spec: {
            platformSpec: {
                aws: {
                    resourceTags: [
                        { key: "adminContact", value: "jdoe" },
                        { key: "costCenter", value: "7536" },
                        { key: "red-hat-managed", value: "true" },
                    ],
                },
            },
        },
    };

    test.each([
        ["propagation on", { propagateUserTags: true }],
        ["propagation omitted", {}],
    ])(
        "GIVEN %s and a cluster whose API has the seed's field WHEN rendered THEN the Infrastructure patch holds exactly the user tags, under the stack's field manager",
        async (_name, flags) => {
            const result = await renderConfig(openshift(flags), { cluster: [infrastructure, seedCrd()] });
            expect(result.errors).toEqual([]);
            expect(patchOf(result)).toEqual(exactlyTheUserTags);
            expect(result.warnings.filter((w) => w.includes("spec.platformSpec.aws.resourceTags"))).toEqual([]);
        },
    );

    test("GIVEN the real Infrastructure API (no spec field) and aws.userTags that differ from the install-time tags WHEN rendered THEN one warning names the changed keys, what they reach and which existing AWS resources they do not, and the patch writes nothing", async () => {
        const result = await renderConfig(openshift({}), { cluster: [infrastructure, realCrd] });
        expect(result.errors).toEqual([]);
        expect(result.warnings.filter((w) => w.includes("spec.platformSpec.aws.resourceTags"))).toEqual([
            'aws.userTags sets "adminContact", "red-hat-managed" differently from the install-time tags, and Infrastructure/cluster spec.platformSpec.aws.resourceTags is not in this cluster\'s Infrastructure API (CRD infrastructures.config.openshift.io; openshift/api has only serviceEndpoints there), so the cluster\'s operators keep the install-time values. ' +
                'Reached: the stack\'s own AWS resources, the LoadBalancer Services it declares, and new volumes of the gp3-csi-tagged StorageClass for "red-hat-managed". ' +
                "Not reached: existing EBS volumes and the volumes of every StorageClass but gp3-csi-tagged (csi-operator's EBSVolumeTagsController keeps the install-time values on every EBS CSI volume); " +
                "the instances of existing and new MachineSets (machine-api-provider-aws tags them from the install-time tags and each MachineSet's providerSpec); " +
                "the default router's load balancer (cluster-ingress-operator annotates its Service from the install-time tags); " +
                "the installer's image registry bucket (cluster-image-registry-operator's AWSTagController); " +
                "what the installer created: VPC, subnets, security groups, control-plane instances, DNS zones, IAM roles. " +
                "The stack does not write status.platformStatus.aws.resourceTags: the API server accepts it, but status is not the admin's to set (docs/aws-tags.md, Day 2)",
        ]);
        expect(patchOf(result)).toEqual({
            apiVersion: "config.openshift.io/v1",
            kind: "Infrastructure",
            metadata: exactlyTheUserTags.metadata,
        });
    });

    test("GIVEN propagation off WHEN rendered THEN there is no Infrastructure patch and the CRD is not read", async () => {
        const result = await renderConfig(openshift({ propagateUserTags: false }), { cluster: [infrastructure] });
        expect(result.errors).toEqual([]);
        expect(resourcesOfType(result, PATCH)).toEqual([]);
        expect(resourcesOfType(result, CRD_TYPE)).toEqual([]);
    });

    test("GIVEN an extra taggable AWS resource declared outside the AwsTags component WHEN the program is rendered THEN it carries the user tags at creation, its own tag winning", async () => {
        const result = await renderConfig(openshift({ propagateUserTags: false, userTags: { team: "platform", costCenter: "7536" } }), {
            cluster: [infrastructure],
            program: path.join(__dirname, "fixtures", "extra-resource-program"),
        });
        expect(result.errors).toEqual([]);
        const topic = resourceNamed(result, "aws:sns/topic:Topic", "declared-elsewhere");
        expect(topic.parent).not.toBe("aws-tags");
        expect(topic.inputs.tags).toEqual({ adminContact: "installer", costCenter: "7536", owner: "platform-team", team: "alerts" });
    });

    test("GIVEN aws.ignoreTags and an extra AWS resource declared with the default provider WHEN rendered THEN it is managed by the stack's AWS provider, which carries the ignoreTags", async () => {
        const ignoreTags = { keys: ["backup-plan"], keyPrefixes: ["finops:"] };
        const result = await renderConfig(openshift({ propagateUserTags: false, ignoreTags }), {
            cluster: [infrastructure],
            program: path.join(__dirname, "fixtures", "extra-resource-program"),
        });
        expect(result.errors).toEqual([]);
        expect(resourceNamed(result, "aws:sns/topic:Topic", "declared-elsewhere").options.provider).toBe("aws");
        // Provider configuration reaches the engine JSON-encoded, as Pulumi passes it to the provider.
        expect(JSON.parse(resourceNamed(result, "pulumi:providers:aws", "aws").inputs.ignoreTags as string)).toEqual(ignoreTags);
        // No AWS resource of the render is left to the engine's default provider, which the stack cannot configure.
        const providers = result.resources.filter((r) => r.type === "pulumi:providers:aws").map((r) => r.name);
        expect(providers).toEqual(["aws"]);
    });

    test("GIVEN the example and every trust the config allows WHEN rendered THEN no trust policy names an account root", async () => {
        const renders = await Promise.all([
            renderFile(EXAMPLE, { cluster: ClusterState.fromFile(CLUSTER) }),
            renderConfig({
                cluster: { name: "c1", platform: "kubernetes", kubeContext: "test" },
                aws: {
                    enabled: true,
                    region: "us-east-1",
                    imageRegistryStorage: { enabled: true, trustedPrincipalArn: "arn:aws:iam::123456789012:role/registry-admin" },
                },
            }),
        ]);
        const policies = renders.flatMap((r) =>
            resourcesOfType(r, "aws:iam/role:Role").map((role) => role.inputs.assumeRolePolicy as string),
        );
        expect(policies).toHaveLength(2);
        expect(policies.filter((p) => /:root"/.test(p))).toEqual([]);
    });

    test.each([
        // An OCI layout is for a stack that renders to a directory: a live stack must publish the image.
        [
            "written as an OCI layout",
            { renderYamlToDirectory: "out/c1" },
            { output: "oci-layout", repository: "cluster-platform/subscription-webhook" },
        ],
        [
            "pushed to a registry host of its own",
            { kubeContext: "test" },
            { output: "registry", repository: "quay.example.com/platform/subscription-webhook" },
        ],
    ])("GIVEN the webhook image %s WHEN rendered THEN no ECR repository exists", async (_name, connection, webhookImage) => {
        const result = await renderConfig({
            cluster: { name: "c1", platform: "kubernetes", ...connection },
            aws: { enabled: true, region: "us-east-1" },
            subscriptions: { enabled: true },
            webhookImage,
        });
        expect(result.problems).toEqual([]);
        expect(resourcesOfType(result, "aws:ecr/repository:Repository")).toEqual([]);
        expect(result.stackOutputs.awsWebhookImageRepositoryUrl).toBeUndefined();
    });
});
