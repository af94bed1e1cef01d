import * as path from "node:path";
import { ROOT } from "../helpers/render";
import { analyze, analyzerInfo, analyzeStack, configure, diagnosticsOf, policiesOf, RunningPack, startPack } from "./analyzer-process";
import { k8s, resource, UNKNOWN_VALUE } from "./support";

const EVERYTHING = { apiGroups: ["*"], resources: ["*"], verbs: ["*"] };

describe("the k8s-rbac pack through the real analyzer protocol (index.ts run as the Pulumi CLI runs it)", () => {
    let pack: RunningPack;
    beforeAll(async () => {
        pack = await startPack(path.join(ROOT, "policy-packs", "k8s-rbac"));
    });
    afterAll(async () => {
        await pack?.stop();
    });

    test("GIVEN the running pack WHEN the CLI asks for its info THEN it names every policy, mandatory, with severity, remediation steps and knobs", async () => {
        const info = await analyzerInfo(pack.client);
        expect([info.getName(), info.getVersion(), info.getSupportsconfig()]).toEqual(["k8s-rbac", "0.1.0", true]);
        expect(policiesOf(info)).toEqual([
            {
                name: "k8s-olm-rbac-toggles",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "high",
                hasRemediationSteps: true,
                configKeys: ["disableAggregateCRDRoles", "disableAllNamespacePermissionPromotion", "disableOLMAggregateCRDRoles"],
            },
            {
                name: "k8s-aggregated-roles",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: ["aggregatedRoles"],
            },
            {
                name: "k8s-no-wildcard-access",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: ["allowedRoles"],
            },
            {
                name: "k8s-no-broad-grants",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: ["allowedRoles", "operatorExemptions", "operators"],
            },
            {
                name: "k8s-no-cluster-admin-service-accounts",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-no-admin-for-everyone",
                type: "stack",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-no-power-for-broad-groups",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-no-powerful-bindings",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: ["allowedBindings"],
            },
            {
                name: "k8s-no-mutating-policy-over-rbac",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-webhook-forbidden-rules",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "critical",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-webhook-timeout",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "high",
                hasRemediationSteps: true,
                configKeys: ["maxTimeoutSeconds"],
            },
            {
                name: "k8s-webhook-side-effects",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "medium",
                hasRemediationSteps: true,
                configKeys: [],
            },
            {
                name: "k8s-webhook-namespace-exclusions",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "high",
                hasRemediationSteps: true,
                configKeys: ["alsoExcluded"],
            },
            {
                name: "k8s-webhook-fail-closed-availability",
                type: "stack",
                enforcementLevel: "mandatory",
                severity: "high",
                hasRemediationSteps: true,
                configKeys: ["minReplicas"],
            },
            {
                name: "k8s-pod-security-restricted",
                type: "resource",
                enforcementLevel: "mandatory",
                severity: "high",
                hasRemediationSteps: true,
                configKeys: ["exemptNamespaces", "platform"],
            },
            {
                name: "k8s-unjudged-content",
                type: "resource",
                enforcementLevel: "advisory",
                severity: "medium",
                hasRemediationSteps: true,
                configKeys: [],
            },
        ]);
    });

    test("GIVEN a ClusterRole granting * on * WHEN Analyze is called THEN one mandatory diagnostic carries the description and the violation; an allow-listed one passes once configured", async () => {
        const role = k8s({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "operator-admin" },
            rules: [EVERYTHING],
        });
        expect(diagnosticsOf(await analyze(pack.client, role))).toEqual([
            {
                policyName: "k8s-no-wildcard-access",
                policyPack: "k8s-rbac@0.1.0",
                enforcementLevel: "mandatory",
                severity: "critical",
                message:
                    'Roles and ClusterRoles grant no "*" verb on "*" resources, unless they are on the allow-list.\nClusterRole "operator-admin" rules[0] grants every verb ("*") on every resource ("*") of API groups ["*"]; list the verbs and resources it needs, or add "operator-admin" to allowedRoles',
                urn: "",
            },
        ]);
        await configure(pack.client, { "k8s-no-wildcard-access": { enforcementLevel: "mandatory", allowedRoles: ["operator-admin"] } });
        try {
            expect(diagnosticsOf(await analyze(pack.client, role))).toEqual([]);
        } finally {
            await configure(pack.client, {});
        }
    });

    test("GIVEN a webhook with an unknown timeout during a preview WHEN analyzed THEN that policy is advisory (can't run yet) and the others still judge the webhook", async () => {
        const configuration = k8s({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "MutatingWebhookConfiguration",
            metadata: { name: "m" },
            webhooks: [
                {
                    name: "m.example.io",
                    clientConfig: { service: { name: "s", namespace: "ns" } },
                    sideEffects: "Some",
                    timeoutSeconds: UNKNOWN_VALUE,
                    namespaceSelector: {
                        matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "ns"] }],
                    },
                },
            ],
        });
        expect(
            diagnosticsOf(await analyze(pack.client, configuration)).map(
                (d) => `${d.enforcementLevel} ${d.policyName}: ${d.message.split("\n").pop()}`,
            ),
        ).toEqual([
            "advisory k8s-webhook-timeout: can't run policy 'k8s-webhook-timeout' from policy pack 'k8s-rbac@v0.1.0' during preview: string value at .webhooks.0.timeoutSeconds can't be known during preview",
            'mandatory k8s-webhook-side-effects: MutatingWebhookConfiguration "m" webhook "m.example.io" (webhooks[0]): sideEffects is "Some"; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
        ]);
    });

    test("GIVEN a fail-closed webhook with a single-replica backend WHEN AnalyzeStack is called THEN the stack policy reports against the configuration's URN", async () => {
        const labels = { app: "w" };
        const configuration = k8s({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: { name: "v" },
            webhooks: [{ name: "v.example.io", clientConfig: { service: { name: "w-service", namespace: "w" } }, sideEffects: "None" }],
        });
        const resources = [
            configuration,
            k8s({ apiVersion: "v1", kind: "Service", metadata: { name: "w-service", namespace: "w" }, spec: { selector: labels } }),
            k8s({
                apiVersion: "apps/v1",
                kind: "Deployment",
                metadata: { name: "w", namespace: "w" },
                spec: { replicas: 1, template: { metadata: { labels }, spec: { containers: [] } } },
            }),
            k8s({
                apiVersion: "policy/v1",
                kind: "PodDisruptionBudget",
                metadata: { name: "w", namespace: "w" },
                spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
            }),
        ];
        expect(diagnosticsOf(await analyzeStack(pack.client, resources))).toEqual([
            {
                policyName: "k8s-webhook-fail-closed-availability",
                policyPack: "k8s-rbac@0.1.0",
                enforcementLevel: "mandatory",
                severity: "high",
                message:
                    'A webhook with failurePolicy Fail is served by a Deployment with at least 2 replicas and a PodDisruptionBudget.\nValidatingWebhookConfiguration "v" webhook "v.example.io" fails closed (failurePolicy Fail): its Deployment "w/w" runs 1 replica; at least 2 are needed so that one pod\'s restart does not block every request the webhook intercepts',
                urn: configuration.urn,
            },
        ]);
    });

    test("GIVEN a request without AnalyzerResourceOptions WHEN Analyze is called THEN the server refuses it as coming from an older CLI", async () => {
        const role = k8s({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "r" }, rules: [] });
        await expect(analyze(pack.client, role, false)).rejects.toThrow("A more recent version of the Pulumi CLI is required");
    });
});

describe("the aws-tags pack through the real analyzer protocol", () => {
    let pack: RunningPack;
    beforeAll(async () => {
        pack = await startPack(path.join(ROOT, "policy-packs", "aws-tags"));
    });
    afterAll(async () => {
        await pack?.stop();
    });

    const awsProvider = {
        type: "pulumi:providers:aws",
        name: "aws",
        urn: "urn:pulumi:test::cluster-platform::pulumi:providers:aws::aws",
        props: { region: "us-east-1", defaultTags: JSON.stringify({ tags: { adminContact: "jdoe" } }) },
    };

    test("GIVEN the running pack WHEN the CLI asks for its info THEN it names its mandatory policies, every one a resource policy", async () => {
        const info = await analyzerInfo(pack.client);
        expect([info.getName(), info.getVersion()]).toEqual(["aws-tags", "0.1.0"]);
        expect(policiesOf(info).map((p) => `${p.type} ${p.name} ${p.enforcementLevel} ${p.severity} [${p.configKeys.join(", ")}]`)).toEqual(
            [
                "resource aws-required-tags mandatory high [requiredTags]",
                "resource aws-reserved-tag-keys mandatory high [allowedKeys, clusterIds]",
                "resource aws-no-name-user-tag mandatory medium []",
                "resource aws-tag-format mandatory medium []",
                "resource aws-tag-count mandatory high []",
                "resource aws-side-channel-tags mandatory high [requiredTags]",
                "resource aws-provider-settings mandatory high [ignoreTagKeyPrefixes, ignoreTagKeys, tagPolicyCompliance]",
                "resource aws-untagged-resources mandatory high []",
                "resource aws-unjudged-types mandatory high [allowedTypes]",
                "resource aws-unjudged-content advisory medium []",
            ],
        );
    });

    test("GIVEN required keys configured WHEN a bucket with a reserved key is analyzed with its provider THEN the provider's default tags count and both violations come back", async () => {
        await configure(pack.client, {
            "aws-required-tags": { enforcementLevel: "mandatory", requiredTags: ["adminContact", "costCenter"] },
        });
        const bucket = resource(
            "aws:s3/bucket:Bucket",
            "registry",
            { tags: { "openshift.io/owner": "x" }, tagsAll: UNKNOWN_VALUE },
            { provider: awsProvider },
        );
        expect(
            diagnosticsOf(await analyze(pack.client, bucket)).map(
                (d) => `${d.enforcementLevel} ${d.policyName}: ${d.message.split("\n").pop()}`,
            ),
        ).toEqual([
            'mandatory aws-required-tags: aws:s3/bucket:Bucket "registry" lacks the required tag "costCenter" (it carries "adminContact", "openshift.io/owner")',
            'mandatory aws-reserved-tag-keys: aws:s3/bucket:Bucket "registry" tag "openshift.io/owner": key is in the openshift.io namespace, which the platform reserves',
        ]);
    });

    test("GIVEN an untagged queue WHEN Analyze is called for it THEN it is refused before it exists (a resource policy), and AnalyzeStack has nothing left to say", async () => {
        const queue = resource("aws:sqs/queue:Queue", "events", {});
        // (aws-required-tags, configured by the test above, refuses it too.)
        expect(
            diagnosticsOf(await analyze(pack.client, queue))
                .filter((d) => d.policyName === "aws-untagged-resources")
                .map((d) => d.message),
        ).toEqual(['No taggable AWS resource is created without tags.\naws:sqs/queue:Queue "events" carries no tags']);
        expect(diagnosticsOf(await analyzeStack(pack.client, [queue]))).toEqual([]);
    });
});
