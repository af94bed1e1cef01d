import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { awsTagConfigProblems } from "../../components/aws-tags/rules";
import { mergeTags, overrideWarning, resourceLabel, TagLayers, tagLimitProblem } from "../../components/aws-tags/rules";
import { ROOT } from "../helpers/render";
import { tsxCommand } from "../helpers/tsx";

const INSTALL = "the install-time tags (Infrastructure/cluster status.platformStatus.aws.resourceTags)";
const BUCKET = resourceLabel("aws:s3/bucket:Bucket", "prod-east-image-registry");

/** [case, layers, merged tags, warnings for the bucket]. The first three are the seed's precedence scenarios. */
const cases: [string, TagLayers, Record<string, string>, string[]][] = [
    [
        "seed precedence 1: a kube resource's tag supersedes the infrastructure's",
        { config: { key_infra1: "value1" }, resource: { key_infra1: "value2" } },
        { key_infra1: "value2" },
        [`tag "key_infra1" on ${BUCKET}: "value2" from the resource's own tags supersedes "value1" from aws.userTags`],
    ],
    [
        "seed precedence 2: a tag newly added on the resource overrides the infrastructure's",
        { config: { key_infra1: "custom_value" }, resource: { key_infra1: "value1" } },
        { key_infra1: "value1" },
        [`tag "key_infra1" on ${BUCKET}: "value1" from the resource's own tags supersedes "custom_value" from aws.userTags`],
    ],
    [
        "seed precedence 3: the mutable spec (aws.userTags) takes precedence over the install-time status",
        { install: { key_infra1: "value1" }, config: { key_infra1: "value_update1" } },
        { key_infra1: "value_update1" },
        [`tag "key_infra1" on ${BUCKET}: "value_update1" from aws.userTags supersedes "value1" from ${INSTALL}`],
    ],
    [
        "a conflict that changes nothing is not reported (the seed: no event)",
        { install: { a: "1" }, config: { a: "1" }, resource: { a: "1" } },
        { a: "1" },
        [],
    ],
    [
        "disjoint layers are united, keys sorted",
        { install: { c: "3" }, config: { a: "1" }, resource: { b: "2" } },
        { a: "1", b: "2", c: "3" },
        [],
    ],
    [
        "all three layers disagree: one warning per step",
        { install: { k: "i" }, config: { k: "c" }, resource: { k: "r" } },
        { k: "r" },
        [
            `tag "k" on ${BUCKET}: "c" from aws.userTags supersedes "i" from ${INSTALL}`,
            `tag "k" on ${BUCKET}: "r" from the resource's own tags supersedes "c" from aws.userTags`,
        ],
    ],
    [
        "the resource overrides the install-time value that aws.userTags left alone",
        { install: { k: "i", other: "x" }, config: { a: "1" }, resource: { k: "r" } },
        { a: "1", k: "r", other: "x" },
        [`tag "k" on ${BUCKET}: "r" from the resource's own tags supersedes "i" from ${INSTALL}`],
    ],
    ["no layers", {}, {}, []],
];

describe("the precedence merge: install-time < aws.userTags < the resource's own tags", () => {
    test.each(cases)(
        "GIVEN %s WHEN merged THEN the tags and the warnings (key, both values, resource) are exact",
        (_name, layers, tags, warnings) => {
            const merged = mergeTags(layers);
            expect(merged.tags).toEqual(tags);
            expect(Object.keys(merged.tags)).toEqual(Object.keys(tags).sort());
            expect(merged.overrides.map((o) => overrideWarning(BUCKET, o))).toEqual(warnings);
        },
    );

    test("GIVEN a merge THEN each key records the layer its value came from", () => {
        expect(mergeTags({ install: { a: "1", b: "2" }, config: { b: "3" }, resource: { c: "4" } }).sources).toEqual({
            a: "install",
            b: "config",
            c: "resource",
        });
    });
});

describe("per-resource tag limits", () => {
    const tags = (n: number, prefix: string) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, "v"]));

    test.each([
        [
            "50 tags on a bucket",
            "aws:s3/bucket:Bucket",
            { install: tags(22, "i"), config: tags(25, "u"), resource: tags(3, "r") },
            undefined,
        ],
        [
            "51 tags on a bucket",
            "aws:s3/bucket:Bucket",
            { install: tags(23, "i"), config: tags(25, "u"), resource: tags(3, "r") },
            `aws:s3/bucket:Bucket "x" would carry 51 tags (23 from ${INSTALL}, 25 from aws.userTags, 3 from the resource's own tags); AWS allows at most 50 tags on a resource`,
        ],
        ["10 tags on an S3 object", "aws:s3/bucketObjectv2:BucketObjectv2", { config: tags(10, "u") }, undefined],
        [
            "11 tags on an S3 object",
            "aws:s3/bucketObjectv2:BucketObjectv2",
            { config: tags(8, "u"), resource: tags(3, "r") },
            `aws:s3/bucketObjectv2:BucketObjectv2 "x" would carry 11 tags (8 from aws.userTags, 3 from the resource's own tags); S3 allows at most 10 tags on an object`,
        ],
        ["overlapping keys count once", "aws:s3/objectCopy:ObjectCopy", { install: tags(10, "u"), config: tags(10, "u") }, undefined],
    ])("GIVEN %s THEN the limit check says %s", (_name, type, layers, expected) => {
        expect(tagLimitProblem(type as string, "x", mergeTags(layers as TagLayers))).toBe(expected);
    });

    test("GIVEN a planned S3 object and more than 7 user tags WHEN the config is validated THEN the error names the resource before anything is created", () => {
        const planned = [{ type: "aws:s3/bucketObjectv2:BucketObjectv2", name: "bootstrap", ownTags: tags(3, "r") }];
        expect(awsTagConfigProblems({ enabled: true, userTags: tags(8, "u") }, planned)).toEqual([
            {
                path: "aws.userTags",
                message: `aws:s3/bucketObjectv2:BucketObjectv2 "bootstrap" would carry 11 tags (8 from aws.userTags, 3 from the resource's own tags); S3 allows at most 10 tags on an object`,
            },
        ]);
    });

    test("GIVEN 25 install-time and 25 user tags WHEN rendered THEN the update fails with one error per resource, naming it", () => {
        // The install-time tags are only known once the cluster is read, so this check fails the
        // program from inside the merge, as a real update would; the render CLI (a process of its
        // own, like the language host) reports each such error.
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "aws-tags-limit-"));
        try {
            const userTags = tags(25, "user");
            const resourceTags = Array.from({ length: 25 }, (_, i) => ({ key: `inst${i}`, value: "i" }));
            fs.writeFileSync(
                path.join(tmp, "stack.yaml"),
                stringify({
                    cluster: { name: "c1", platform: "openshift", kubeContext: "test" },
                    aws: {
                        enabled: true,
                        region: "us-east-1",
                        userTags,
                        propagateUserTags: false,
                        imageRegistryStorage: { enabled: true, trustedPrincipalArn: "arn:aws:iam::123456789012:role/registry-admin" },
                    },
                }),
            );
            fs.writeFileSync(
                path.join(tmp, "cluster.yaml"),
                stringify({
                    apiVersion: "config.openshift.io/v1",
                    kind: "Infrastructure",
                    metadata: { name: "cluster" },
                    status: { platformStatus: { type: "AWS", aws: { resourceTags } } },
                }),
            );
            const cli = spawnSync(
                ...tsxCommand(path.join(ROOT, "scripts", "render", "cli.ts"), [
                    "--config",
                    path.join(tmp, "stack.yaml"),
                    "--cluster",
                    path.join(tmp, "cluster.yaml"),
                    "--out",
                    path.join(tmp, "out"),
                ]),
                { cwd: ROOT, encoding: "utf8" },
            );
            const tooMany = (type: string, name: string) =>
                `error: ${type} "${name}" would carry 53 tags (25 from ${INSTALL}, 25 from aws.userTags, 3 from the resource's own tags); AWS allows at most 50 tags on a resource`;
            // The SDK prefixes each property it was serializing when the error reached it; strip them to
            // compare. Since @pulumi/pulumi 3.260 a rejected input also fails each resource or output that
            // awaited it (the bucket's error reaches the stack's outputs twice, the key's the policy's
            // `policyArn`), so one resource's error may stand on several lines: compare the set.
            const errors = [
                ...new Set(
                    cli.stderr
                        .split("\n")
                        .filter((line) => line.startsWith("error: "))
                        .map((line) => line.replace(/^error: (error serializing property "[^"]+": )*/, "error: ")),
                ),
            ].sort();
            expect(errors).toEqual(
                [
                    tooMany("aws:iam/policy:Policy", "c1-image-registry"),
                    tooMany("aws:iam/role:Role", "c1-image-registry"),
                    tooMany("aws:kms/key:Key", "c1-image-registry"),
                    tooMany("aws:s3/bucket:Bucket", "c1-image-registry"),
                ].sort(),
            );
            expect(cli.status).toBe(1);
            expect(fs.existsSync(path.join(tmp, "out"))).toBe(false);
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });
});
