import fc from "fast-check";
import {
    EMPTY_TAG_KEY_STATE,
    nextInstallTagKeys,
    nextTagKeyState,
    previousInstallTagKeys,
    previousTagKeyState,
    releasedTagIgnores,
    TagKeyState,
    unmanagedTagKeys,
} from "../../components/aws-tags/day2";
import { isTaggable } from "../../components/aws-tags/taggable";
import { RenderResult } from "../../scripts/render/render";
import { renderConfig } from "../helpers/render";

describe("the tag key state an update remembers", () => {
    test.each<[string, TagKeyState, string[], TagKeyState]>([
        ["the first update", EMPTY_TAG_KEY_STATE, ["b", "a"], { managed: ["a", "b"], released: [] }],
        ["a key removed", { managed: ["a", "b"], released: [] }, ["a"], { managed: ["a"], released: ["b"] }],
        ["the update after that: still released", { managed: ["a"], released: ["b"] }, ["a"], { managed: ["a"], released: ["b"] }],
        [
            "a released key added back: managed again",
            { managed: ["a"], released: ["b"] },
            ["a", "b"],
            { managed: ["a", "b"], released: [] },
        ],
        ["every key removed", { managed: ["a", "c"], released: ["b"] }, [], { managed: [], released: ["a", "b", "c"] }],
    ])("GIVEN %s THEN the state is exact", (_name, previous, configured, expected) => {
        expect(nextTagKeyState(previous, configured)).toEqual(expected);
    });

    test("GIVEN the previous state (as read back) or none WHEN taken THEN it is sorted, and empty on the first update", () => {
        expect(previousTagKeyState(undefined)).toEqual({ managed: [], released: [] });
        expect(previousTagKeyState({ managed: ["b", "a"], released: ["c"] })).toEqual({ managed: ["a", "b"], released: ["c"] });
    });

    test("GIVEN released keys THEN each becomes an ignoreChanges path, except the ones the resource sets itself", () => {
        expect(releasedTagIgnores(["b", "key with space", "x.io/y"], ["x.io/y"])).toEqual(['tags["b"]', 'tags["key with space"]']);
    });
});

const STORAGE = { enabled: true, trustedPrincipalArn: "arn:aws:iam::123456789012:role/registry-admin" };

describe("the install-time keys an update remembers", () => {
    test.each<[string, string[], string[], string[]]>([
        ["the first update", [], ["b", "a"], ["a", "b"]],
        ["a key gone from the cluster: still remembered", ["a", "b"], ["a"], ["a", "b"]],
        ["a new key", ["a"], ["c", "a"], ["a", "c"]],
    ])("GIVEN %s THEN the keys recorded are exact", (_name, previous, current, expected) => {
        expect(nextInstallTagKeys(previous, current)).toEqual(expected);
    });

    test("GIVEN the previous keys (as read back) or none WHEN taken THEN they are deduplicated and sorted", () => {
        expect(previousInstallTagKeys(undefined)).toEqual([]);
        expect(previousInstallTagKeys(["b", "a", "b"])).toEqual(["a", "b"]);
    });

    test("GIVEN any history of keys THEN the keys left alone are exactly the released and earlier install-time keys that aws.userTags does not set now", () => {
        const keys = fc.uniqueArray(fc.constantFrom("a", "b", "c", "d", "e", "f"), { maxLength: 6 });
        fc.assert(
            fc.property(keys, keys, keys, keys, (managed, released, install, configured) => {
                const state = nextTagKeyState({ managed, released }, configured);
                const left = unmanagedTagKeys(state, install);
                const expected = [...new Set([...managed, ...released, ...install])].filter((k) => !configured.includes(k)).sort();
                expect(left).toEqual(expected);
            }),
        );
    });

    test("GIVEN released user keys and install-time keys applied before THEN every one is left alone except the keys aws.userTags sets now", () => {
        expect(unmanagedTagKeys({ managed: ["a", "i2"], released: ["r"] }, ["i1", "i2"])).toEqual(["i1", "r"]);
    });
});

describe("removing a key from the install-time tags (the same rule as aws.userTags)", () => {
    const infrastructure = (keys: string[]) => ({
        apiVersion: "config.openshift.io/v1",
        kind: "Infrastructure",
        metadata: { name: "cluster" },
        status: { platformStatus: { type: "AWS", aws: { resourceTags: keys.map((key) => ({ key, value: `v-${key}` })) } } },
    });
    const config = {
        cluster: { name: "c1", platform: "openshift", kubeContext: "test" },
        aws: { enabled: true, region: "us-east-1", userTags: { a: "1" }, propagateUserTags: false, imageRegistryStorage: STORAGE },
    };
    const bucket = (result: RenderResult) =>
        result.resources.find((r) => r.type === "aws:s3/bucket:Bucket") as RenderResult["resources"][number];

    test("GIVEN install-time tags {i1,i2}, then {i1} THEN the second update neither removes i2 nor changes i1, and remembers both", async () => {
        const first = await renderConfig(config, { preview: false, cluster: [infrastructure(["i1", "i2"])] });
        expect(first.errors).toEqual([]);
        expect(bucket(first).inputs.tags).toMatchObject({ a: "1", i1: "v-i1", i2: "v-i2" });
        expect(bucket(first).options.ignoreChanges).toEqual([]);
        expect(first.stackOutputs.awsInstallTagKeys).toEqual(["i1", "i2"]);

        const second = await renderConfig(config, { preview: false, cluster: [infrastructure(["i1"])], stackOutputs: first.stackOutputs });
        expect(second.errors).toEqual([]);
        expect(bucket(second).options.ignoreChanges).toEqual(['tags["i1"]', 'tags["i2"]']);
        expect(second.stackOutputs.awsInstallTagKeys).toEqual(["i1", "i2"]);
    });
});

describe("removing a key from aws.userTags (the seed's 'removed without delete')", () => {
    const config = (userTags: Record<string, string>) => ({
        cluster: { name: "c1", platform: "kubernetes", kubeContext: "test" },
        aws: { enabled: true, region: "us-east-1", userTags, imageRegistryStorage: STORAGE },
    });
    const tagged = (result: RenderResult) => result.resources.filter((r) => isTaggable(r.type) && r.inputs.tags !== undefined);
    const summary = (result: RenderResult) =>
        tagged(result).map((r) => ({ resource: `${r.type}::${r.name}`, tags: r.inputs.tags, ignoreChanges: r.options.ignoreChanges }));
    const own = (name: string) => ({ Name: name, "cluster-platform.io/capability": "aws-tags", "cluster-platform.io/cluster": "c1" });
    const expectedSummary = (userTags: Record<string, string>, ignoreChanges: string[]) => [
        { resource: "aws:kms/key:Key::c1-image-registry", tags: { ...userTags, ...own("c1-image-registry") }, ignoreChanges },
        { resource: "aws:s3/bucket:Bucket::c1-image-registry", tags: { ...userTags, ...own("c1-image-registry") }, ignoreChanges },
        { resource: "aws:iam/role:Role::c1-image-registry", tags: { ...userTags, ...own("c1-image-registry") }, ignoreChanges },
        { resource: "aws:iam/policy:Policy::c1-image-registry", tags: { ...userTags, ...own("c1-image-registry") }, ignoreChanges },
    ];

    // Each update reads the outputs of the one before (pulumi up semantics, so the outputs are known).
    const update = (userTags: Record<string, string>, previous?: RenderResult) =>
        renderConfig(config(userTags), { preview: false, stackOutputs: previous?.stackOutputs });

    test("GIVEN tags {a,b}, then {a} with the first update's outputs, then {a} again, then {a,b} THEN b is ignored on every tagged resource until it comes back", async () => {
        const first = await update({ a: "1", b: "2" });
        expect(first.errors).toEqual([]);
        expect(first.stackOutputs.awsUserTagKeys).toEqual({ managed: ["a", "b"], released: [] });
        expect(summary(first)).toEqual(expectedSummary({ a: "1", b: "2" }, []));

        const second = await update({ a: "1" }, first);
        expect(second.errors).toEqual([]);
        expect(summary(second)).toEqual(expectedSummary({ a: "1" }, ['tags["b"]']));
        expect(second.stackOutputs.awsUserTagKeys).toEqual({ managed: ["a"], released: ["b"] });

        // Without the ignore in this update, pulumi up would now remove b after all.
        const third = await update({ a: "1" }, second);
        expect(summary(third)).toEqual(expectedSummary({ a: "1" }, ['tags["b"]']));

        const fourth = await update({ a: "1", b: "3" }, third);
        expect(summary(fourth)).toEqual(expectedSummary({ a: "1", b: "3" }, []));
        expect(fourth.stackOutputs.awsUserTagKeys).toEqual({ managed: ["a", "b"], released: [] });
    });

    test("GIVEN a changed tag value THEN only the tags input changes: no option forces a replacement", async () => {
        const before = await update({ a: "1" });
        const after = await update({ a: "2" }, before);
        const changed = after.resources.flatMap((r, i) => {
            const old = before.resources[i];
            expect([r.type, r.name, r.options]).toEqual([old.type, old.name, old.options]);
            return Object.keys({ ...r.inputs, ...old.inputs })
                .filter((k) => JSON.stringify(r.inputs[k]) !== JSON.stringify(old.inputs[k]))
                .map((k) => `${r.type}::${r.name}.${k}`);
        });
        expect(changed).toEqual([
            "aws:kms/key:Key::c1-image-registry.tags",
            "aws:s3/bucket:Bucket::c1-image-registry.tags",
            "aws:iam/role:Role::c1-image-registry.tags",
            "aws:iam/policy:Policy::c1-image-registry.tags",
            // Propagation is on when omitted: the tagged StorageClass's parameters carry the tags (it is replaced, see docs/aws-tags.md).
            "kubernetes:storage.k8s.io/v1:StorageClass::aws-tags-gp3-csi-tagged.parameters",
        ]);
    });
});
