import * as fs from "node:fs";
import * as path from "node:path";
import { ASSET_TYPES } from "../../components/aws-assets/assets";
import {
    containerOf,
    LIST_ITEM_FIELD_VALUES,
    listTagsToMap,
    mapToListTags,
    nativeTokenOfCfnType,
    PROVIDERS,
    TAG_SCHEMA,
    tagShapeOf,
    TAGGABLE_TYPES,
    typeTagSpec,
} from "../../components/aws-tags/taggable";
import { deriveProvider, inputsFingerprint, installedVersions, nestedRole } from "../../scripts/aws/taggable-types";
import { temporaryDirectory } from "../helpers/temporary";

const nestedAt = (type: string, at: string) => typeTagSpec(type)?.nested?.find((set) => set.path === at);

describe("the tag schema, derived from @pulumi/aws and @pulumi/aws-native", () => {
    test("GIVEN the installed packages and the generating script WHEN fingerprinted THEN the committed schema was derived from exactly them (run npm run gen:taggable after changing either; npm run gen:taggable -- --check regenerates and compares the whole file)", () => {
        const versions = installedVersions();
        expect(TAG_SCHEMA.fingerprint).toBe(inputsFingerprint(versions));
        expect(PROVIDERS.map((p) => TAG_SCHEMA.providers[p].package)).toEqual([
            `@pulumi/aws@${versions.aws}`,
            `@pulumi/aws-native@${versions["aws-native"]}`,
        ]);
    });

    test("GIVEN the derived schema THEN each provider's own tag sets are told apart by shape and by whether the provider's default tags reach them", () => {
        expect(typeTagSpec("aws:s3/bucket:Bucket")?.own).toEqual({ path: "tags", shape: "map", defaults: true });
        expect(tagShapeOf("aws:autoscaling/group:Group")).toEqual({
            kind: "list",
            itemType: "autoscaling.GroupTag",
            keyField: "key",
            valueField: "value",
            requiredFields: { propagateAtLaunch: "boolean" },
        });
        // The provider's defaultTags never reach an Auto Scaling group (its tags have no tagsAll).
        expect(typeTagSpec("aws:autoscaling/group:Group")?.own?.defaults).toBe(false);
        expect(typeTagSpec("aws-native:s3:Bucket")?.own).toEqual({
            path: "tags",
            shape: "list",
            itemType: "TagArgs",
            keyField: "key",
            valueField: "value",
            defaults: true,
        });
        expect(typeTagSpec("aws-native:autoscaling:AutoScalingGroup")?.own?.requiredFields).toEqual({ propagateAtLaunch: "boolean" });
        // CloudFormation's tagging.tagProperty is not always Tags.
        expect(typeTagSpec("aws-native:route53:HostedZone")?.own?.path).toBe("hostedZoneTags");
        expect(typeTagSpec("aws-native:cognito:UserPool")?.own).toMatchObject({ path: "userPoolTags", shape: "map" });
        expect(typeTagSpec("aws-native:lex:Bot")?.own?.path).toBe("botTags");
    });

    test("GIVEN nested tag sets THEN those that tag what the resource creates are told from those that select other resources", () => {
        expect(nestedAt("aws:ec2/launchTemplate:LaunchTemplate", "tagSpecifications[].tags")?.role).toBe("tags");
        expect(nestedAt("aws:ec2/instance:Instance", "volumeTags")?.role).toBe("tags");
        expect(nestedAt("aws:ec2/instance:Instance", "rootBlockDevice.tags")).toMatchObject({ role: "tags", defaults: true });
        expect(nestedAt("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "volumeTags")?.role).toBe("tags");
        expect(nestedAt("aws:ec2/spotFleetRequest:SpotFleetRequest", "launchSpecifications[].tags")?.role).toBe("tags");
        expect(nestedAt("aws-native:dynamodb:GlobalTable", "replicas[].tags")?.role).toBe("tags");
        expect(nestedAt("aws-native:ec2:LaunchTemplate", "launchTemplateData.tagSpecifications[].tags")?.role).toBe("tags");
        // Rules that match other resources' tags.
        expect(nestedAt("aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2", "rules[].filter.and.tags")?.role).toBe(
            "selects",
        );
        expect(nestedAt("aws:dlm/lifecyclePolicy:LifecyclePolicy", "policyDetails.targetTags")?.role).toBe("selects");
        expect(nestedAt("aws-native:dlm:LifecyclePolicy", "policyDetails.targetTags")?.role).toBe("selects");
        expect(nestedAt("aws:backup/selection:Selection", "selectionTags")?.role).toBe("selects");
        expect(nestedAt("aws:inspector/resourceGroup:ResourceGroup", "tags")?.role).toBe("selects");
        // Lake Formation's LF-tags are not AWS resource tags.
        expect(nestedAt("aws:lakeformation/resourceLfTags:ResourceLfTags", "lfTags")?.role).toBe("unclassified");
    });

    test("GIVEN the classifier WHEN the structure and the description disagree or say nothing THEN it decides by the rules in order", () => {
        expect(nestedRole(["rules[]", "filter"], "tags", [], "Map of tags to assign")).toBe("selects");
        expect(nestedRole([], "targetTags", ["resourceType"], "")).toBe("selects");
        expect(
            nestedRole(
                ["targets[]"],
                "resourceTags",
                ["resourceType"],
                "Tag(s) the resources need to have to be considered a valid target",
            ),
        ).toBe("selects");
        expect(nestedRole(["blocks[]"], "tags", ["tagsAll"], "")).toBe("tags");
        expect(nestedRole(["specs[]"], "tags", ["resourceType"], "")).toBe("tags");
        expect(
            nestedRole(
                ["specs[]"],
                "tags",
                [],
                "A map of tags to assign to the resource. If configured with a provider `defaultTags` configuration block present, tags with matching keys will overwrite those defined at the provider-level.",
            ),
        ).toBe("tags");
        expect(nestedRole(["x"], "tags", [], "")).toBe("unclassified");
        expect(nestedRole(["x"], "tags", [], "Set of LF-tags to attach to the resource.")).toBe("unclassified");
    });

    test("GIVEN types holding other resources in documents THEN they are containers; Cloud Control's types map to aws-native tokens", () => {
        expect(containerOf("aws:cloudformation/stack:Stack")).toBe("cloudformation-template");
        expect(containerOf("aws:cloudcontrol/resource:Resource")).toBe("cloudcontrol-desired-state");
        expect(containerOf("aws-native:index:ExtensionResource")).toBe("cloudformation-extension");
        // pipes' desiredState is RUNNING or STOPPED, not a document.
        expect(containerOf("aws:pipes/pipe:Pipe")).toBeUndefined();
        expect(nativeTokenOfCfnType("AWS::S3::Bucket")).toBe("aws-native:s3:Bucket");
        expect(nativeTokenOfCfnType("AWS::EC2::VPC")).toBe("aws-native:ec2:Vpc");
        expect(nativeTokenOfCfnType("Acme::Widgets::Widget")).toBeUndefined();
    });

    test("GIVEN every taggable type the stack creates THEN its own tags are a map", () => {
        for (const type of Object.values(ASSET_TYPES)) {
            expect([type, tagShapeOf(type)]).toEqual([type, { kind: "map" }]);
        }
        expect(TAGGABLE_TYPES).toContain("aws:ecr/repository:Repository");
        expect(TAGGABLE_TYPES).toContain("aws-native:s3:Bucket");
    });

    test("GIVEN every list-shaped own tag set THEN the tagger knows a value for each other required field of its items", () => {
        for (const type of TAGGABLE_TYPES) {
            const shape = tagShapeOf(type);
            for (const field of shape?.kind === "list" ? Object.keys(shape.requiredFields) : []) {
                expect([type, field, field in LIST_ITEM_FIELD_VALUES]).toEqual([type, field, true]);
            }
        }
    });

    test("GIVEN list-shaped tags WHEN merged tags are written back THEN declared items keep their fields and new ones get the defaults, in key order", () => {
        const shape = {
            itemType: "autoscaling.GroupTag",
            keyField: "key",
            valueField: "value",
            requiredFields: { propagateAtLaunch: "boolean" },
        };
        const declared = [{ key: "team", value: "a", propagateAtLaunch: false }];
        expect(listTagsToMap(declared, shape)).toEqual({ team: "a" });
        expect(mapToListTags({ team: "b", cost: "1" }, shape, declared)).toEqual([
            { key: "cost", value: "1", propagateAtLaunch: true },
            { key: "team", value: "b", propagateAtLaunch: false },
        ]);
    });
});

describe("the derivation, on a package written for the test", () => {
    /** A provider package of the SDK generator's layout: types/input.d.ts, one module's .d.ts and .js. */
    function fakePackage(moduleDts: string, moduleJs: string, inputs: string): string {
        const root = temporaryDirectory("tag-schema-");
        fs.mkdirSync(path.join(root, "types"));
        fs.mkdirSync(path.join(root, "fleet"));
        fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "@pulumi/fake", version: "1.2.3" }));
        fs.writeFileSync(path.join(root, "types", "input.d.ts"), inputs);
        fs.writeFileSync(path.join(root, "fleet", "things.d.ts"), moduleDts);
        fs.writeFileSync(path.join(root, "fleet", "things.js"), moduleJs);
        return root;
    }

    test("GIVEN classes with own, nested, selecting and no tags, and a template container WHEN derived THEN each is recorded as the schema says", () => {
        const root = fakePackage(
            `import * as pulumi from "@pulumi/pulumi";
import * as inputs from "../types/input";
export declare class Fleet extends pulumi.CustomResource { readonly tagsAll: pulumi.Output<{[key: string]: string}>; }
export interface FleetArgs {
    tags?: pulumi.Input<{[key: string]: pulumi.Input<string>} | undefined>;
    launch?: pulumi.Input<inputs.fleet.FleetLaunch | undefined>;
    /** Tags that identify the volumes to exclude. */
    excludeTags?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
}
export declare class Plain extends pulumi.CustomResource { }
export interface PlainArgs { name?: pulumi.Input<string>; }
export declare class Stack extends pulumi.CustomResource { readonly tagsAll: pulumi.Output<{[key: string]: string}>; }
export interface StackArgs { templateBody?: pulumi.Input<string>; tags?: pulumi.Input<{[key: string]: pulumi.Input<string>}>; }`,
            `class Fleet extends pulumi.CustomResource { static __pulumiType = 'fake:fleet/fleet:Fleet'; }
class Plain extends pulumi.CustomResource { static __pulumiType = 'fake:fleet/plain:Plain'; }
class Stack extends pulumi.CustomResource { static __pulumiType = 'fake:fleet/stack:Stack'; }`,
            `export declare namespace fleet {
    interface FleetLaunch {
        /** The tags to apply to the instances it launches. */
        tags?: pulumi.Input<pulumi.Input<inputs.fleet.FleetTag>[]>;
        resourceType?: pulumi.Input<string>;
    }
    interface FleetTag { key: pulumi.Input<string>; value: pulumi.Input<string>; propagate: pulumi.Input<boolean>; }
}`,
        );
        expect(deriveProvider("aws", root)).toEqual({
            package: "@pulumi/aws@1.2.3",
            taggable: {
                "fake:fleet/fleet:Fleet": {
                    own: { path: "tags", shape: "map", defaults: true },
                    nested: [
                        {
                            path: "launch.tags",
                            shape: "list",
                            itemType: "fleet.FleetTag",
                            keyField: "key",
                            valueField: "value",
                            requiredFields: { propagate: "boolean" },
                            defaults: false,
                            role: "tags",
                            doc: "The tags to apply to the instances it launches.",
                        },
                        {
                            path: "excludeTags",
                            shape: "map",
                            defaults: false,
                            role: "selects",
                            doc: "Tags that identify the volumes to exclude.",
                        },
                    ],
                },
                "fake:fleet/stack:Stack": { own: { path: "tags", shape: "map", defaults: true } },
            },
            untaggable: ["fake:fleet/plain:Plain"],
            containers: { "fake:fleet/stack:Stack": "cloudformation-template" },
        });
    });
});
