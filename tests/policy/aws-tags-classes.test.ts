/**
 * What the aws-tags pack used to pass in silence, each with a caught case and a clean case, sent
 * to the pack started as the Pulumi CLI starts it (over the analyzer gRPC protocol): types the
 * derived list does not know, aws-native tags, launch template tag specifications, instance
 * volumes, and the type whose `tags` are not its own.
 */
import * as path from "node:path";
import { TAGGABLE_SOURCE } from "../../components/aws-tags/taggable";
import { ROOT } from "../helpers/render";
import { analyze, configure, diagnosticsOf, RunningPack, startPack } from "./analyzer-process";
import { resource } from "./support";
import type { EngineResource } from "./analyzer-process";

const REQUIRED = ["adminContact", "costCenter"];
const ALL_REQUIRED = { adminContact: "jdoe", costCenter: "7536" };
const awsProvider = (defaults: Record<string, string>) => ({
    type: "pulumi:providers:aws",
    name: "aws",
    urn: "urn:pulumi:test::cluster-platform::pulumi:providers:aws::aws",
    props: { region: "us-east-1", defaultTags: JSON.stringify({ tags: defaults }) },
});

describe("aws-tags through the analyzer protocol: every class, caught and clean", () => {
    let pack: RunningPack;
    const judged = async (target: EngineResource) =>
        diagnosticsOf(await analyze(pack.client, target)).map(
            (d) => `${d.enforcementLevel} ${d.policyName}: ${d.message.slice(d.message.indexOf("\n") + 1)}`,
        );
    beforeAll(async () => {
        pack = await startPack(path.join(ROOT, "policy-packs", "aws-tags"));
        await configure(pack.client, { "aws-required-tags": { enforcementLevel: "mandatory", requiredTags: REQUIRED } });
    });
    afterAll(async () => {
        await pack?.stop();
    });

    test("GIVEN an aws: type from a newer @pulumi/aws, with tags WHEN analyzed THEN it is refused as not judged against the derived list; a listed type gets none", async () => {
        expect(await judged(resource("aws:bedrockagentcore/gateway:Gateway2099", "gw", { tags: { team: "a" } }))).toEqual([
            `mandatory aws-unjudged-types: aws:bedrockagentcore/gateway:Gateway2099 "gw" cannot judge: not in the schema derived from ${TAGGABLE_SOURCE}, though it declares tags`,
        ]);
        expect(await judged(resource("aws:sqs/queue:Queue", "events", { tags: ALL_REQUIRED }))).toEqual([]);
    });

    test("GIVEN an inspector ResourceGroup whose tags select EC2 instances WHEN analyzed THEN it is neither judged as tagged nor reported (the derivation dropped it)", async () => {
        expect(await judged(resource("aws:inspector/resourceGroup:ResourceGroup", "targets", { tags: { Name: "web" } }))).toEqual([]);
    });

    test("GIVEN aws-native resources WHEN their tags are {key, value} items or a map, as the schema types them THEN they are judged; items of another shape carry no tags", async () => {
        expect(await judged(resource("aws-native:s3:Bucket", "logs", { tags: [{ key: "adminContact", value: "jdoe" }] }))).toEqual([
            'mandatory aws-required-tags: aws-native:s3:Bucket "logs" lacks the required tag "costCenter" (it carries "adminContact")',
        ]);
        expect(
            await judged(
                resource("aws-native:s3:Bucket", "logs", { tags: Object.entries(ALL_REQUIRED).map(([key, value]) => ({ key, value })) }),
            ),
        ).toEqual([]);
        expect(await judged(resource("aws-native:ssm:Parameter", "p", { tags: { adminContact: "jdoe", costCenter: "7536" } }))).toEqual([]);
        expect(await judged(resource("aws-native:ssm:Parameter", "p", { tags: { adminContact: "jdoe" } }))).toEqual([
            'mandatory aws-required-tags: aws-native:ssm:Parameter "p" lacks the required tag "costCenter" (it carries "adminContact")',
        ]);
        // The schema types them as {key, value} items (the provider refuses other fields): Key/Value items name no tag.
        expect(await judged(resource("aws-native:sqs:Queue", "q", { tags: [{ Key: "adminContact", Value: "jdoe" }] }))).toEqual([
            'mandatory aws-required-tags: aws-native:sqs:Queue "q" lacks the required tags "adminContact", "costCenter" (it carries no tags)',
            'mandatory aws-untagged-resources: aws-native:sqs:Queue "q" carries no tags',
        ]);
        // An IoT thing takes no tags (its schema has none): untaggable, it passes.
        expect(await judged(resource("aws-native:iot:Thing", "t", { thingName: "sensor" }))).toEqual([]);
    });

    test("GIVEN a launch template whose instance tag specification lacks a required key WHEN analyzed THEN it is named, though the provider's defaults cover the template itself; complete specifications pass", async () => {
        const template = (instanceTags: Record<string, string>) =>
            resource(
                "aws:ec2/launchTemplate:LaunchTemplate",
                "workers",
                {
                    tags: {},
                    tagSpecifications: [
                        { resourceType: "instance", tags: instanceTags },
                        { resourceType: "volume", tags: ALL_REQUIRED },
                    ],
                },
                { provider: awsProvider(ALL_REQUIRED) },
            );
        expect(await judged(template({ adminContact: "jdoe" }))).toEqual([
            'mandatory aws-required-tags: aws:ec2/launchTemplate:LaunchTemplate "workers" tagSpecifications[0].tags (instance) lacks the required tag "costCenter" (it carries "adminContact")',
        ]);
        expect(await judged(template(ALL_REQUIRED))).toEqual([]);
    });

    test("GIVEN an instance whose volumeTags lack a required key and no provider defaults WHEN analyzed THEN its volumes are named; with the provider's defaults (applied to volumes) it passes", async () => {
        const instance = (provider: Record<string, string>) =>
            resource(
                "aws:ec2/instance:Instance",
                "bastion",
                { tags: ALL_REQUIRED, volumeTags: { adminContact: "jdoe" } },
                { provider: awsProvider(provider) },
            );
        expect(await judged(instance({}))).toEqual([
            'mandatory aws-required-tags: aws:ec2/instance:Instance "bastion" volumes (volumeTags) lacks the required tag "costCenter" (it carries "adminContact")',
        ]);
        expect(await judged(instance({ costCenter: "7536" }))).toEqual([]);
        expect(await judged(resource("aws:ec2/instance:Instance", "bare", { tags: ALL_REQUIRED }))).toEqual([
            'mandatory aws-required-tags: aws:ec2/instance:Instance "bare" root volume (rootBlockDevice.tags) lacks the required tags "adminContact", "costCenter" (it carries no tags)',
        ]);
    });
});
