import fc from "fast-check";
import { noNameUserTag, requiredTags, reservedTagKeys, tagCount, tagFormat } from "../../policy-packs/aws-tags/tag-policies";
import { untaggedResources } from "../../policy-packs/aws-tags/untagged-resources";
import { PACKS_START } from "../helpers/policy-packs";
import { analyzed, resource, UNKNOWN_VALUE, violations } from "./support";

const BUCKET = "aws:s3/bucket:Bucket";
const USER_TAGS = { adminContact: "jdoe", costCenter: "7536" };

/** The stack's AWS provider as the engine shows it: provider inputs JSON-encoded, as Pulumi passes provider config. */
function provider(defaultTags?: Record<string, string>) {
    return {
        type: "pulumi:providers:aws",
        name: "aws",
        urn: "urn:pulumi:test::cluster-platform::pulumi:providers:aws::aws",
        props: { region: "us-east-1", ...(defaultTags ? { defaultTags: JSON.stringify({ tags: defaultTags }) } : {}) },
    };
}

function bucket(props: Record<string, unknown>, defaultTags?: Record<string, string>) {
    return resource(
        BUCKET,
        "registry",
        { bucket: "prod-east-image-registry", ...props },
        defaultTags ? { provider: provider(defaultTags) } : {},
    );
}

describe("aws-required-tags", () => {
    const config = { requiredTags: ["adminContact", "costCenter", "owner"] };

    test("GIVEN a bucket without two required keys WHEN analyzed THEN the missing keys and the ones it has are named", () => {
        expect(violations(requiredTags, bucket({ tags: { Name: "registry", adminContact: "jdoe" } }), config)).toEqual([
            'aws:s3/bucket:Bucket "registry" lacks the required tags "costCenter", "owner" (it carries "Name", "adminContact")',
        ]);
        expect(violations(requiredTags, bucket({}), { requiredTags: ["owner"] })).toEqual([
            'aws:s3/bucket:Bucket "registry" lacks the required tag "owner" (it carries no tags)',
        ]);
    });

    test("GIVEN the keys split between tags and tagsAll, or in the provider's defaultTags while tagsAll is unknown WHEN analyzed THEN the bucket passes", () => {
        expect(violations(requiredTags, bucket({ tags: { owner: "x" }, tagsAll: { owner: "x", ...USER_TAGS } }), config)).toEqual([]);
        expect(violations(requiredTags, bucket({ tags: { owner: "x" }, tagsAll: UNKNOWN_VALUE }, USER_TAGS), config)).toEqual([]);
        expect(
            violations(
                requiredTags,
                bucket({ tags: { owner: "x", adminContact: UNKNOWN_VALUE }, tagsAll: UNKNOWN_VALUE }, { costCenter: "1" }),
                config,
            ),
        ).toEqual([]);
    });

    test("GIVEN an Auto Scaling group, whose tags are a list of items WHEN analyzed THEN its item keys count", () => {
        const group = resource("aws:autoscaling/group:Group", "workers", {
            tags: [
                { key: "adminContact", value: "jdoe", propagateAtLaunch: true },
                { key: "owner", value: UNKNOWN_VALUE, propagateAtLaunch: true },
            ],
        });
        expect(violations(requiredTags, group, config)).toEqual([
            'aws:autoscaling/group:Group "workers" lacks the required tag "costCenter" (it carries "adminContact", "owner")',
            'aws:autoscaling/group:Group "workers" instances (tags with propagateAtLaunch) lacks the required tag "costCenter" (it carries "adminContact", "owner")',
        ]);
    });

    test("GIVEN types the derived list marks untaggable, or no required keys WHEN analyzed THEN nothing is reported", () => {
        expect(violations(requiredTags, resource("aws:s3/bucketPolicy:BucketPolicy", "p", { bucket: "b", policy: "{}" }), config)).toEqual(
            [],
        );
        expect(violations(requiredTags, bucket({}))).toEqual([]);
    });

    test(
        "GIVEN tags unknown as a whole during a preview WHEN analyzed by the pack's analyzer THEN it reports the policy cannot run yet",
        async () => {
            expect(await analyzed(requiredTags, bucket({ tags: UNKNOWN_VALUE }), config)).toEqual([
                "advisory: can't run policy 'aws-required-tags' from policy pack 'aws-tags@v0.1.0' during preview: string value at .tags can't be known during preview",
            ]);
        },
        PACKS_START,
    );

    test("GIVEN required keys that break the user tag rules WHEN analyzed THEN the run stops with every problem of the config", () => {
        expect(() => violations(requiredTags, bucket({}), { requiredTags: ["Name", "kubernetes.io/team", "cost center*"] })).toThrow(
            [
                "invalid config for policy aws-required-tags: 3 problems",
                '  - requiredTags.Name: "Name" key is not allowed for user defined tags: each resource sets its own Name',
                '  - requiredTags["kubernetes.io/team"]: key is in the kubernetes.io namespace, which the platform reserves',
                '  - requiredTags["cost center*"]: key contains invalid characters "*"; allowed are letters, digits, spaces and _ . : / = + - @',
            ].join("\n"),
        );
    });
});

describe("aws-reserved-tag-keys", () => {
    test("GIVEN keys in kubernetes.io, a subdomain of openshift.io and aws: WHEN analyzed THEN each is named with its rule; look-alikes pass", () => {
        const target = bucket({
            tags: { "kubernetes.io/cluster/prod-east-7x2kq": "owned", "team.openshift.io/x": "a", "otheropenshift.io/x": "b" },
            tagsAll: { "AWS:cost": "c" },
        });
        expect(violations(reservedTagKeys, target)).toEqual([
            'aws:s3/bucket:Bucket "registry" tag "AWS:cost": key starts with "AWS:": AWS reserves the prefix aws: for its own tags',
            'aws:s3/bucket:Bucket "registry" tag "kubernetes.io/cluster/prod-east-7x2kq": key is in the kubernetes.io namespace, which the platform reserves',
            'aws:s3/bucket:Bucket "registry" tag "team.openshift.io/x": key is in the openshift.io namespace, which the platform reserves',
        ]);
    });

    test("GIVEN allowedKeys with an exact key and a prefix WHEN analyzed THEN those keys pass", () => {
        const target = bucket({
            tags: { "kubernetes.io/cluster/prod-east-7x2kq": "owned", "kubernetes.io/role/elb": "1", "openshift.io/x": "y" },
        });
        expect(violations(reservedTagKeys, target, { allowedKeys: ["kubernetes.io/cluster/*", "openshift.io/x"] })).toEqual([
            'aws:s3/bucket:Bucket "registry" tag "kubernetes.io/role/elb": key is in the kubernetes.io namespace, which the platform reserves',
        ]);
    });
});

describe("aws-no-name-user-tag", () => {
    test("GIVEN Name in the provider's defaultTags WHEN analyzed THEN it is reported; the resource's own Name is not", () => {
        expect(
            violations(noNameUserTag, bucket({ tags: { adminContact: "jdoe" }, tagsAll: UNKNOWN_VALUE }, { Name: "everything" })),
        ).toEqual([
            'aws:s3/bucket:Bucket "registry" tag "Name" comes from the AWS provider\'s defaultTags: "Name" key is not allowed for user defined tags: each resource sets its own Name',
        ]);
        expect(
            violations(noNameUserTag, bucket({ tags: { Name: "registry" }, tagsAll: { Name: "registry", ...USER_TAGS } }, USER_TAGS)),
        ).toEqual([]);
    });

    test("GIVEN tagsAll holding a name key the resource's tags lack WHEN analyzed THEN it came from the provider and is reported, in any letter case", () => {
        expect(violations(noNameUserTag, bucket({ tags: {}, tagsAll: { name: "x" } }))).toEqual([
            'aws:s3/bucket:Bucket "registry" tag "name" comes from the AWS provider\'s defaultTags: "Name" key is not allowed for user defined tags ("name" matches it: the installer compares case-insensitively): each resource sets its own Name',
        ]);
    });
});

describe("aws-tag-format", () => {
    test("GIVEN a value with * and a key of 129 characters WHEN analyzed THEN both are reported; unknown values wait for the update", () => {
        const long = "k".repeat(129);
        const target = bucket({ tags: { team: "a*b", [long]: "v", later: UNKNOWN_VALUE } });
        expect(violations(tagFormat, target)).toEqual([
            'aws:s3/bucket:Bucket "registry" tag "team": value contains characters AWS refuses "*"; allowed are Unicode letters, numbers and spaces, and _ . : / = + - @',
            `aws:s3/bucket:Bucket "registry" tag "${long}": key is too long: 129 characters, at most 128`,
        ]);
    });

    test("GIVEN any tags on a bucket WHEN analyzed THEN tag-format refuses exactly the tags AWS refuses (its documented character set, lengths, blank text) and reserved-key exactly the reserved namespaces", () => {
        const text = fc.string({ unit: fc.constantFrom("a", "Z", "0", " ", ":", "/", "*", "é", "k", ".", "\t"), maxLength: 12 });
        // Independent oracles: AWS's documented rule, and the reserved namespaces as the seed lists them.
        const awsValid = (t: string, max: number) => /^[\p{L}\p{N}\p{Zs}_.:/=+\-@]+$/u.test(t) && t.trim() !== "" && [...t].length <= max;
        const reservedKey = (k: string) => /^([^/]*\.)?(kubernetes|openshift)\.io\//.test(k) || k.toLowerCase().startsWith("aws:");
        const reportedKeys = (lines: string[]) => [...new Set(lines.map((l) => /tag ("(?:[^"\\]|\\.)*")/.exec(l)?.[1]))].sort();
        fc.assert(
            fc.property(fc.dictionary(text, text, { maxKeys: 6 }), (tags) => {
                const refused = Object.entries(tags)
                    .filter(([k, v]) => !awsValid(k, 128) || !awsValid(v, 256))
                    .map(([k]) => JSON.stringify(k))
                    .sort();
                expect(reportedKeys(violations(tagFormat, bucket({ tags })))).toEqual(refused);
                expect(reportedKeys(violations(reservedTagKeys, bucket({ tags })))).toEqual(
                    Object.keys(tags)
                        .filter(reservedKey)
                        .map((k) => JSON.stringify(k))
                        .sort(),
                );
            }),
            { numRuns: 200 },
        );
    });
});

describe("aws-tag-count", () => {
    const tags = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));

    test("GIVEN 40 own tags and 11 provider defaults WHEN analyzed THEN the 51 tags exceed AWS's 50", () => {
        expect(
            violations(
                tagCount,
                bucket(
                    { tags: tags(40), tagsAll: UNKNOWN_VALUE },
                    Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`d${i}`, "v"])),
                ),
            ),
        ).toEqual(['aws:s3/bucket:Bucket "registry" carries 51 tags; AWS allows at most 50 tags on a resource']);
        expect(violations(tagCount, bucket({ tags: tags(50) }))).toEqual([]);
    });

    test("GIVEN an S3 object with 11 tags WHEN analyzed THEN S3's object limit of 10 applies", () => {
        expect(
            violations(tagCount, resource("aws:s3/bucketObjectv2:BucketObjectv2", "o", { bucket: "b", key: "k", tags: tags(11) })),
        ).toEqual(['aws:s3/bucketObjectv2:BucketObjectv2 "o" carries 11 tags; S3 allows at most 10 tags on an object']);
    });
});

describe("aws-untagged-resources (a resource policy: judged before the resource exists)", () => {
    test("GIVEN untagged taggable resources among tagged and untaggable ones WHEN each is analyzed THEN exactly the untagged taggable ones are refused, one message each", () => {
        const judged = (target: ReturnType<typeof resource>) => violations(untaggedResources, target);
        expect(judged(resource("aws:sqs/queue:Queue", "events", { tags: {} }))).toEqual(['aws:sqs/queue:Queue "events" carries no tags']);
        expect(judged(resource("aws:ecr/repository:Repository", "images", {}))).toEqual([
            'aws:ecr/repository:Repository "images" carries no tags',
        ]);
        expect(judged(bucket({ tags: USER_TAGS }))).toEqual([]);
        expect(judged(resource("aws:s3/bucketPolicy:BucketPolicy", "policy", {}))).toEqual([]);
        expect(judged(resource("aws:kms/key:Key", "key", { tags: {} }, { provider: provider(USER_TAGS) }))).toEqual([]);
    });
});
