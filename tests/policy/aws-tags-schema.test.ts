/**
 * The aws-tags policies on the tag sets the providers' schemas locate (issue 36, point 4): the
 * installer's and CAPA's ownership keys, nested sets judged for keys, format and count like a
 * resource's own, tag resources as one more tag set, the aws-native provider's defaultTags, an
 * ignoreTags covering a required key, tagPolicyCompliance, Cloud Control documents and what the
 * pack cannot see. Each case: its inputs, the policy, the exact violations.
 */
import { ownershipKeyProblem } from "../../components/aws-tags/rules";
import { TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { providerSettings } from "../../policy-packs/aws-tags/provider-settings";
import { sideChannelTagRules } from "../../policy-packs/aws-tags/side-channel-policy";
import { noNameUserTag, requiredTags, reservedTagKeys, tagCount, tagFormat } from "../../policy-packs/aws-tags/tag-policies";
import { unjudgedContent, unjudgedTypes } from "../../policy-packs/aws-tags/unjudged-types";
import { untaggedResources } from "../../policy-packs/aws-tags/untagged-resources";
import { resource, UNKNOWN_VALUE, violations as reported } from "./support";

/** The violations one policy reports, each as its last line (an advisory one arrives after the policy's description). */
const violations = (...args: Parameters<typeof reported>) => reported(...args).map((v) => v.slice(v.lastIndexOf("\n") + 1));

const REQUIRED = { requiredTags: ["costCenter"] };
const TAGS = { costCenter: "7536" };
const items = (tags: Record<string, string>, extra: Record<string, unknown> = {}) =>
    Object.entries(tags).map(([key, value]) => ({ key, value, ...extra }));
const OWNERSHIP = ownershipKeyProblem("openshiftClusterID");
const CAPA = ownershipKeyProblem("sigs.k8s.io/cluster-api-provider-aws/cluster/prod-west-abcde");

function provider(type: "aws" | "aws-native", props: Record<string, unknown> = {}) {
    return {
        type: `pulumi:providers:${type}`,
        name: "explicit",
        urn: `urn:pulumi:test::cluster-platform::pulumi:providers:${type}::explicit`,
        props: { region: "us-east-1", ...props },
    };
}

describe("the installer's and Cluster API's ownership keys", () => {
    test("GIVEN another cluster's openshiftClusterID or CAPA cluster key on a bucket WHEN judged THEN each is refused naming destroy's rule", () => {
        const bucket = resource("aws:s3/bucket:Bucket", "b", {
            tags: { ...TAGS, openshiftClusterID: "0d6f1b5e", "sigs.k8s.io/cluster-api-provider-aws/cluster/prod-west-abcde": "owned" },
        });
        expect(violations(reservedTagKeys, bucket)).toEqual([
            `aws:s3/bucket:Bucket "b" tag "openshiftClusterID": ${OWNERSHIP}`,
            `aws:s3/bucket:Bucket "b" tag "sigs.k8s.io/cluster-api-provider-aws/cluster/prod-west-abcde": ${CAPA}`,
        ]);
    });

    test("GIVEN an ownership key in the provider's defaultTags WHEN judged THEN every resource of that provider is refused", () => {
        const queue = resource(
            "aws:sqs/queue:Queue",
            "q",
            { tags: TAGS },
            { provider: provider("aws", { defaultTags: JSON.stringify({ tags: { openshiftClusterID: "x" } }) }) },
        );
        expect(violations(reservedTagKeys, queue)).toEqual([`aws:sqs/queue:Queue "q" tag "openshiftClusterID": ${OWNERSHIP}`]);
    });
});

describe("nested tag sets: keys, format and count, as for a resource's own", () => {
    test("GIVEN a launch template whose volume specification carries a reserved key, a bad value and 51 tags WHEN judged THEN each rule names the specification", () => {
        const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
        const template = resource("aws:ec2/launchTemplate:LaunchTemplate", "lt", {
            tags: TAGS,
            tagSpecifications: [
                { resourceType: "instance", tags: { ...TAGS, "kubernetes.io/cluster/other": "owned" } },
                { resourceType: "volume", tags: { ...TAGS, team: "a*b" } },
                { resourceType: "network-interface", tags: many },
            ],
        });
        expect(violations(reservedTagKeys, template)).toEqual([
            'aws:ec2/launchTemplate:LaunchTemplate "lt" tagSpecifications[0].tags (instance) tag "kubernetes.io/cluster/other": key is in the kubernetes.io namespace, which the platform reserves',
        ]);
        expect(violations(tagFormat, template)).toEqual([
            'aws:ec2/launchTemplate:LaunchTemplate "lt" tagSpecifications[1].tags (volume) tag "team": value contains characters AWS refuses "*"; allowed are Unicode letters, numbers and spaces, and _ . : / = + - @',
        ]);
        expect(violations(tagCount, template)).toEqual([
            'aws:ec2/launchTemplate:LaunchTemplate "lt" tagSpecifications[2].tags (network-interface) carries 51 tags; AWS allows at most 50 tags on a resource',
        ]);
    });

    test("GIVEN a spot instance request whose volumes lack a required key or carry an ownership key WHEN judged THEN its volumes are named", () => {
        const spot = (volumeTags: Record<string, string>) =>
            resource("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "s", { tags: TAGS, volumeTags });
        expect(violations(requiredTags, spot({ team: "a" }), REQUIRED)).toEqual([
            'aws:ec2/spotInstanceRequest:SpotInstanceRequest "s" volumes (volumeTags) lacks the required tag "costCenter" (it carries "team")',
        ]);
        expect(violations(reservedTagKeys, spot({ ...TAGS, openshiftClusterID: "x" }))).toEqual([
            `aws:ec2/spotInstanceRequest:SpotInstanceRequest "s" volumes (volumeTags) tag "openshiftClusterID": ${OWNERSHIP}`,
        ]);
        expect(
            violations(requiredTags, resource("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "s", { tags: TAGS }), REQUIRED),
        ).toEqual([
            'aws:ec2/spotInstanceRequest:SpotInstanceRequest "s" root volume (rootBlockDevice.tags) lacks the required tag "costCenter" (it carries no tags)',
        ]);
    });

    test("GIVEN a DynamoDB global table (aws-native) whose replica carries an ownership key and lacks a required key WHEN judged THEN the replica is named", () => {
        const table = resource("aws-native:dynamodb:GlobalTable", "t", {
            replicas: [
                { region: "us-east-1", tags: items({ ...TAGS }) },
                { region: "eu-west-1", tags: items({ openshiftClusterID: "x" }) },
            ],
        });
        expect(violations(reservedTagKeys, table)).toEqual([
            `aws-native:dynamodb:GlobalTable "t" replicas[1].tags tag "openshiftClusterID": ${OWNERSHIP}`,
        ]);
        expect(violations(requiredTags, table, REQUIRED)).toEqual([
            'aws-native:dynamodb:GlobalTable "t" replicas[1].tags lacks the required tag "costCenter" (it carries "openshiftClusterID")',
        ]);
    });

    test("GIVEN an aws-native Auto Scaling group whose required key is not propagated at launch and whose items carry a reserved key WHEN judged THEN both are named", () => {
        const group = resource("aws-native:autoscaling:AutoScalingGroup", "g", {
            maxSize: "1",
            minSize: "0",
            tags: [
                { key: "costCenter", value: "7536", propagateAtLaunch: false },
                { key: "team.openshift.io/x", value: "a", propagateAtLaunch: true },
            ],
        });
        expect(violations(requiredTags, group, REQUIRED)).toEqual([
            'aws-native:autoscaling:AutoScalingGroup "g" instances (tags with propagateAtLaunch) lacks the required tag "costCenter" (it carries "team.openshift.io/x")',
        ]);
        expect(violations(reservedTagKeys, group)).toEqual([
            'aws-native:autoscaling:AutoScalingGroup "g" tag "team.openshift.io/x": key is in the openshift.io namespace, which the platform reserves',
        ]);
    });

    test("GIVEN a selector (an S3 lifecycle filter on the cluster's key) WHEN judged THEN it passes: it tags nothing", () => {
        const lifecycle = resource("aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2", "l", {
            bucket: "b",
            rules: [{ id: "r", status: "Enabled", filter: { and: { tags: { "kubernetes.io/cluster/x": "owned" } } } }],
        });
        expect([...violations(reservedTagKeys, lifecycle), ...violations(unjudgedContent, lifecycle)]).toEqual([]);
    });
});

describe("tag resources: one more tag set", () => {
    const tag = (props: Record<string, unknown>) => resource("aws:ec2/tag:Tag", "t", props);
    const clusterIds = { clusterIds: ["prod-east-7x2kq"] };

    test("GIVEN a tag resource writing Name, or the cloud provider's keys onto this cluster's subnet WHEN judged THEN it passes (what the installer itself writes)", () => {
        expect(violations(reservedTagKeys, tag({ resourceId: "i-1", key: "Name", value: "bastion" }))).toEqual([]);
        expect(violations(noNameUserTag, tag({ resourceId: "i-1", key: "Name", value: "bastion" }))).toEqual([]);
        expect(violations(reservedTagKeys, tag({ resourceId: "subnet-1", key: "kubernetes.io/role/elb", value: "1" }), clusterIds)).toEqual(
            [],
        );
        expect(
            violations(
                reservedTagKeys,
                tag({ resourceId: UNKNOWN_VALUE, key: "kubernetes.io/cluster/prod-east-7x2kq", value: "shared" }),
                clusterIds,
            ),
        ).toEqual([]);
    });

    test("GIVEN a tag resource writing another cluster's key, an ownership key, the elb role onto an instance, or a blank value WHEN judged THEN refused", () => {
        expect(
            violations(reservedTagKeys, tag({ resourceId: "subnet-1", key: "kubernetes.io/cluster/other", value: "shared" }), clusterIds),
        ).toEqual([
            'aws:ec2/tag:Tag "t" tag "kubernetes.io/cluster/other": key is in the kubernetes.io namespace, which the platform reserves',
        ]);
        expect(violations(reservedTagKeys, tag({ resourceId: "vpc-1", key: "openshiftClusterID", value: "x" }))).toEqual([
            `aws:ec2/tag:Tag "t" tag "openshiftClusterID": ${OWNERSHIP}`,
        ]);
        expect(violations(reservedTagKeys, tag({ resourceId: "i-1", key: "kubernetes.io/role/elb", value: "1" }), clusterIds)).toEqual([
            'aws:ec2/tag:Tag "t" tag "kubernetes.io/role/elb": key is in the kubernetes.io namespace, which the platform reserves',
        ]);
        expect(violations(tagFormat, tag({ resourceId: "i-1", key: "team", value: " " }))).toEqual([
            'aws:ec2/tag:Tag "t" tag "team": value " " is only whitespace: it names nothing, and services that trim it see an empty value',
        ]);
    });

    test("GIVEN an Auto Scaling tag of a required key not propagated at launch WHEN judged THEN refused", () => {
        const asgTag = resource("aws:autoscaling/tag:Tag", "t", {
            autoscalingGroupName: "g",
            tag: { key: "costCenter", value: "1", propagateAtLaunch: false },
        });
        expect(violations(sideChannelTagRules, asgTag, REQUIRED)).toEqual([
            'aws:autoscaling/tag:Tag "t" writes tag "costCenter": propagateAtLaunch is false, so the group\'s instances do not carry this required tag',
        ]);
    });
});

describe("the providers' settings", () => {
    test("GIVEN an aws-native provider whose defaultTags hold the required key, Name and a reserved key WHEN judged THEN the key counts, Name and the reserved key are refused", () => {
        const queue = resource(
            "aws-native:sqs:Queue",
            "q",
            {},
            {
                provider: provider("aws-native", {
                    defaultTags: JSON.stringify({ tags: { ...TAGS, Name: "all", "openshift.io/x": "y" } }),
                }),
            },
        );
        expect(violations(requiredTags, queue, REQUIRED)).toEqual([]);
        expect(violations(untaggedResources, queue)).toEqual([]);
        expect(violations(noNameUserTag, queue)).toEqual([
            'aws-native:sqs:Queue "q" tag "Name" comes from the aws-native provider\'s defaultTags: "Name" key is not allowed for user defined tags: each resource sets its own Name',
        ]);
        expect(violations(reservedTagKeys, queue)).toEqual([
            'aws-native:sqs:Queue "q" tag "openshift.io/x": key is in the openshift.io namespace, which the platform reserves',
        ]);
    });

    test("GIVEN an aws-native provider's defaultTags as a plain map, or unknown in a preview WHEN judged THEN the map counts and unknown defaults wait for the update", () => {
        const plain = resource(
            "aws-native:sqs:Queue",
            "q",
            {},
            { provider: provider("aws-native", { defaultTags: JSON.stringify(TAGS) }) },
        );
        expect(violations(requiredTags, plain, REQUIRED)).toEqual([]);
        const later = resource("aws-native:sqs:Queue", "q", {}, { provider: provider("aws-native", { defaultTags: UNKNOWN_VALUE }) });
        expect([...violations(requiredTags, later, REQUIRED), ...violations(untaggedResources, later)]).toEqual([]);
    });

    test("GIVEN a provider whose ignoreTags covers a required key, by key or by prefix WHEN judged THEN refused: the key would never reach AWS", () => {
        const on = (ignoreTags: Record<string, string[]>) =>
            resource("aws:sqs/queue:Queue", "q", { tags: TAGS }, { provider: provider("aws", { ignoreTags: JSON.stringify(ignoreTags) }) });
        expect(violations(requiredTags, on({ keyPrefixes: ["cost"] }), REQUIRED)).toEqual([
            'aws:sqs/queue:Queue "q": its provider "explicit" ignores the required tag "costCenter" (ignoreTags), so it neither applies nor tracks it',
        ]);
        expect(violations(requiredTags, on({ keys: ["costCenter"] }), REQUIRED)).toHaveLength(1);
        expect(violations(requiredTags, on({ keys: ["backup"] }), REQUIRED)).toEqual([]);
    });

    test("GIVEN tagPolicyCompliance required at warning WHEN a provider sets none, disabled, warning or error THEN the first two are refused", () => {
        const on = (props: Record<string, unknown>) =>
            resource("aws:sqs/queue:Queue", "q", { tags: TAGS }, { provider: provider("aws", props) });
        const config = { tagPolicyCompliance: "warning" };
        expect(violations(providerSettings, on({}), config)).toEqual([
            'aws:sqs/queue:Queue "q": its provider "explicit" sets tagPolicyCompliance not at all, below "warning" (the environment\'s TF_AWS_TAG_POLICY_COMPLIANCE does not count: the pack cannot see it, and it differs per runner)',
        ]);
        expect(violations(providerSettings, on({ tagPolicyCompliance: "disabled" }), config)).toHaveLength(1);
        expect(violations(providerSettings, on({ tagPolicyCompliance: "warning" }), config)).toEqual([]);
        expect(violations(providerSettings, on({ tagPolicyCompliance: "error" }), config)).toEqual([]);
        // Not configured: nothing is required of it.
        expect(violations(providerSettings, on({}))).toEqual([]);
    });
});

describe("documents: Cloud Control's desiredState and aws-native extensions", () => {
    const cloudControl = (typeName: string, desiredState: unknown) =>
        resource("aws:cloudcontrol/resource:Resource", "cc", {
            typeName,
            desiredState: typeof desiredState === "string" ? desiredState : JSON.stringify(desiredState),
        });

    test("GIVEN a Cloud Control bucket without tags, or with another cluster's key WHEN judged THEN judged by AWS::S3::Bucket's schema: untagged, lacking, reserved", () => {
        const bare = cloudControl("AWS::S3::Bucket", { BucketName: "b" });
        expect(violations(untaggedResources, bare)).toEqual(['aws:cloudcontrol/resource:Resource "cc" carries no tags']);
        expect(violations(requiredTags, bare, REQUIRED)).toEqual([
            'aws:cloudcontrol/resource:Resource "cc" lacks the required tag "costCenter" (it carries no tags)',
        ]);
        const foreign = cloudControl("AWS::S3::Bucket", {
            Tags: [
                { Key: "costCenter", Value: "1" },
                { Key: "openshiftClusterID", Value: "x" },
            ],
        });
        expect(violations(reservedTagKeys, foreign)).toEqual([
            `aws:cloudcontrol/resource:Resource "cc" tag "openshiftClusterID": ${OWNERSHIP}`,
        ]);
        expect(violations(requiredTags, foreign, REQUIRED)).toEqual([]);
    });

    test("GIVEN a Cloud Control launch template WHEN its nested tag specification carries a reserved key THEN it is named inside the document", () => {
        const template = cloudControl("AWS::EC2::LaunchTemplate", {
            LaunchTemplateData: {
                TagSpecifications: [
                    { ResourceType: "instance", Tags: [{ Key: "costCenter", Value: "1" }] },
                    {
                        ResourceType: "volume",
                        Tags: [
                            { Key: "costCenter", Value: "1" },
                            { Key: "kubernetes.io/x", Value: "y" },
                        ],
                    },
                ],
            },
        });
        expect(violations(reservedTagKeys, template)).toEqual([
            'aws:cloudcontrol/resource:Resource "cc" desiredState.LaunchTemplateData.TagSpecifications[1].Tags (volume) tag "kubernetes.io/x": key is in the kubernetes.io namespace, which the platform reserves',
        ]);
        expect(violations(requiredTags, template, REQUIRED)).toEqual([]);
        const instancesOnly = cloudControl("AWS::EC2::LaunchTemplate", {
            LaunchTemplateData: { TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: "costCenter", Value: "1" }] }] },
        });
        expect(violations(requiredTags, instancesOnly, REQUIRED)).toEqual([
            'aws:cloudcontrol/resource:Resource "cc" has no desiredState.launchTemplateData.tagSpecifications entry for resourceType "volume": the volumes it launches carry no tags',
        ]);
        expect(violations(requiredTags, resource("aws-native:ec2:LaunchTemplate", "lt", { launchTemplateData: {} }), REQUIRED)).toEqual([
            'aws-native:ec2:LaunchTemplate "lt" has no launchTemplateData.tagSpecifications entry for resourceType "instance": the instances it launches carry no tags',
            'aws-native:ec2:LaunchTemplate "lt" has no launchTemplateData.tagSpecifications entry for resourceType "volume": the volumes it launches carry no tags',
        ]);
    });

    test("GIVEN a Cloud Control type the schema does not know, an unreadable document, or one not known yet WHEN judged THEN the first two are reported as not judged, the last waits", () => {
        expect(violations(unjudgedContent, cloudControl("Acme::Widgets::Widget", { Tags: [] }))).toEqual([
            'aws:cloudcontrol/resource:Resource "cc" not judged: its CloudFormation type "Acme::Widgets::Widget" is not in the aws-native schema, so the tags in its desiredState cannot be located',
        ]);
        expect(violations(unjudgedContent, cloudControl("AWS::S3::Bucket", "not json"))).toEqual([
            'aws:cloudcontrol/resource:Resource "cc" not judged: its desiredState is not a JSON object the pack can read',
        ]);
        const later = resource("aws:cloudcontrol/resource:Resource", "cc", { typeName: "AWS::S3::Bucket", desiredState: UNKNOWN_VALUE });
        expect([...violations(unjudgedContent, later), ...violations(untaggedResources, later)]).toEqual([]);
    });

    test("GIVEN aws-native extensions WHEN of a known CloudFormation type, or third-party with a declared tags property, or neither THEN judged, judged, or reported as not judged", () => {
        const extension = (props: Record<string, unknown>) => resource("aws-native:index:ExtensionResource", "x", props);
        expect(violations(untaggedResources, extension({ type: "AWS::SQS::Queue", properties: {} }))).toEqual([
            'aws-native:index:ExtensionResource "x" carries no tags',
        ]);
        const thirdParty = extension({
            type: "Acme::Widgets::Widget",
            properties: { Labels: [{ Key: "openshiftClusterID", Value: "x" }] },
            tagsProperty: "Labels",
        });
        expect(violations(reservedTagKeys, thirdParty)).toEqual([
            `aws-native:index:ExtensionResource "x" tag "openshiftClusterID": ${OWNERSHIP}`,
        ]);
        expect(violations(unjudgedContent, extension({ type: "Acme::Widgets::Widget", properties: { Labels: [] } }))).toEqual([
            'aws-native:index:ExtensionResource "x" not judged: its CloudFormation type "Acme::Widgets::Widget" is not in the aws-native schema, so the tags in its properties cannot be located',
        ]);
    });
});

describe("what the pack cannot see is reported, never passed in silence", () => {
    test("GIVEN a CloudFormation stack, a set the schema does not classify, and unknown types WHEN judged THEN each is reported as not judged; an unknown type with tags is refused", () => {
        expect(violations(unjudgedContent, resource("aws:cloudformation/stack:Stack", "s", { tags: TAGS, templateBody: "{}" }))).toEqual([
            'aws:cloudformation/stack:Stack "s" not judged: the resources its template declares are not judged: the pack cannot see their tags',
        ]);
        const workflow = resource("aws:transfer/workflow:Workflow", "w", {
            tags: TAGS,
            steps: [{ type: "TAG", tagStepDetails: { tags: [{ key: "k", value: "v" }] } }],
        });
        expect(violations(unjudgedContent, workflow)).toEqual([
            'aws:transfer/workflow:Workflow "w" not judged: its steps[0].tagStepDetails.tags holds tags the schema does not say are the tags of a resource it creates ("Array that contains from 1 to 10 key/value pairs. See `tags` Block below.")',
        ]);
        expect(violations(unjudgedContent, resource("aws-native:brandnew:Thing", "t", {}))).toEqual([
            `aws-native:brandnew:Thing "t" not judged: not in the schema derived from ${TAGGABLE_SOURCE}`,
        ]);
        expect(violations(unjudgedTypes, resource("aws-native:brandnew:Thing", "t", { tags: [] }))).toEqual([
            `aws-native:brandnew:Thing "t" cannot judge: not in the schema derived from ${TAGGABLE_SOURCE}, though it declares tags`,
        ]);
    });

    test("GIVEN untaggable aws-native types WHEN judged THEN nothing is reported (no longer refused as declaring no tags)", () => {
        for (const type of ["aws-native:iam:RolePolicy", "aws-native:s3:BucketPolicy", "aws-native:ec2:Route"]) {
            const target = resource(type, "r", {});
            expect([
                type,
                ...violations(untaggedResources, target),
                ...violations(unjudgedTypes, target),
                ...violations(unjudgedContent, target),
            ]).toEqual([type]);
        }
    });
});

describe("bad input: the pack's config, every problem at once, before any resource is judged", () => {
    const bucket = resource("aws:s3/bucket:Bucket", "registry", { tags: TAGS });

    test("GIVEN requiredTags as a string, a list with a number, or a misspelled knob beside a wrong type WHEN a resource is judged THEN one error names each key, its value and the rule, not a TypeError", () => {
        expect(() => violations(requiredTags, bucket, { requiredTags: "costCenter" })).toThrow(
            'invalid config for policy aws-required-tags: 1 problem\n  - aws-required-tags.requiredTags: "costCenter" must be a list of strings',
        );
        expect(() => violations(reservedTagKeys, bucket, { allowedKeys: ["kubernetes.io/*", 7], clusterIds: "prod" })).toThrow(
            [
                "invalid config for policy aws-reserved-tag-keys: 2 problems",
                "  - aws-reserved-tag-keys.allowedKeys[1]: 7 must be a string",
                '  - aws-reserved-tag-keys.clusterIds: "prod" must be a list of strings',
            ].join("\n"),
        );
        expect(() => violations(providerSettings, bucket, { tagPolicyCompliance: "strict", ignoreTagKey: ["team"] })).toThrow(
            [
                "invalid config for policy aws-provider-settings: 2 problems",
                '  - aws-provider-settings.ignoreTagKey: "ignoreTagKey" is not a config key of policy aws-provider-settings (its keys: ignoreTagKeys, ignoreTagKeyPrefixes, tagPolicyCompliance)',
                '  - aws-provider-settings.tagPolicyCompliance: "strict" must be one of "disabled", "warning", "error"',
            ].join("\n"),
        );
    });

    test("GIVEN the same knobs with values of their schema WHEN judged THEN they are accepted", () => {
        expect(violations(requiredTags, bucket, { requiredTags: ["costCenter"] })).toEqual([]);
        expect(violations(providerSettings, bucket, { tagPolicyCompliance: "disabled" })).toEqual([]);
    });
});
