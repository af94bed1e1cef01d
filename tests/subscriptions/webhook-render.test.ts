/**
 * The subscription webhook's deployment as the whole program renders it: the webhook
 * configuration, the server's access, the CA ConfigMap in each certificates mode, and (with
 * `up` semantics and certificates signed for real) that ConfigMap and the webhook's caBundle
 * holding the same CA, which signed the serving certificate.
 */
import { X509Certificate } from "node:crypto";
import { RenderResult } from "../../scripts/render/render";
import { ResourceCall } from "../../scripts/render/mocks";
import { Capture } from "../helpers/capture";
import { manifestNamed, manifestsNamed, renderConfig, renderFile, resourceNamed } from "../helpers/render";
import { tlsComputed } from "../helpers/tls-signer";

const NAMESPACE = "subscription-injection";
const MUTATING = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration";
const CONFIG_MAP = "kubernetes:core/v1:ConfigMap";
const CA_CONFIG_MAP = `${NAMESPACE}/subscription-injection-webhook-ca`;

const subscriptions = (platform: string, certificates: Record<string, unknown> = { mode: "self-signed" }) => ({
    cluster: { name: "prod", platform, kubeContext: "prod" },
    certificates,
    subscriptions: {
        enabled: true,
        webhook: {
            replicas: 2,
            failurePolicy: "Ignore",
            timeoutSeconds: 5,
            image: "quay.io/acme/subscription-webhook@sha256:" + "0".repeat(64),
        },
    },
});

describe("the subscription webhook in the rendered openshift-aws example", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderFile("examples/openshift-aws.yaml");
    });

    test("GIVEN the example WHEN rendered THEN one MutatingWebhookConfiguration calls the webhook Service for pod CREATE and ephemeral containers, never in its own or platform namespaces", () => {
        const configuration = manifestNamed(result, "MutatingWebhookConfiguration", "subscription-injection-webhook") as {
            webhooks: Record<string, unknown>[];
        };
        expect(configuration.webhooks).toHaveLength(1);
        const { namespaceSelector, ...webhook } = configuration.webhooks[0] as {
            namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
        };
        expect(webhook).toEqual({
            admissionReviewVersions: ["v1"],
            clientConfig: {
                caBundle: "[unknown]",
                service: { name: "subscription-injection-webhook-service", namespace: NAMESPACE, path: "/mutate-pods", port: 443 },
            },
            failurePolicy: "Fail",
            matchPolicy: "Equivalent",
            name: "inject.subscription.openshift.io",
            reinvocationPolicy: "IfNeeded",
            rules: [
                { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: "Namespaced" },
                {
                    apiGroups: [""],
                    apiVersions: ["v1"],
                    operations: ["UPDATE"],
                    resources: ["pods/ephemeralcontainers"],
                    scope: "Namespaced",
                },
            ],
            sideEffects: "None",
            timeoutSeconds: 10,
        });
        expect(namespaceSelector.matchExpressions.map((e) => [e.key, e.operator])).toEqual([
            ["kubernetes.io/metadata.name", "NotIn"],
            ["openshift.io/cluster-monitoring", "NotIn"],
            ["openshift.io/run-level", "NotIn"],
        ]);
        expect(namespaceSelector.matchExpressions[0].values).toEqual(
            expect.arrayContaining([NAMESPACE, "kube-system", "openshift-kube-apiserver", "openshift-etcd"]),
        );
        expect(namespaceSelector.matchExpressions.slice(1).map((e) => e.values)).toEqual([["true"], ["0", "1"]]);
    });

    test("GIVEN the example WHEN rendered THEN the webhook's ClusterRole reads bundles, creates SubjectAccessReviews, and lists Secrets only by the teams' conventional name", () => {
        const rules = manifestNamed(result, "ClusterRole", "subscription-injection-webhook").rules as { resources: string[] }[];
        expect(rules).toEqual([
            { apiGroups: ["subscription.openshift.io"], resources: ["bundles", "clusterbundles"], verbs: ["list", "watch"] },
            { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
            { apiGroups: [""], resources: ["secrets"], resourceNames: ["etc-pki-entitlement"], verbs: ["get", "list", "watch"] },
        ]);
        expect(manifestNamed(result, "ClusterRoleBinding", "subscription-injection-webhook")).toMatchObject({
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "subscription-injection-webhook" },
            subjects: [{ kind: "ServiceAccount", name: "subscription-injection-webhook", namespace: NAMESPACE }],
        });
    });

    test("GIVEN a ClusterBundle sharing openshift-config's Secret and ConfigMap and a Bundle in team-a WHEN rendered THEN the webhook lists only the source namespace (copies) and reads team-a's Secret by name; nothing in openshift-config", () => {
        type Namespaced = { metadata: { namespace: string }; rules?: unknown; roleRef?: unknown; subjects?: unknown };
        const roles = manifestsNamed(result, "Role", "subscription-injection-webhook-read") as Namespaced[];
        expect(roles.map((r) => [r.metadata.namespace, r.rules])).toEqual([
            ["subscription-sources", [{ apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["list", "watch"] }]],
            ["team-a", [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["etc-pki-entitlement"], verbs: ["get"] }]],
        ]);
        const deployment = manifestNamed(result, "Deployment", "subscription-injection-webhook") as {
            spec: { template: { spec: { containers: { env: unknown }[] } } };
        };
        expect(deployment.spec.template.spec.containers[0].env).toEqual([
            { name: "WEBHOOK_READ_NAMESPACES", value: "subscription-sources/secrets,subscription-sources/configmaps" },
            { name: "WEBHOOK_SOURCE_NAMESPACE", value: "subscription-sources" },
            { name: "MALLOC_MMAP_THRESHOLD_", value: "65536" },
        ]);
        const bindings = manifestsNamed(result, "RoleBinding", "subscription-injection-webhook-read") as Namespaced[];
        expect(bindings.map((b) => [b.metadata.namespace, b.roleRef, b.subjects])).toEqual(
            ["subscription-sources", "team-a"].map((namespace) => [
                namespace,
                { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "subscription-injection-webhook-read" },
                [{ kind: "ServiceAccount", name: "subscription-injection-webhook", namespace: NAMESPACE }],
            ]),
        );
    });

    test("GIVEN the example WHEN rendered THEN the source sync reads each original by name, writes each copy by name, gets the shares by name, and runs the webhook's image as source-sync", () => {
        type Rbac = { metadata: { namespace?: string }; rules: unknown };
        const roles = manifestsNamed(result, "Role", "subscription-source-sync") as Rbac[];
        expect(roles.map((r) => [r.metadata.namespace, r.rules])).toEqual([
            [
                "openshift-config",
                [
                    { apiGroups: [""], resources: ["secrets"], resourceNames: ["etc-pki-entitlement"], verbs: ["get", "list", "watch"] },
                    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["satellite-repos"], verbs: ["get", "list", "watch"] },
                ],
            ],
            [
                "subscription-sources",
                [
                    {
                        apiGroups: [""],
                        resources: ["secrets"],
                        resourceNames: ["openshift-config.etc-pki-entitlement"],
                        verbs: ["get", "create", "patch", "delete"],
                    },
                    {
                        apiGroups: [""],
                        resources: ["configmaps"],
                        resourceNames: ["openshift-config.satellite-repos"],
                        verbs: ["get", "create", "patch", "delete"],
                    },
                ],
            ],
        ]);
        expect((manifestNamed(result, "ClusterRole", "subscription-source-sync") as Rbac).rules).toEqual([
            {
                apiGroups: ["sharedresource.openshift.io"],
                resources: ["sharedsecrets"],
                resourceNames: ["cluster-entitlement-etc-pki-entitlement-d0e25df8"],
                verbs: ["get"],
            },
            {
                apiGroups: ["sharedresource.openshift.io"],
                resources: ["sharedconfigmaps"],
                resourceNames: ["cluster-yum-repo-satellite-repos-14d80ad7"],
                verbs: ["get"],
            },
        ]);
        const sync = manifestNamed(result, "Deployment", "subscription-source-sync") as {
            spec: {
                replicas: number;
                strategy: unknown;
                template: { spec: { serviceAccountName: string; containers: { image: string; env: { name: string; value: string }[] }[] } };
            };
        };
        expect([sync.spec.replicas, sync.spec.strategy, sync.spec.template.spec.serviceAccountName]).toEqual([
            1,
            { type: "Recreate" },
            "subscription-source-sync",
        ]);
        expect(Object.fromEntries(sync.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]))).toEqual({
            SUBSCRIPTION_SERVER: "source-sync",
            SOURCE_SYNC_NAMESPACE: "subscription-sources",
            SOURCE_SYNC_OBJECTS: JSON.stringify([
                {
                    kind: "ConfigMap",
                    namespace: "openshift-config",
                    name: "satellite-repos",
                    shares: ["cluster-yum-repo-satellite-repos-14d80ad7"],
                },
                {
                    kind: "Secret",
                    namespace: "openshift-config",
                    name: "etc-pki-entitlement",
                    shares: ["cluster-entitlement-etc-pki-entitlement-d0e25df8"],
                },
            ]),
            SOURCE_SYNC_PORT: "8080",
        });
        expect(manifestNamed(result, "Namespace", "subscription-sources")).toMatchObject({
            metadata: { labels: { "pod-security.kubernetes.io/enforce": "restricted", "cluster-platform.io/capability": "subscriptions" } },
        });
    });

    test("GIVEN the example WHEN rendered THEN the Deployment runs the image the stack builds (unknown before it is built) with 3 replicas, mounts the serving certificate and has a PodDisruptionBudget", () => {
        const deployment = manifestNamed(result, "Deployment", "subscription-injection-webhook") as {
            spec: {
                replicas: number;
                template: {
                    spec: { serviceAccountName: string; containers: { image: string; volumeMounts: unknown[] }[]; volumes: unknown[] };
                };
            };
        };
        expect(deployment.spec.replicas).toBe(3);
        expect(deployment.spec.template.spec.serviceAccountName).toBe("subscription-injection-webhook");
        expect(deployment.spec.template.spec.containers[0].image).toBe("[unknown]");
        expect(deployment.spec.template.spec.containers[0].volumeMounts).toEqual([
            { mountPath: "/tmp", name: "tmp" },
            { mountPath: "/apiserver.local.config/certificates", name: "apiservice-cert" },
            { mountPath: "/tmp/k8s-webhook-server/serving-certs", name: "webhook-cert" },
        ]);
        expect(deployment.spec.template.spec.volumes).toContainEqual({
            name: "apiservice-cert",
            secret: {
                secretName: "subscription-injection-webhook-tls",
                items: [
                    { key: "tls.crt", path: "apiserver.crt" },
                    { key: "tls.key", path: "apiserver.key" },
                ],
            },
        });
        expect(deployment.spec.template.spec.volumes).toContainEqual({
            name: "webhook-cert",
            secret: {
                secretName: "subscription-injection-webhook-tls",
                items: [
                    { key: "tls.crt", path: "tls.crt" },
                    { key: "tls.key", path: "tls.key" },
                ],
            },
        });
        expect(manifestNamed(result, "PodDisruptionBudget", "subscription-injection-webhook").spec).toEqual({
            maxUnavailable: 1,
            selector: {
                matchLabels: {
                    "app.kubernetes.io/component": "admission-webhook",
                    "app.kubernetes.io/name": "subscription-injection-webhook",
                },
            },
            unhealthyPodEvictionPolicy: "AlwaysAllow",
        });
    });

    test("GIVEN the example WHEN rendered THEN the webhook configuration waits for the Deployment, and everything in the namespace for the namespace and the bundle CRDs", () => {
        expect(resourceNamed(result, MUTATING, "subscription-injection-webhook-mutating").options.dependsOn).toEqual(
            expect.arrayContaining([
                `${NAMESPACE}/subscription-injection-webhook`,
                NAMESPACE,
                "bundles.subscription.openshift.io",
                "clusterbundles.subscription.openshift.io",
            ]),
        );
        expect(
            resourceNamed(result, "kubernetes:apps/v1:Deployment", `${NAMESPACE}/subscription-injection-webhook`).options.dependsOn,
        ).toEqual(
            expect.arrayContaining([
                "subscription-injection-webhook-serving-secret",
                NAMESPACE,
                "clusterbundles.subscription.openshift.io",
            ]),
        );
        expect(resourceNamed(result, "kubernetes:core/v1:Service", "subscription-injection-webhook-service").options.dependsOn).toEqual(
            expect.arrayContaining([NAMESPACE]),
        );
    });

    test("GIVEN self-signed mode WHEN previewed THEN the CA ConfigMap and the webhook's caBundle both come from the stack's CA (unknown until it is made)", () => {
        expect(manifestNamed(result, "ConfigMap", "subscription-injection-webhook-ca").data).toEqual({ "service-ca.crt": "[unknown]" });
        expect(resourceNamed(result, CONFIG_MAP, CA_CONFIG_MAP).options.ignoreChanges).toEqual([]);
    });
});

describe("the subscription webhook per platform and certificates mode", () => {
    test("GIVEN service-ca mode WHEN rendered THEN the ConfigMap and the webhook ask the service-ca operator for the same bundle and never own it", async () => {
        const result = await renderConfig(subscriptions("openshift", { mode: "service-ca" }));
        expect(result.errors).toEqual([]);
        expect(manifestNamed(result, "ConfigMap", "subscription-injection-webhook-ca")).toEqual({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
                annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
                labels: {
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "subscriptions",
                },
                name: "subscription-injection-webhook-ca",
                namespace: NAMESPACE,
            },
        });
        expect(resourceNamed(result, CONFIG_MAP, CA_CONFIG_MAP).options.ignoreChanges).toEqual(['data["service-ca.crt"]']);
        const configuration = manifestNamed(result, "MutatingWebhookConfiguration", "subscription-injection-webhook") as {
            metadata: { annotations: unknown };
            webhooks: { clientConfig: Record<string, unknown> }[];
        };
        expect(configuration.metadata.annotations).toEqual({ "service.beta.openshift.io/inject-cabundle": "true" });
        expect(configuration.webhooks[0].clientConfig.caBundle).toBeUndefined();
    });

    test("GIVEN cert-manager mode WHEN rendered THEN no CA ConfigMap is declared and one warning says where the CA is", async () => {
        const result = await renderConfig(
            subscriptions("kubernetes", { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "internal-ca" } }),
        );
        expect(result.errors).toEqual([]);
        expect(result.manifests.filter((m) => m.object.kind === "ConfigMap")).toEqual([]);
        expect(result.warnings).toContain(
            "subscription webhook: no CA ConfigMap subscription-injection/subscription-injection-webhook-ca in cert-manager mode (cert-manager's cainjector does not inject ConfigMaps); the CA is the ca.crt key of Secret subscription-injection/subscription-injection-webhook-tls, which trust-manager can distribute",
        );
    });

    test("GIVEN plain Kubernetes and configured settings WHEN rendered THEN the webhook excludes only its own, the control plane's and the driver's namespaces, with the configured policy, timeout, replicas and image", async () => {
        const result = await renderConfig(subscriptions("kubernetes"));
        expect(result.errors).toEqual([]);
        const configuration = manifestNamed(result, "MutatingWebhookConfiguration", "subscription-injection-webhook") as {
            webhooks: Record<string, unknown>[];
        };
        expect(configuration.webhooks[0]).toMatchObject({
            failurePolicy: "Ignore",
            timeoutSeconds: 5,
            namespaceSelector: {
                matchExpressions: [
                    {
                        key: "kubernetes.io/metadata.name",
                        operator: "NotIn",
                        values: ["kube-node-lease", "kube-public", "kube-system", "openshift-builds", NAMESPACE],
                    },
                ],
            },
        });
        const deployment = manifestNamed(result, "Deployment", "subscription-injection-webhook") as {
            spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
        };
        expect(deployment.spec.replicas).toBe(2);
        expect(deployment.spec.template.spec.containers[0].image).toBe("quay.io/acme/subscription-webhook@sha256:" + "0".repeat(64));
    });

    test("GIVEN cert-manager mode, a Tech Preview driver and excludedNamespaces WHEN rendered THEN the webhook never sees the issuer's, the driver's or the listed namespaces", async () => {
        const config = subscriptions("kubernetes", { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "internal-ca" } });
        const result = await renderConfig({
            ...config,
            subscriptions: {
                ...config.subscriptions,
                webhook: { ...config.subscriptions.webhook, excludedNamespaces: ["vault", "kyverno"] },
                sharedResourceDriver: {
                    serviceAccount: { name: "csi-driver-shared-resource-plugin", namespace: "openshift-cluster-csi-drivers" },
                },
            },
        });
        expect(result.errors).toEqual([]);
        const configuration = manifestNamed(result, "MutatingWebhookConfiguration", "subscription-injection-webhook") as {
            webhooks: { namespaceSelector: { matchExpressions: { values: string[] }[] } }[];
        };
        expect(configuration.webhooks[0].namespaceSelector.matchExpressions[0].values).toEqual([
            "cert-manager",
            "cert-manager-operator",
            "kube-node-lease",
            "kube-public",
            "kube-system",
            "kyverno",
            "openshift-cluster-csi-drivers",
            NAMESPACE,
            "vault",
        ]);
    });

    test("GIVEN readNamespaces WHEN rendered THEN the webhook may list both kinds there too", async () => {
        const config = subscriptions("kubernetes");
        const result = await renderConfig({
            ...config,
            subscriptions: { ...config.subscriptions, webhook: { ...config.subscriptions.webhook, readNamespaces: ["team-b"] } },
        });
        expect(result.errors).toEqual([]);
        expect(
            manifestsNamed(result, "Role", "subscription-injection-webhook-read").map((r) => [
                (r.metadata as { namespace: string }).namespace,
                r.rules,
            ]),
        ).toEqual([["team-b", [{ apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["list", "watch"] }]]]);
    });

    test("GIVEN self-signed mode with up semantics WHEN certificates are signed for real THEN the CA ConfigMap holds exactly the webhook's caBundle, which signed the serving certificate, and no share or ClusterRole is owned by the bundle (running pods outlive it)", async () => {
        const capture = new Capture();
        const clusterBundle = "kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle";
        const result = await renderConfig(
            {
                ...subscriptions("openshift"),
                subscriptions: {
                    ...subscriptions("openshift").subscriptions,
                    clusterBundles: [{ name: "cluster", entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }] }],
                },
            },
            {
                preview: false,
                computed: {
                    ...tlsComputed({ now: new Date("2026-01-01T00:00:00Z") }),
                    [clusterBundle]: (call: ResourceCall) => ({
                        metadata: { ...(call.inputs.metadata as object), uid: "0b5c3e1e-uid-of-cluster" },
                    }),
                    ...capture.producers(
                        CONFIG_MAP,
                        MUTATING,
                        "kubernetes:core/v1:Secret",
                        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
                        "kubernetes:sharedresource.openshift.io/v1alpha1:SharedSecret",
                    ),
                },
            },
        );
        expect(result.errors).toEqual([]);
        const configMapPem = (capture.get(CA_CONFIG_MAP).data as Record<string, string>)["service-ca.crt"];
        const webhooks = capture.get("subscription-injection-webhook-mutating").webhooks as { clientConfig: { caBundle: string } }[];
        expect(Buffer.from(webhooks[0].clientConfig.caBundle, "base64").toString("utf8")).toBe(configMapPem);
        const serving = Buffer.from(
            (capture.get("subscription-injection-webhook-serving-secret").data as Record<string, string>)["tls.crt"],
            "base64",
        ).toString("utf8");
        const ca = new X509Certificate(configMapPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/)![0]);
        expect(new X509Certificate(serving).checkIssued(ca)).toBe(true);
        expect((capture.get("cluster-subscription-bundle").metadata as { ownerReferences?: unknown }).ownerReferences).toBeUndefined();
        expect(
            (capture.get("share-cluster-entitlement-etc-pki-entitlement-d0e25df8").metadata as { ownerReferences?: unknown })
                .ownerReferences,
        ).toBeUndefined();
    });
});
