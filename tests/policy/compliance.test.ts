import * as path from "node:path";
import { DISABLED_BY, OLM_AGGREGATE_ROLE_NAMES } from "../../components/operator/rbac";
import { GENERATED_BY_LABEL } from "../../components/shared/labels";
import { PackName, policyConfigFor } from "../../scripts/policy/config";
import type { AnalysisResult, PackConfig } from "../../scripts/policy/analyzer";
import { analyzeWithBothPacks, exampleStacks, renderStack, stackFileConfig, validatedConfig } from "../../scripts/policy/stacks";
import type { RenderResult } from "../../scripts/render/render";
import { FlatConfig } from "../../scripts/render/config-file";
import { SAMPLE_CSVS } from "../helpers/operators";
import { PACKS_START, sharedPacks } from "../helpers/policy-packs";

// The packs start once per jest registry (tests/helpers/policy-packs.ts); on a loaded machine that takes minutes.
beforeAll(() => sharedPacks(), PACKS_START);

/** Both packs, each its analyzer process as the CLI starts it, over a render, configured as `packConfig` says (the stack's own by default). */
async function analyzed(
    result: RenderResult,
    config: FlatConfig,
    packConfig: Record<PackName, PackConfig> = policyConfigFor(validatedConfig(config)),
): Promise<Record<PackName, AnalysisResult>> {
    return analyzeWithBothPacks(await sharedPacks(), result, packConfig);
}

const summary = (result: AnalysisResult) =>
    result.diagnostics.map((d) => `${d.enforcementLevel} ${d.policyName} ${d.urn ?? ""}: ${d.violation}`);

/** The stack's config with its olm section's toggles replaced. */
function withToggles(config: FlatConfig, toggles: Record<string, boolean>): FlatConfig {
    const key = "cluster-platform:olm";
    return { ...config, values: { ...config.values, [key]: JSON.stringify({ ...JSON.parse(config.values[key] ?? "{}"), ...toggles }) } };
}

/**
 * The example installs no operator (its README says why); these toggles judge what operator
 * installs generate, so this stack adds the two sample bundles the tests use.
 */
const SAMPLE_OPERATORS = [
    {
        name: "widgets",
        csv: SAMPLE_CSVS.widgets,
        namespace: "widget-operator",
        targetNamespaces: [],
        rbacNamespaces: ["team-a", "team-b"],
    },
    {
        name: "backups",
        csv: SAMPLE_CSVS.backups,
        namespace: "backup-operator",
        targetNamespaces: ["team-a", "team-b"],
    },
];

function withSampleOperators(config: FlatConfig): FlatConfig {
    return { ...config, values: { ...config.values, "cluster-platform:operators": JSON.stringify(SAMPLE_OPERATORS) } };
}

const ALL_ON = { disableOLMAggregateCRDRoles: true, disableAggregateCRDRoles: true, disableAllNamespacePermissionPromotion: true };
const ALL_OFF = { disableOLMAggregateCRDRoles: false, disableAggregateCRDRoles: false, disableAllNamespacePermissionPromotion: false };

/** One whole-program render per (stack, config): tests that judge the same render share it (results are read, never changed). */
const renders = new Map<string, ReturnType<typeof renderStack>>();
function renderOnce(stack: string, config: FlatConfig): ReturnType<typeof renderStack> {
    const key = `${stack} ${JSON.stringify(config)}`;
    if (!renders.has(key)) {
        renders.set(key, renderStack(stack, { config }));
    }
    return renders.get(key) as ReturnType<typeof renderStack>;
}

describe("whole-program compliance: every example stack through the real program and both packs", () => {
    test.each(exampleStacks())(
        "GIVEN %s rendered with its cluster objects WHEN every resource goes through aws-tags and k8s-rbac, configured as the stack configures them THEN no policy reports anything",
        async (stack) => {
            const result = await renderStack(stack);
            expect(result.errors).toEqual([]);
            const analysis = await analyzed(result, stackFileConfig(stack));
            expect(summary(analysis["aws-tags"])).toEqual([]);
            expect(summary(analysis["k8s-rbac"])).toEqual([]);
        },
    );

    test.each([
        ["every OLM RBAC toggle set", ALL_ON],
        ["every OLM RBAC toggle unset", ALL_OFF],
    ])(
        "GIVEN examples/openshift-aws.yaml with %s WHEN rendered and analyzed with the stack's own toggles THEN the operator installs honour them and nothing is reported",
        async (_what, toggles) => {
            const config = withToggles(stackFileConfig("examples/openshift-aws.yaml"), toggles);
            const result = await renderOnce("examples/openshift-aws.yaml", config);
            expect(result.errors).toEqual([]);
            expect(summary((await analyzed(result, config))["k8s-rbac"])).toEqual([]);
        },
    );
});

describe("a stack with reconcile on through both packs", () => {
    const RECONCILE = {
        enabled: true,
        git: { repository: "https://github.com/platform-team/cluster-platform.git", branch: "main" },
        environment: { PULUMI_CONFIG_PASSPHRASE: { name: "pulumi-passphrase", key: "passphrase" } },
    };
    const config = (() => {
        const base = stackFileConfig("examples/openshift-aws.yaml");
        return { ...base, values: { ...base.values, "cluster-platform:reconcile": JSON.stringify(RECONCILE) } };
    })();

    test("GIVEN examples/openshift-aws.yaml with reconcile on WHEN analyzed with the policy config npm run policy:config writes THEN neither pack reports anything", async () => {
        const result = await renderOnce("examples/openshift-aws.yaml", config);
        expect(result.errors).toEqual([]);
        const analysis = await analyzed(result, config);
        expect(summary(analysis["aws-tags"])).toEqual([]);
        expect(summary(analysis["k8s-rbac"])).toEqual([]);
    });

    test("GIVEN the same stack WHEN analyzed without the reconcile role's exemption THEN k8s-no-broad-grants reports exactly that role: its escalate and bind, its Secret reads and its writes of webhook configurations and CRDs", async () => {
        const result = await renderOnce("examples/openshift-aws.yaml", config);
        const stackConfig = validatedConfig(config);
        const packConfig = policyConfigFor(stackConfig);
        const broadGrants = packConfig["k8s-rbac"]["k8s-no-broad-grants"] as { allowedRoles: string[] };
        const rbac = {
            ...packConfig["k8s-rbac"],
            "k8s-no-broad-grants": {
                allowedRoles: broadGrants.allowedRoles.filter((role) => role !== "cluster-platform-reconcile-cluster-platform-prod-east"),
            },
        };
        const reported = (await analyzed(result, config, { ...packConfig, "k8s-rbac": rbac }))["k8s-rbac"].diagnostics;
        expect([...new Set(reported.map((d) => d.policyName))]).toEqual(["k8s-no-broad-grants"]);
        expect(reported.map((d) => /^ClusterRole "[^"]+" \[[a-z-]+\]/.exec(d.violation)?.[0])).toEqual(
            ["escalate", "bind", "read-secrets", "admission-writes", "crd-writes"].map(
                (p) => `ClusterRole "cluster-platform-reconcile-cluster-platform-prod-east" [${p}]`,
            ),
        );
    });
});

describe("the reverse: the packs catch what a stack should not declare", () => {
    test("GIVEN the example with the sample operators rendered with every OLM RBAC toggle unset WHEN judged by a pack configured with them all set THEN exactly the promoted and aggregate ClusterRoles it generates are reported", async () => {
        const stackConfig = withToggles(withSampleOperators(stackFileConfig("examples/openshift-aws.yaml")), ALL_OFF);
        const result = await renderOnce("examples/openshift-aws.yaml", stackConfig);
        const diagnostics = (await analyzed(result, withToggles(stackConfig, ALL_ON)))["k8s-rbac"].diagnostics;
        // What the operator installs generated for the reasons the toggles disable, read from the rendered
        // objects, and OLM's own aggregate roles (adopted, so without this stack's labels: known by name).
        const disabled = new Set<string>(Object.values(DISABLED_BY));
        const generated = result.manifests
            .map((m) => m.object as { kind: string; metadata: { name: string; labels?: Record<string, string> } })
            .filter(
                (o) =>
                    ["ClusterRole", "ClusterRoleBinding"].includes(o.kind) &&
                    (disabled.has(o.metadata.labels?.[GENERATED_BY_LABEL] ?? "") ||
                        (o.kind === "ClusterRole" && OLM_AGGREGATE_ROLE_NAMES.includes(o.metadata.name))),
            )
            .map((o) => `${o.kind} ${JSON.stringify(o.metadata.name)}`);
        expect(diagnostics.map((d) => `${d.policyName} ${d.violation.split(" is ")[0]}`)).toEqual(
            generated.map((object) => `k8s-olm-rbac-toggles ${object}`),
        );
        expect([...new Set(diagnostics.map((d) => /olm\.(\w+) is set$/.exec(d.violation)?.[1]))].sort()).toEqual(
            Object.keys(ALL_ON).sort(),
        );
        expect(generated).toEqual(
            expect.arrayContaining(['ClusterRole "aggregate-olm-edit"', 'ClusterRole "backups.samples.cluster-platform.io-v1-crdview"']),
        );
    });
});

describe("the reverse: seeded mistakes in the real program are caught", () => {
    const stack = "examples/openshift-aws.yaml";
    let analysis: Record<PackName, AnalysisResult>;
    beforeAll(async () => {
        const result = await renderStack(stack, { program: path.join(__dirname, "fixtures", "seeded-program") });
        expect(result.errors).toEqual([]);
        analysis = await analyzed(result, stackFileConfig(stack));
    });

    test("GIVEN an S3 bucket created by a test component before the stack-wide tagging is registered WHEN analyzed THEN it lacks the stack's user tags and is listed as untagged", () => {
        expect(summary(analysis["aws-tags"])).toEqual([
            'mandatory aws-required-tags urn:pulumi:render::cluster-platform::test:seeded:UntaggedLogs$aws:s3/bucket:Bucket::seeded-logs-bucket: aws:s3/bucket:Bucket "seeded-logs-bucket" lacks the required tags "adminContact", "costCenter", "red-hat-managed" (it carries no tags)',
            'mandatory aws-untagged-resources urn:pulumi:render::cluster-platform::test:seeded:UntaggedLogs$aws:s3/bucket:Bucket::seeded-logs-bucket: aws:s3/bucket:Bucket "seeded-logs-bucket" carries no tags',
        ]);
    });

    test("GIVEN a hand-written ClusterRole aggregated to edit that reads Secrets, and a webhook intercepting OLM's ClusterServiceVersions WHEN analyzed THEN each is caught by its rule, and nothing else of the program is reported", () => {
        expect(summary(analysis["k8s-rbac"])).toEqual([
            'mandatory k8s-aggregated-roles urn:pulumi:render::cluster-platform::kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::seeded-secrets-reader: ClusterRole "secrets-reader" (aggregated into edit) rules[0] grants ["get","list"] on Secrets (apiGroups [""], resources ["secrets"]); a role aggregated into a default role must grant nothing on Secrets',
            'mandatory k8s-no-broad-grants urn:pulumi:render::cluster-platform::kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::seeded-secrets-reader: ClusterRole "secrets-reader" [read-secrets] read Secrets (get, list or watch): rules[0] allows get secrets (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#listing-secrets); list the verbs, resources and names it needs, or add "secrets-reader" to allowedRoles',
            'mandatory k8s-webhook-forbidden-rules urn:pulumi:render::cluster-platform::kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration::seeded-csv-guard: ValidatingWebhookConfiguration "csv-guard" webhook "csv.guard.example.io" (webhooks[0]) rules[0].apiGroups: Webhook rules cannot include the OLM group',
        ]);
    });
});
