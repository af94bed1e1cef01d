import * as path from "node:path";
import {
    day2Changes,
    day2LimitProblem,
    day2TagsField,
    day2UnreachedWarning,
    infrastructureTagsPatch,
    replacedEntriesWarning,
} from "../../components/aws-tags/infrastructure";
import { ClusterState, KubeObject } from "../../scripts/render/cluster-state";
import { RenderResult } from "../../scripts/render/render";
import { renderConfig, resourceNamed } from "../helpers/render";

const CLUSTER_FILE = path.join(__dirname, "..", "fixtures", "certificates", "openshift-aws.cluster.yaml");
const CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
const PATCH = "kubernetes:config.openshift.io/v1:InfrastructurePatch";
const realCrd = ClusterState.fromFile(CLUSTER_FILE).find(CRD_TYPE, "infrastructures.config.openshift.io") as KubeObject;

/** A CRD whose v1 schema has `spec.platformSpec.aws.resourceTags` as `field` (the seed's API, in the shapes it could take). */
function crdWith(field: Record<string, unknown>, version = "v1"): unknown {
    return {
        spec: {
            versions: [
                {
                    name: version,
                    served: true,
                    schema: {
                        openAPIV3Schema: {
                            properties: {
                                spec: { properties: { platformSpec: { properties: { aws: { properties: { resourceTags: field } } } } } },
                            },
                        },
                    },
                },
            ],
        },
    };
}

describe("reading the day-2 field from the Infrastructure CRD", () => {
    test.each<[string, unknown, ReturnType<typeof day2TagsField>]>([
        ["the CRD openshift/api serves (spec.platformSpec.aws has serviceEndpoints only)", realCrd, { present: false }],
        ["no CRD content", undefined, { present: false }],
        ["the field only in another version", crdWith({ type: "array" }, "v2"), { present: false }],
        [
            "the seed's field, no list type (atomic, as Kubernetes reads it) and at most 5 items",
            crdWith({ type: "array", maxItems: 5 }),
            { present: true, listType: "atomic", maxItems: 5 },
        ],
        ["a map list keyed by key", crdWith({ type: "array", "x-kubernetes-list-type": "map" }), { present: true, listType: "map" }],
    ])("GIVEN %s THEN the field is read as exact", (_name, crd, expected) => {
        expect(day2TagsField(crd)).toEqual(expected);
    });

    test("GIVEN more user tags than the list takes THEN the error names the count, the limit and the way out; within it, none", () => {
        const field = day2TagsField(crdWith({ type: "array", maxItems: 1 }));
        expect(day2LimitProblem(field, { a: "1", b: "2" })).toBe(
            "aws.userTags has 2 tags, but this cluster's Infrastructure/cluster spec.platformSpec.aws.resourceTags takes at most 1 (CRD infrastructures.config.openshift.io); remove tags or set aws.propagateUserTags to false",
        );
        expect(day2LimitProblem(field, { a: "1" })).toBeUndefined();
    });

    test("GIVEN an atomic list holding entries set outside the stack THEN one warning names those leaving the list; a map list or no such entries, none", () => {
        const live = {
            spec: {
                platformSpec: {
                    aws: {
                        resourceTags: [
                            { key: "a", value: "1" },
                            { key: "z", value: "x" },
                            { key: "m", value: "y" },
                        ],
                    },
                },
            },
        };
        expect(replacedEntriesWarning(live, { a: "2" }, "atomic")).toBe(
            'Infrastructure/cluster spec.platformSpec.aws.resourceTags is an atomic list, so applying aws.userTags replaces it: "m", "z" set outside the stack leave the list (the operators stop managing them; they stay on AWS resources). Add them to aws.userTags to keep them',
        );
        expect(replacedEntriesWarning(live, { a: "2" }, "map")).toBeUndefined();
        expect(replacedEntriesWarning(live, { a: "1", m: "y", z: "x" }, "atomic")).toBeUndefined();
        expect(replacedEntriesWarning({ spec: {} }, { a: "1" }, "atomic")).toBeUndefined();
    });

    test("GIVEN no user tags THEN the patch owns no field (what it wrote before leaves the list)", () => {
        expect(infrastructureTagsPatch({}, true)).toEqual({
            apiVersion: "config.openshift.io/v1",
            kind: "Infrastructure",
            metadata: {
                name: "cluster",
                annotations: { "pulumi.com/patchForce": "true", "pulumi.com/patchFieldManager": "cluster-platform-aws-tags" },
            },
        });
    });
});

describe("day 2 through Infrastructure/cluster: removing a key releases it", () => {
    const infrastructure = ClusterState.fromFile(CLUSTER_FILE).find(
        "kubernetes:config.openshift.io/v1:Infrastructure",
        "cluster",
    ) as KubeObject;
    const seedCrd = {
        ...realCrd,
        spec: { ...(realCrd.spec as object), ...(crdWith({ type: "array", maxItems: 25 }) as { spec: object }).spec },
    } as KubeObject;
    const render = (userTags: Record<string, string>, previous?: RenderResult) =>
        renderConfig(
            {
                cluster: { name: "prod-east", platform: "openshift", kubeContext: "test" },
                aws: { enabled: true, region: "us-east-1", userTags },
            },
            { preview: false, cluster: [infrastructure, seedCrd], stackOutputs: previous?.stackOutputs },
        );
    const listOf = (result: RenderResult) =>
        (resourceNamed(result, PATCH, "aws-tags-infrastructure-tags").inputs.spec as { platformSpec: { aws: { resourceTags: unknown } } })
            .platformSpec.aws.resourceTags;

    test("GIVEN tags {a,b}, then {a} THEN the stack's list holds exactly a (server-side apply drops b, which the operators leave on AWS), under the same field manager", async () => {
        const first = await render({ a: "1", b: "2" });
        expect(first.errors).toEqual([]);
        expect(listOf(first)).toEqual([
            { key: "a", value: "1" },
            { key: "b", value: "2" },
        ]);
        const second = await render({ a: "1" }, first);
        expect(second.errors).toEqual([]);
        expect(listOf(second)).toEqual([{ key: "a", value: "1" }]);
        expect(resourceNamed(second, PATCH, "aws-tags-infrastructure-tags").inputs.metadata).toEqual(
            resourceNamed(first, PATCH, "aws-tags-infrastructure-tags").inputs.metadata,
        );
    });
});

describe("day 2 without the spec field: what a change does not reach", () => {
    test("GIVEN aws.userTags equal to the install-time tags THEN there is no day-2 change and no warning", () => {
        expect(day2Changes({ a: "1" }, { a: "1", b: "2" })).toEqual([]);
        expect(day2UnreachedWarning({ a: "1" }, { a: "1", b: "2" }, false)).toBeUndefined();
    });

    test("GIVEN a changed and a new key with the stack's registry bucket THEN both keys are named, the bucket is reached (new keys only) and not listed as unreached", () => {
        const warning = day2UnreachedWarning({ a: "2", n: "x" }, { a: "1" }, true) as string;
        expect(day2Changes({ a: "2", n: "x" }, { a: "1" })).toEqual(["a", "n"]);
        expect(warning.startsWith('aws.userTags sets "a", "n" differently from the install-time tags')).toBe(true);
        expect(warning).toContain(
            "Reached: the stack's own AWS resources (the registry bucket only for keys the install-time tags do not carry)",
        );
        expect(warning).toContain('new volumes of the gp3-csi-tagged StorageClass for "n".');
        expect(warning).not.toContain("the installer's image registry bucket");
    });
});
