/**
 * Walk-arounds by class (issue 29, point 5) and the correct resources that must pass (point 6),
 * through both whole packs in-process as the analyzer runs them. Each class generates its cases
 * with fast-check; a generated case is a walk-around (or a correct resource) by construction,
 * independently of the evaluator: the generators spell out what the API server or AWS would do.
 */
import fc from "fast-check";
import { AWS_TAGS_POLICIES } from "../../policy-packs/aws-tags/policies";
import { K8S_RBAC_POLICIES } from "../../policy-packs/k8s-rbac/policies";
import { EngineResource, PolicyEngine } from "../../scripts/policy/engine";
import { resource, UNKNOWN_VALUE } from "./support";
import type { ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";

const engine = (policies: unknown[], config: Record<string, Record<string, unknown>> = {}) =>
    new PolicyEngine({
        name: "pack",
        policies: policies as (ResourceValidationPolicy | StackValidationPolicy)[],
        enforcementLevel: "mandatory",
        config,
    });
const rbac = engine(K8S_RBAC_POLICIES);
const REQUIRED = ["costCenter", "owner"];
const awsTags = engine(AWS_TAGS_POLICIES, {
    "aws-required-tags": { requiredTags: REQUIRED },
    "aws-side-channel-tags": { requiredTags: REQUIRED },
    "aws-reserved-tag-keys": { clusterIds: ["prod-east-x7k2p"] },
});
const TAGS = { costCenter: "7536", owner: "platform" };

/** `policy: violation` lines of one resource through the whole pack, and of the stack it forms. */
function judged(pack: PolicyEngine, ...resources: EngineResource[]): string[] {
    return pack.analyzeAll(resources).diagnostics.map((d) => `${d.policyName}: ${d.violation}`);
}
const caught = (pack: PolicyEngine, ...resources: EngineResource[]) => expect(judged(pack, ...resources)).not.toEqual([]);

const RBAC_TYPES = {
    k8s: "kubernetes:rbac.authorization.k8s.io/v1",
    openshift: "kubernetes:authorization.openshift.io/v1",
};
const role = (name: string, body: Record<string, unknown>, api: keyof typeof RBAC_TYPES = "k8s") =>
    resource(`${RBAC_TYPES[api]}:ClusterRole`, name, { metadata: { name }, ...body });
const binding = (name: string, roleName: string, subjects: unknown[], api: keyof typeof RBAC_TYPES = "k8s") =>
    resource(`${RBAC_TYPES[api]}:ClusterRoleBinding`, name, {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
        subjects,
    });

const api = fc.constantFrom<keyof typeof RBAC_TYPES>("k8s", "openshift");
const others = fc.subarray(["get", "list", "watch", "update"]);

describe("RBAC walk-arounds, by class: each generated case is refused", () => {
    test("GIVEN escalate, bind or impersonate implied by a * verb, on the resources they act on, in either RBAC API WHEN judged THEN refused", () => {
        const target = fc.constantFrom(
            { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"] },
            { apiGroups: ["authorization.openshift.io"], resources: ["roles"] },
            { apiGroups: [""], resources: ["users"] },
            { apiGroups: [""], resources: ["serviceaccounts", "configmaps"] },
            { apiGroups: ["*"], resources: ["groups"] },
        );
        fc.assert(
            fc.property(target, others, api, (t, verbs, which) =>
                caught(rbac, role("r", { rules: [{ ...t, verbs: [...verbs, "*"] }] }, which)),
            ),
        );
    });

    test("GIVEN a ClusterRole with no rules whose aggregationRule selects built-in aggregated roles, everything, or by expressions WHEN judged THEN refused", () => {
        const selector = fc.oneof(
            fc
                .constantFrom("admin", "edit", "view", "cluster-reader")
                .map((r) => ({ matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${r}`]: "true" } })),
            fc.constantFrom("admin", "edit").map((r) => ({ matchLabels: { [`authorization.openshift.io/aggregate-to-${r}`]: "true" } })),
            fc.constant({}),
            fc.constant({ matchExpressions: [{ key: "team", operator: "Exists" }] }),
        );
        fc.assert(
            fc.property(selector, api, (s, which) =>
                caught(rbac, role("agg", { rules: [], aggregationRule: { clusterRoleSelectors: [s] } }, which)),
            ),
        );
    });

    test("GIVEN Secret reads and token minting spelled out without *, in any group spelling that reaches the core group WHEN judged THEN refused", () => {
        const grant = fc.oneof(
            fc
                .subarray(["get", "list", "watch"], { minLength: 1 })
                .chain((verbs) => fc.constantFrom(["secrets"], ["secrets", "configmaps"]).map((resources) => ({ verbs, resources }))),
            fc
                .constantFrom(["serviceaccounts/token"], ["*/token"], ["serviceaccounts/*"])
                .map((resources) => ({ verbs: ["create"], resources })),
            fc.constantFrom(["pods/exec"], ["pods/attach"], ["pods/*"]).map((resources) => ({ verbs: ["create"], resources })),
        );
        fc.assert(
            fc.property(grant, fc.constantFrom([""], ["*"], ["", "apps"]), api, (g, apiGroups, which) =>
                caught(rbac, role("reader", { rules: [{ apiGroups, ...g }] }, which)),
            ),
        );
    });

    test("GIVEN a powerful built-in role bound to a broad group, OpenShift's among them, or to the anonymous user, in either RBAC API WHEN judged THEN refused before the binding exists", () => {
        const subject = fc.oneof(
            fc
                .constantFrom(
                    "system:authenticated",
                    "system:authenticated:oauth",
                    "system:unauthenticated",
                    "system:serviceaccounts",
                    "system:serviceaccounts:team-a",
                )
                .map((name) => ({ kind: "Group", name })),
            fc.constant({ kind: "User", name: "system:anonymous" }),
        );
        fc.assert(
            fc.property(fc.constantFrom("cluster-admin", "admin", "edit", "sudoer"), subject, api, (roleName, s, which) =>
                caught(rbac, binding("b", roleName, [s], which)),
            ),
        );
    });

    test("GIVEN a stack role with any power (allow-listed from the role policies) bound to a broad group WHEN the stack is judged THEN the binding is refused", () => {
        const allowListed = engine(K8S_RBAC_POLICIES, { "k8s-no-broad-grants": { allowedRoles: ["team-reader"] } });
        fc.assert(
            fc.property(fc.constantFrom("system:authenticated", "system:authenticated:oauth", "system:serviceaccounts:team-a"), (group) => {
                const reader = role("team-reader", { rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"] }] });
                const lines = judged(allowListed, reader, binding("b", "team-reader", [{ kind: "Group", name: group }]));
                expect(lines.filter((l) => l.startsWith("k8s-no-admin-for-everyone:"))).toEqual([
                    `k8s-no-admin-for-everyone: ClusterRoleBinding "b" binds ClusterRole "team-reader", which gives read every Secret in reach (get, list or watch), to Group ${JSON.stringify(group)}; bind it to the named subjects that need it`,
                ]);
            }),
        );
    });

    test("GIVEN a MutatingAdmissionPolicy matching RBAC objects WHEN judged THEN refused", () => {
        const rule = fc.record({
            apiGroups: fc.constantFrom(["rbac.authorization.k8s.io"], ["authorization.openshift.io"], ["*"]),
            resources: fc.constantFrom(["rolebindings"], ["clusterroles"], ["*"], ["clusterrolebindings/status"]),
            operations: fc.constant(["CREATE", "UPDATE"]),
        });
        fc.assert(
            fc.property(rule, fc.constantFrom("v1alpha1", "v1beta1"), (r, version) =>
                caught(
                    rbac,
                    resource(`kubernetes:admissionregistration.k8s.io/${version}:MutatingAdmissionPolicy`, "m", {
                        metadata: { name: "m" },
                        spec: { matchConstraints: { resourceRules: [r] } },
                    }),
                ),
            ),
        );
    });

    test("GIVEN every non-resource URL granted WHEN judged THEN refused", () => {
        fc.assert(
            fc.property(fc.subarray(["get", "post", "put", "delete"], { minLength: 1 }), api, (verbs, which) =>
                caught(rbac, role("urls", { rules: [{ nonResourceURLs: ["*"], verbs }] }, which)),
            ),
        );
    });
});

describe("correct RBAC passes (no false positives)", () => {
    test("GIVEN bind or impersonate narrowed by resourceNames to roles or users that are not powerful WHEN judged THEN nothing is reported", () => {
        const narrow = fc.oneof(
            fc.constant({
                apiGroups: ["rbac.authorization.k8s.io"],
                resources: ["clusterroles"],
                verbs: ["bind"],
                resourceNames: ["widgets-viewer"],
            }),
            fc.constant({ apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"], resourceNames: ["builder"] }),
            fc.constant({ apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["pull-secret"] }),
        );
        fc.assert(fc.property(narrow, (rule) => expect(judged(rbac, role("narrow", { rules: [rule] }))).toEqual([])));
    });

    test("GIVEN bind narrowed to cluster-admin, or impersonate narrowed to system:admin WHEN judged THEN they are still refused", () => {
        caught(
            rbac,
            role("n", {
                rules: [
                    {
                        apiGroups: ["rbac.authorization.k8s.io"],
                        resources: ["clusterroles"],
                        verbs: ["bind"],
                        resourceNames: ["cluster-admin"],
                    },
                ],
            }),
        );
        caught(
            rbac,
            role("n", { rules: [{ apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["system:admin"] }] }),
        );
    });
});

const bucket = (tags: Record<string, unknown>) => resource("aws:s3/bucket:Bucket", "b", { bucket: "b", tags });

describe("AWS tag walk-arounds, by class: each generated case is refused", () => {
    test("GIVEN a tag written through a side-channel resource with a reserved or blank key or value WHEN judged THEN refused", () => {
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
        fc.assert(
            fc.property(bad, fc.constantFrom("ec2", "ecs", "dynamodb"), (t, service) =>
                caught(awsTags, resource(`aws:${service}/tag:Tag`, "t", { resourceId: "i-1", key: t.key, value: t.value })),
            ),
        );
        caught(
            awsTags,
            resource("aws:autoscaling/tag:Tag", "t", {
                autoscalingGroupName: "g",
                tag: { key: "owner", value: "x", propagateAtLaunch: false },
            }),
        );
    });

    test("GIVEN a launch template whose tag specifications leave instances or volumes out WHEN judged THEN refused", () => {
        const kinds = fc
            .subarray(["instance", "volume", "network-interface"])
            .filter((k) => !(k.includes("instance") && k.includes("volume")));
        fc.assert(
            fc.property(kinds, (ks) =>
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

    test("GIVEN an Auto Scaling group whose required tags are not all propagated at launch WHEN judged THEN refused", () => {
        fc.assert(
            fc.property(fc.subarray(REQUIRED, { minLength: 1 }), (kept) =>
                caught(
                    awsTags,
                    resource("aws:autoscaling/group:Group", "g", {
                        tags: Object.entries(TAGS).map(([key, value]) => ({ key, value, propagateAtLaunch: !kept.includes(key) })),
                    }),
                ),
            ),
        );
    });

    test("GIVEN whitespace-only values WHEN judged THEN refused", () => {
        fc.assert(fc.property(fc.constantFrom(" ", "   ", "\u3000"), (blank) => caught(awsTags, bucket({ ...TAGS, team: blank }))));
    });

    test("GIVEN a taggable aws-native type without tags, and types the derived schema does not know that declare tags WHEN judged THEN refused; an unknown type only unless allow-listed", () => {
        caught(awsTags, resource("aws-native:s3:Bucket", "n", {}));
        caught(awsTags, resource("aws:brandnew/thing:Thing", "t", { tags: TAGS }));
        caught(awsTags, resource("aws-native:brandnew:Thing", "t", { tags: [{ key: "costCenter", value: "1" }] }));
        const allowing = engine(AWS_TAGS_POLICIES, { "aws-unjudged-types": { allowedTypes: ["aws:brandnew/thing:Thing"] } });
        expect(judged(allowing, resource("aws:brandnew/thing:Thing", "t", { tags: TAGS }))).toEqual([]);
    });
});

describe("stack-wide AWS settings: every AWS resource's provider", () => {
    const withSettings = engine(AWS_TAGS_POLICIES, {
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

    test("GIVEN the engine's default provider, in any version's name, WHEN judged THEN refused; the stack's provider with the ignoreTags passes", () => {
        fc.assert(
            fc.property(fc.constantFrom("default", "default_7_48_0", "default_6_0_0"), (name) =>
                expect(onProvider(providerNamed(name))).toEqual([
                    'aws-provider-settings: aws:s3/bucket:Bucket "b" is managed by the default AWS provider, which none of the stack\'s AWS settings (region, ignoreTags) reach',
                ]),
            ),
        );
        expect(onProvider(providerNamed("aws", { keys: ["backup-plan"], keyPrefixes: ["finops:"] }))).toEqual([]);
    });

    test("GIVEN an explicit provider without the stack's ignoreTags WHEN judged THEN refused, naming what it does not ignore", () => {
        expect(onProvider(providerNamed("other-region", { keys: [], keyPrefixes: ["finops:"] }))).toEqual([
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

    test("GIVEN provider defaultTags known only at deploy WHEN an untagged bucket is previewed THEN nothing is reported until they are known", () => {
        for (const defaultTags of [UNKNOWN_VALUE, JSON.stringify({ tags: { costCenter: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" } })]) {
            expect(
                judged(awsTags, resource("aws:s3/bucket:Bucket", "b", { bucket: "b", tags: {} }, { provider: provider(defaultTags) })),
            ).toEqual([]);
        }
    });

    test("GIVEN the AWS cloud provider's own keys for this cluster on subnets and security groups WHEN judged THEN they pass; another cluster's id or another type does not", () => {
        const subnet = (tags: Record<string, string>) => resource("aws:ec2/subnet:Subnet", "s", { vpcId: "v", tags: { ...TAGS, ...tags } });
        expect(judged(awsTags, subnet({ "kubernetes.io/cluster/prod-east-x7k2p": "owned", "kubernetes.io/role/elb": "1" }))).toEqual([]);
        expect(judged(awsTags, subnet({ "kubernetes.io/role/internal-elb": "1" }))).toEqual([]);
        expect(
            judged(
                awsTags,
                resource("aws:ec2/securityGroup:SecurityGroup", "g", {
                    tags: { ...TAGS, "kubernetes.io/cluster/prod-east-x7k2p": "shared" },
                }),
            ),
        ).toEqual([]);
        caught(awsTags, subnet({ "kubernetes.io/cluster/someone-else": "owned" }));
        caught(awsTags, bucket({ ...TAGS, "kubernetes.io/role/elb": "1" }));
    });

    test("GIVEN values in any script AWS accepts WHEN judged THEN they pass", () => {
        const letters = fc
            .string({ unit: fc.constantFrom("é", "ü", "日", "本", "Ж", "a", "1", " ", "-", "@"), minLength: 1, maxLength: 20 })
            .filter((v) => v.trim() !== "");
        fc.assert(fc.property(letters, (v) => expect(judged(awsTags, bucket({ ...TAGS, team: v }))).toEqual([])));
    });

    test("GIVEN a launch template tagging instances and volumes, and an Auto Scaling group propagating the required tags WHEN judged THEN they pass", () => {
        expect(
            judged(
                awsTags,
                resource("aws:ec2/launchTemplate:LaunchTemplate", "lt", {
                    tags: TAGS,
                    tagSpecifications: ["instance", "volume"].map((resourceType) => ({ resourceType, tags: TAGS })),
                }),
            ),
        ).toEqual([]);
        expect(
            judged(
                awsTags,
                resource("aws:autoscaling/group:Group", "g", {
                    tags: Object.entries(TAGS).map(([key, value]) => ({ key, value, propagateAtLaunch: true })),
                }),
            ),
        ).toEqual([]);
    });
});
