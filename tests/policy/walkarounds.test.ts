/**
 * AWS tag walk-arounds by class (issue 29, point 5) and the correct resources that must pass
 * (point 6), through the whole aws-tags pack, its analyzer process as the CLI starts it (the RBAC
 * classes are rbac-walkarounds.test.ts'). Each class generates its cases
 * with fast-check; a generated case is a walk-around (or a correct resource) by construction,
 * independently of the evaluator: the generators spell out what the API server or AWS would do.
 */
import fc from "fast-check";
import { analyzeAll, EngineResource, PackConfig } from "../../scripts/policy/analyzer";
import type { PackName } from "../../scripts/policy/config";
import { PACKS_START, sharedPacks } from "../helpers/policy-packs";
import { resource, UNKNOWN_VALUE } from "./support";

// The packs start once per jest registry (tests/helpers/policy-packs.ts); on a loaded machine that takes minutes.
beforeAll(() => sharedPacks(), PACKS_START);

/** A pack with its config: the running pack is configured with it before each analysis. */
interface Configured {
    pack: PackName;
    config: PackConfig;
}
const engine = (pack: PackName, config: PackConfig = {}): Configured => ({ pack, config });
const REQUIRED = ["costCenter", "owner"];
const awsTags = engine("aws-tags", {
    "aws-required-tags": { requiredTags: REQUIRED },
    "aws-side-channel-tags": { requiredTags: REQUIRED },
    "aws-reserved-tag-keys": { clusterIds: ["prod-east-x7k2p"] },
});
const TAGS = { costCenter: "7536", owner: "platform" };

/** `policy: violation` lines of the resources through the whole pack (Analyze each, then AnalyzeStack). */
async function judged(pack: Configured, ...resources: EngineResource[]): Promise<string[]> {
    const running = (await sharedPacks())[pack.pack];
    return (await analyzeAll(running, resources, pack.config)).diagnostics.map((d) => `${d.policyName}: ${d.violation}`);
}
const caught = async (pack: Configured, ...resources: EngineResource[]) => expect(await judged(pack, ...resources)).not.toEqual([]);

const bucket = (tags: Record<string, unknown>) => resource("aws:s3/bucket:Bucket", "b", { bucket: "b", tags });

describe("AWS tag walk-arounds, by class: each generated case is refused", () => {
    test("GIVEN a tag written through a side-channel resource with a reserved or blank key or value WHEN judged THEN refused", async () => {
        const bad = fc.oneof(
            fc
                .constantFrom(
                    "kubernetes.io/x",
                    "a.openshift.io/y",
                    "aws:z",
                    "openshiftClusterID",
                    "sigs.k8s.io/cluster-api-provider-aws/cluster/x",
                )
                .map((key) => ({ key, value: "v" })),
            fc.constantFrom(" ", "  ", "\t").map((value) => ({ key: "team", value })),
        );
        await fc.assert(
            fc.asyncProperty(bad, fc.constantFrom("ec2", "ecs", "dynamodb"), (t, service) =>
                caught(awsTags, resource(`aws:${service}/tag:Tag`, "t", { resourceId: "i-1", key: t.key, value: t.value })),
            ),
        );
        await caught(
            awsTags,
            resource("aws:autoscaling/tag:Tag", "t", {
                autoscalingGroupName: "g",
                tag: { key: "owner", value: "x", propagateAtLaunch: false },
            }),
        );
    });

    test("GIVEN a launch template whose tag specifications leave instances or volumes out WHEN judged THEN refused", async () => {
        const kinds = fc
            .subarray(["instance", "volume", "network-interface"])
            .filter((k) => !(k.includes("instance") && k.includes("volume")));
        await fc.assert(
            fc.asyncProperty(kinds, (ks) =>
                caught(
                    awsTags,
                    resource("aws:ec2/launchTemplate:LaunchTemplate", "lt", {
                        tags: TAGS,
                        tagSpecifications: ks.map((resourceType) => ({ resourceType, tags: TAGS })),
                    }),
                ),
            ),
        );
    });

    test("GIVEN an Auto Scaling group whose required tags are not all propagated at launch WHEN judged THEN refused", async () => {
        await fc.assert(
            fc.asyncProperty(fc.subarray(REQUIRED, { minLength: 1 }), (kept) =>
                caught(
                    awsTags,
                    resource("aws:autoscaling/group:Group", "g", {
                        tags: Object.entries(TAGS).map(([key, value]) => ({ key, value, propagateAtLaunch: !kept.includes(key) })),
                    }),
                ),
            ),
        );
    });

    test("GIVEN whitespace-only values WHEN judged THEN refused", async () => {
        await fc.assert(
            fc.asyncProperty(fc.constantFrom(" ", "   ", "\u3000"), (blank) => caught(awsTags, bucket({ ...TAGS, team: blank }))),
        );
    });

    test("GIVEN a taggable aws-native type without tags, and types the derived schema does not know that declare tags WHEN judged THEN refused; an unknown type only unless allow-listed", async () => {
        await caught(awsTags, resource("aws-native:s3:Bucket", "n", {}));
        await caught(awsTags, resource("aws:brandnew/thing:Thing", "t", { tags: TAGS }));
        await caught(awsTags, resource("aws-native:brandnew:Thing", "t", { tags: [{ key: "costCenter", value: "1" }] }));
        const allowing = engine("aws-tags", { "aws-unjudged-types": { allowedTypes: ["aws:brandnew/thing:Thing"] } });
        expect(await judged(allowing, resource("aws:brandnew/thing:Thing", "t", { tags: TAGS }))).toEqual([]);
    });
});

describe("stack-wide AWS settings: every AWS resource's provider", () => {
    const withSettings = engine("aws-tags", {
        "aws-required-tags": { requiredTags: REQUIRED },
        "aws-provider-settings": { ignoreTagKeys: ["backup-plan"], ignoreTagKeyPrefixes: ["finops:"] },
    });
    const providerNamed = (name: string, ignoreTags?: unknown) => ({
        type: "pulumi:providers:aws",
        name,
        urn: `urn:pulumi:test::p::pulumi:providers:aws::${name}`,
        props: { region: "us-east-1", ...(ignoreTags === undefined ? {} : { ignoreTags: JSON.stringify(ignoreTags) }) },
    });
    const onProvider = (p: ReturnType<typeof providerNamed>) =>
        judged(withSettings, resource("aws:s3/bucket:Bucket", "b", { bucket: "b", tags: TAGS }, { provider: p }));

    test("GIVEN the engine's default provider, in any version's name, WHEN judged THEN refused; the stack's provider with the ignoreTags passes", async () => {
        await fc.assert(
            fc.asyncProperty(fc.constantFrom("default", "default_7_48_0", "default_6_0_0"), async (name) =>
                expect(await onProvider(providerNamed(name))).toEqual([
                    'aws-provider-settings: aws:s3/bucket:Bucket "b" is managed by the default AWS provider, which none of the stack\'s AWS settings (region, ignoreTags) reach',
                ]),
            ),
        );
        expect(await onProvider(providerNamed("aws", { keys: ["backup-plan"], keyPrefixes: ["finops:"] }))).toEqual([]);
    });

    test("GIVEN an explicit provider without the stack's ignoreTags WHEN judged THEN refused, naming what it does not ignore", async () => {
        expect(await onProvider(providerNamed("other-region", { keys: [], keyPrefixes: ["finops:"] }))).toEqual([
            'aws-provider-settings: aws:s3/bucket:Bucket "b": its provider "other-region" does not ignore key "backup-plan" (aws.ignoreTags)',
        ]);
    });
});

describe("correct AWS resources pass (no false positives)", () => {
    const provider = (defaultTags: unknown) => ({
        type: "pulumi:providers:aws",
        name: "aws",
        urn: "urn:pulumi:test::p::pulumi:providers:aws::aws",
        props: { region: "us-east-1", defaultTags },
    });

    test("GIVEN provider defaultTags known only at deploy WHEN an untagged bucket is previewed THEN nothing is reported until they are known", async () => {
        for (const defaultTags of [UNKNOWN_VALUE, JSON.stringify({ tags: { costCenter: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" } })]) {
            expect(
                await judged(
                    awsTags,
                    resource("aws:s3/bucket:Bucket", "b", { bucket: "b", tags: {} }, { provider: provider(defaultTags) }),
                ),
            ).toEqual([]);
        }
    });

    test("GIVEN the AWS cloud provider's own keys for this cluster on subnets and security groups WHEN judged THEN they pass; another cluster's id or another type does not", async () => {
        const subnet = (tags: Record<string, string>) => resource("aws:ec2/subnet:Subnet", "s", { vpcId: "v", tags: { ...TAGS, ...tags } });
        expect(await judged(awsTags, subnet({ "kubernetes.io/cluster/prod-east-x7k2p": "owned", "kubernetes.io/role/elb": "1" }))).toEqual(
            [],
        );
        expect(await judged(awsTags, subnet({ "kubernetes.io/role/internal-elb": "1" }))).toEqual([]);
        expect(
            await judged(
                awsTags,
                resource("aws:ec2/securityGroup:SecurityGroup", "g", {
                    tags: { ...TAGS, "kubernetes.io/cluster/prod-east-x7k2p": "shared" },
                }),
            ),
        ).toEqual([]);
        await caught(awsTags, subnet({ "kubernetes.io/cluster/someone-else": "owned" }));
        await caught(awsTags, bucket({ ...TAGS, "kubernetes.io/role/elb": "1" }));
    });

    test("GIVEN values in any script AWS accepts WHEN judged THEN they pass", async () => {
        const letters = fc
            .string({ unit: fc.constantFrom("é", "ü", "日", "本", "Ж", "a", "1", " ", "-", "@"), minLength: 1, maxLength: 20 })
            .filter((v) => v.trim() !== "");
        await fc.assert(fc.asyncProperty(letters, async (v) => expect(await judged(awsTags, bucket({ ...TAGS, team: v }))).toEqual([])));
    });

    test("GIVEN a launch template tagging instances and volumes, and an Auto Scaling group propagating the required tags WHEN judged THEN they pass", async () => {
        expect(
            await judged(
                awsTags,
                resource("aws:ec2/launchTemplate:LaunchTemplate", "lt", {
                    tags: TAGS,
                    tagSpecifications: ["instance", "volume"].map((resourceType) => ({ resourceType, tags: TAGS })),
                }),
            ),
        ).toEqual([]);
        expect(
            await judged(
                awsTags,
                resource("aws:autoscaling/group:Group", "g", {
                    tags: Object.entries(TAGS).map(([key, value]) => ({ key, value, propagateAtLaunch: true })),
                }),
            ),
        ).toEqual([]);
    });
});
