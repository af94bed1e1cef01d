import fc from "fast-check";
import { configProblemLines } from "../helpers/config-problems";
import { validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";

const base = () => ({ cluster: { name: "prod-east", platform: "openshift", kubeContext: "test" } });

const problemLines = configProblemLines;

describe("stack config validation", () => {
    test("GIVEN only the cluster key WHEN validated THEN every other section gets its documented defaults", () => {
        const result = validateStackConfig(base());
        expect(result).toEqual({
            ok: true,
            warnings: [],
            config: {
                cluster: { name: "prod-east", platform: "openshift", kubeContext: "test", runByOperator: false },
                certificates: { mode: "self-signed", caValidityDays: 790, certValidityDays: 730, renewBeforeDays: 30 },
                caInjection: [],
                subscriptions: {
                    enabled: false,
                    namespace: "subscription-injection",
                    sourceNamespace: "subscription-sources",
                    removedShares: "keepWhileInUse",
                    webhook: {
                        replicas: 3,
                        failurePolicy: "Fail",
                        timeoutSeconds: 10,
                        excludedNamespaces: [],
                        readNamespaces: [],
                        readAllNamespaces: false,
                    },
                    clusterBundles: [],
                    bundles: [],
                    allowedAggregationRoles: [],
                    sharedResourceDriver: { serviceAccount: { name: "csi-driver-shared-resource", namespace: "openshift-builds" } },
                },
                olm: {
                    disableOLMAggregateCRDRoles: false,
                    disableAggregateCRDRoles: false,
                    disableAllNamespacePermissionPromotion: false,
                    manageOLMConfig: false,
                },
                operators: [],
                aws: { enabled: false, userTags: {}, imageRegistryStorage: { enabled: false }, ignoreTags: { keys: [], keyPrefixes: [] } },
                webhookImage: {
                    repository: "cluster-platform/subscription-webhook",
                    baseImage:
                        "gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e",
                    platforms: ["linux/amd64"],
                    deleteOnDestroy: false,
                },
                reconcile: {
                    enabled: false,
                    namespace: "cluster-platform-reconcile",
                    createNamespace: true,
                    operatorNamespace: "pulumi-kubernetes-operator",
                    environment: {},
                    serviceAccountName: "cluster-platform-reconcile",
                },
            },
        });
    });

    test("GIVEN a config with 10 different mistakes WHEN validated THEN all 10 are reported at once, each naming path, value and rule", () => {
        const raw = {
            cluster: { name: "Prod_East", platform: "aws" },
            certificates: { mode: "cert-manager", renewBeforeDays: 900 },
            caInjection: [
                { kind: "ConfigMap", name: "bundle" },
                { kind: "Secret", name: "x" },
            ],
            subscriptions: { enabled: true, webhook: { replicas: 1 } },
            operators: [
                { name: "etcd", csv: "etcd.yaml", namespace: "etcd" },
                { name: "etcd", csv: "etcd2.yaml", namespace: "etcd" },
            ],
            aws: { enabled: true, region: "us-east-1", userTags: { "kubernetes.io/x": "a" } },
            webhookImage: { output: "tarball" },
        };
        expect(problemLines(raw)).toEqual([
            'cluster-platform:aws.userTags["kubernetes.io/x"]: key is in the kubernetes.io namespace, which the platform reserves',
            'cluster-platform:caInjection[0].namespace: is required: ConfigMap "bundle" is namespaced',
            'cluster-platform:caInjection[1].kind: "Secret" is not one of "APIService", "ConfigMap", "CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"',
            'cluster-platform:certificates.issuer: is required when mode is "cert-manager"',
            "cluster-platform:certificates.renewBeforeDays: 900 must be less than certValidityDays (730)",
            "cluster-platform:cluster.name: \"Prod_East\" must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit",
            'cluster-platform:cluster.platform: "aws" is not one of "openshift", "kubernetes"',
            'cluster-platform:operators[1]: duplicate operator name "etcd" (already at index 0)',
            'cluster-platform:subscriptions.webhook.replicas: 1 is too few: failurePolicy "Fail" needs at least 2 replicas so one pod\'s restart cannot block every pod creation',
            'cluster-platform:webhookImage.output: "tarball" is not one of "registry", "oci-layout"',
        ]);
    });

    test.each([
        ["a missing cluster", {}, ["cluster-platform:cluster: is required (expected object)"]],
        [
            "an unknown top-level key",
            { ...base(), operator: [] },
            [
                "cluster-platform:operator: unknown key (known keys: cluster, certificates, caInjection, subscriptions, olm, operators, aws, webhookImage, reconcile)",
            ],
        ],
        ["an unknown nested key", { ...base(), olm: { disableCopiedCSVs: true } }, ["cluster-platform:olm.disableCopiedCSVs: unknown key"]],
        ["a string where an object belongs", { ...base(), aws: "yes" }, ['cluster-platform:aws: expected object, got string "yes"']],
        [
            "service-ca on plain Kubernetes",
            { cluster: { name: "k", platform: "kubernetes", kubeContext: "test" }, certificates: { mode: "service-ca" } },
            [
                'cluster-platform:certificates.mode: "service-ca" needs OpenShift\'s service-ca operator, but cluster.platform is "kubernetes"',
            ],
        ],
        [
            "an issuer outside cert-manager mode",
            { ...base(), certificates: { issuer: { kind: "ClusterIssuer", name: "ca" } } },
            ['cluster-platform:certificates.issuer: is only used when mode is "cert-manager" (mode is "self-signed")'],
        ],
        [
            "a serving cert outliving its CA",
            { ...base(), certificates: { caValidityDays: 365, certValidityDays: 400 } },
            [
                "cluster-platform:certificates.certValidityDays: 400 must not exceed caValidityDays (365): a serving certificate must not outlive its CA",
            ],
        ],
        [
            "a cluster-scoped injection target with a namespace",
            { ...base(), caInjection: [{ kind: "APIService", name: "v1.metrics.k8s.io", namespace: "x" }] },
            ['cluster-platform:caInjection[0].namespace: must not be set: APIService "v1.metrics.k8s.io" is cluster-scoped'],
        ],
        [
            "a duplicate injection target",
            {
                ...base(),
                caInjection: [
                    { kind: "APIService", name: "a" },
                    { kind: "APIService", name: "a" },
                ],
            },
            ['cluster-platform:caInjection[1]: duplicate caInjection entry "APIService//a" (already at index 0)'],
        ],
        [
            "aws enabled without a region",
            { ...base(), aws: { enabled: true } },
            ["cluster-platform:aws.region: is required when aws.enabled is true"],
        ],
        [
            "a malformed region",
            { ...base(), aws: { region: "us east" } },
            ['cluster-platform:aws.region: "us east" is not an AWS region name such as "us-east-1"'],
        ],
        [
            "a webhook timeout above the platform's limit of 30s",
            { ...base(), subscriptions: { webhook: { timeoutSeconds: 31 } } },
            ["cluster-platform:subscriptions.webhook.timeoutSeconds: 31 must be at most 30"],
        ],
        [
            "a Bundle reaching into another namespace",
            {
                ...base(),
                subscriptions: { bundles: [{ name: "b", namespace: "team-a", entitlements: [{ name: "e", namespace: "team-b" }] }] },
            },
            [
                'cluster-platform:subscriptions.bundles[0].entitlements[0].namespace: Bundle "team-a/b": "team-b" differs from the bundle\'s namespace; a Bundle may only reference objects in its own namespace (use a ClusterBundle to share across namespaces)',
            ],
        ],
        [
            "AllNamespaces without rbacNamespaces when promotion is off",
            {
                ...base(),
                olm: { disableAllNamespacePermissionPromotion: true },
                operators: [{ name: "op", csv: "op.yaml", namespace: "ops" }],
            },
            [
                'cluster-platform:operators[0].rbacNamespaces: operator "op": is required (a non-empty list) when targetNamespaces is [] (AllNamespaces) and olm.disableAllNamespacePermissionPromotion is true: it names the namespaces that get the operator\'s Roles',
            ],
        ],
    ])("GIVEN %s WHEN validated THEN the problem names it", (_case, raw, expected) => {
        expect(problemLines(raw as Record<string, unknown>)).toEqual(expected);
    });

    test("GIVEN rbacNamespaces that do not apply WHEN validated THEN a warning says they are ignored", () => {
        const result = validateStackConfig({
            ...base(),
            operators: [{ name: "op", csv: "op.yaml", namespace: "ops", targetNamespaces: ["a"], rbacNamespaces: ["b"] }],
        });
        expect(result.ok).toBe(true);
        expect(result.warnings).toEqual([
            'cluster-platform:operators[0].rbacNamespaces: ignored for operator "op": it applies only to AllNamespaces installs with olm.disableAllNamespacePermissionPromotion',
        ]);
    });

    test("GIVEN any subset of independent mistakes WHEN validated THEN exactly their paths are reported, in one report", () => {
        // Each mistake touches its own key; a report must list all of them, however they combine.
        type Raw = { cluster: Record<string, unknown>; [section: string]: unknown };
        const mistakes: Record<string, [string, (raw: Raw) => void]> = {
            name: ["cluster.name", (r) => (r.cluster.name = "UPPER")],
            platform: ["cluster.platform", (r) => (r.cluster.platform = "eks")],
            mode: ["certificates.mode", (r) => (r.certificates = { ...(r.certificates as object), mode: "vault" })],
            validity: ["certificates.caValidityDays", (r) => (r.certificates = { ...(r.certificates as object), caValidityDays: 0 })],
            kind: ["caInjection[0].kind", (r) => (r.caInjection = [{ kind: "Pod", name: "p" }])],
            replicas: ["subscriptions.webhook.replicas", (r) => (r.subscriptions = { webhook: { replicas: 0 } })],
            toggle: ["olm.manageOLMConfig", (r) => (r.olm = { manageOLMConfig: "yes" })],
            operator: ["operators[0].namespace", (r) => (r.operators = [{ name: "a", csv: "a.yaml", namespace: "Bad Ns" }])],
            tag: ['aws.userTags["x.openshift.io/y"]', (r) => (r.aws = { userTags: { "x.openshift.io/y": "v" } })],
            image: ["webhookImage.output", (r) => (r.webhookImage = { output: "docker" })],
        };
        fc.assert(
            fc.property(fc.subarray(Object.keys(mistakes), { minLength: 1 }), (chosen) => {
                const raw: Raw = base();
                chosen.forEach((key) => mistakes[key][1](raw));
                const result = validateStackConfig(raw);
                expect(result.ok).toBe(false);
                const paths = result.ok ? [] : [...new Set(result.problems.map((p) => p.path))].sort();
                expect(paths).toEqual(chosen.map((key) => mistakes[key][0]).sort());
            }),
        );
    });

    test("GIVEN problems WHEN formatted as a report THEN the header counts them and lines are sorted by path", () => {
        expect(
            formatReport([
                { path: "b", message: "second" },
                { path: "a", message: "first" },
            ]),
        ).toBe("invalid configuration: 2 problems\n  - cluster-platform:a: first\n  - cluster-platform:b: second");
    });
});
