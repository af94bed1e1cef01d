/**
 * The three certificate modes, rendered through a consumer (a webhook backend, its
 * AdmissionWebhook and declared objects asking for the bundle) as `npm run render` shows them.
 */
import * as path from "node:path";
import { RenderResult } from "../../scripts/render/render";
import { renderConfig, resourceNamed, resourcesOfType } from "../helpers/render";

const program = path.join(__dirname, "..", "fixtures", "certificates", "webhook-program");
const CLUSTER_ISSUER = { kind: "ClusterIssuer", name: "platform-ca" };
const TARGET_LABEL = "webhooks.cluster-platform.io/policy.policy-webhook";
const WEBHOOK_LABELS = {
    "app.kubernetes.io/managed-by": "cluster-platform",
    "app.kubernetes.io/part-of": "cluster-platform",
    "cluster-platform.io/capability": "admission-webhook",
};
const CERT_LABELS = { ...WEBHOOK_LABELS, "cluster-platform.io/capability": "certificates" };

function render(mode: string, platform = "kubernetes", cluster: Record<string, unknown> = {}): Promise<RenderResult> {
    return renderConfig(
        {
            cluster: { name: "test", platform, ...(cluster.renderYamlToDirectory ? cluster : { kubeContext: "test", ...cluster }) },
            certificates: { mode, ...(mode === "cert-manager" ? { issuer: CLUSTER_ISSUER } : {}) },
        },
        { program },
    );
}

/** Every `caBundle` key anywhere in the rendered Kubernetes objects, as paths. */
function caBundlePaths(result: RenderResult): string[] {
    const found: string[] = [];
    const walk = (value: unknown, at: string): void => {
        if (Array.isArray(value)) {
            value.forEach((v, i) => walk(v, `${at}[${i}]`));
        } else if (value !== null && typeof value === "object") {
            for (const [k, v] of Object.entries(value)) {
                if (k === "caBundle" || k === "service-ca.crt") {
                    found.push(`${at}.${k}`);
                }
                walk(v, `${at}.${k}`);
            }
        }
    };
    result.manifests.forEach((m) => walk(m.object, m.file));
    return found.sort();
}

const selector = {
    matchLabels: { [TARGET_LABEL]: "true" },
    matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "policy"] }],
};

function validatingWebhooks(caBundle?: string): unknown[] {
    const clientConfig = (p: string) => ({
        ...(caBundle ? { caBundle } : {}),
        service: { name: "policy-webhook-service", namespace: "policy", path: p, port: 443 },
    });
    return [
        {
            admissionReviewVersions: ["v1", "v1beta1"],
            clientConfig: clientConfig("/validate-pods"),
            failurePolicy: "Ignore",
            matchPolicy: "Equivalent",
            name: "vpods.policy.example.io",
            namespaceSelector: selector,
            objectSelector: { matchLabels: { "policy.example.io/enforce": "true" } },
            rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["pods"] }],
            sideEffects: "NoneOnDryRun",
            timeoutSeconds: 5,
        },
        {
            admissionReviewVersions: ["v1"],
            clientConfig: clientConfig("/validate-deployments"),
            name: "vdeployments.policy.example.io",
            namespaceSelector: selector,
            rules: [{ apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"], scope: "Namespaced" }],
            sideEffects: "None",
        },
    ];
}

const VALIDATING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration";
const MUTATING = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration";
const SERVICE = "kubernetes:core/v1:Service";

describe("mode self-signed", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await render("self-signed");
    });

    test("GIVEN a webhook backend WHEN rendered THEN the stack's CA, a serving key, request and certificate renew at the configured window", () => {
        expect(result.errors).toEqual([]);
        const ca = resourceNamed(result, "tls:index/selfSignedCert:SelfSignedCert", "certificates-ca");
        expect(ca.inputs).toEqual({
            allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
            earlyRenewalHours: 720,
            isCaCertificate: true,
            privateKeyPem: "[secret]",
            setAuthorityKeyId: true,
            setSubjectKeyId: true,
            subject: { commonName: "cluster-platform CA (test)", organization: "cluster-platform" },
            validityPeriodHours: 18960,
        });
        expect(resourceNamed(result, "tls:index/privateKey:PrivateKey", "certificates-ca-key").inputs).toEqual({
            algorithm: "ECDSA",
            ecdsaCurve: "P256",
        });
        expect(resourceNamed(result, "tls:index/certRequest:CertRequest", "policy-webhook-serving-csr").inputs).toEqual({
            dnsNames: [
                "policy-webhook-service.policy",
                "policy-webhook-service.policy.svc",
                "policy-webhook-service.policy.svc.cluster.local",
            ],
            privateKeyPem: "[secret]",
            subject: { commonName: "policy-webhook-service.policy.svc", organization: "cluster-platform" },
        });
        expect(resourceNamed(result, "tls:index/locallySignedCert:LocallySignedCert", "policy-webhook-serving-cert").inputs).toEqual({
            allowedUses: ["digital_signature", "server_auth"],
            caCertPem: "[unknown]",
            caPrivateKeyPem: "[secret]",
            certRequestPem: "[unknown]",
            earlyRenewalHours: 720,
            setSubjectKeyId: true,
            validityPeriodHours: 17520,
        });
    });

    test("GIVEN the CA WHEN rendered THEN a rotation clock with the CA's validity and window sits beside it, with a key of its own", () => {
        expect(resourceNamed(result, "tls:index/selfSignedCert:SelfSignedCert", "certificates-ca-rotation-clock").inputs).toEqual({
            allowedUses: ["digital_signature"],
            earlyRenewalHours: 720,
            privateKeyPem: "[secret]",
            subject: { commonName: "cluster-platform CA rotation clock (test)", organization: "cluster-platform" },
            validityPeriodHours: 18960,
        });
        expect(result.resources.filter((r) => r.parent === "certificates-ca").map((r) => r.name)).toEqual([
            "certificates-ca-rotation-clock-key",
            "certificates-ca-rotation-clock",
            "certificates-ca-key",
            "certificates-ca",
        ]);
    });

    test("GIVEN a serving certificate WHEN rendered THEN a kubernetes.io/tls Secret holds it, all of its data secret", () => {
        const secret = resourceNamed(result, "kubernetes:core/v1:Secret", "policy-webhook-serving-secret");
        expect(secret.inputs).toEqual({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { labels: CERT_LABELS, name: "policy-webhook-cert", namespace: "policy" },
            type: "kubernetes.io/tls",
            data: "[secret]",
        });
        expect(secret.options.additionalSecretOutputs).toEqual(["data", "stringData"]);
        expect(secret.parent).toBe("consumer");
    });

    test("GIVEN the webhook configurations WHEN rendered THEN the stack writes every caBundle and ignores no change", () => {
        const validating = resourceNamed(result, VALIDATING, "policy-webhook-validating");
        expect(validating.inputs).toEqual({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: { labels: WEBHOOK_LABELS, name: "policy.policy-webhook" },
            webhooks: validatingWebhooks("[unknown]"),
        });
        expect(validating.options.ignoreChanges).toEqual([]);
        expect(validating.options.dependsOn).toEqual([
            "policy-webhook",
            "policy-webhook-serving-secret",
            "policy-webhook-target-team-a",
            "policy-webhook-target-team-b",
        ]);
        expect(resourceNamed(result, MUTATING, "policy-webhook-mutating").inputs.metadata).toEqual({
            labels: WEBHOOK_LABELS,
            name: "policy.policy-webhook",
        });
    });

    test("GIVEN declared objects asking for the bundle WHEN rendered THEN each honoured request gets it and loses the request annotation", () => {
        expect(caBundlePaths(result)).toEqual([
            "APIService_apiregistration.k8s.io_cluster_v1.policy.example.io.yaml.spec.caBundle",
            "ConfigMap_core_policy_trust-bundle.yaml.data.service-ca.crt",
            "CustomResourceDefinition_apiextensions.k8s.io_cluster_rules.policy.example.io.yaml.spec.conversion.webhook.clientConfig.caBundle",
            "MutatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy.policy-webhook.yaml.webhooks[0].clientConfig.caBundle",
            "ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy.policy-webhook.yaml.webhooks[0].clientConfig.caBundle",
            "ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy.policy-webhook.yaml.webhooks[1].clientConfig.caBundle",
        ]);
        expect(resourceNamed(result, "kubernetes:core/v1:ConfigMap", "trust-bundle").inputs).toEqual({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "trust-bundle", namespace: "policy" },
            data: { "service-ca.crt": "[unknown]" },
        });
        // The alpha annotation is no request on a CRD: left as it is, no bundle.
        expect(
            resourceNamed(result, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "audits.policy.example.io").inputs
                .metadata,
        ).toEqual({
            annotations: { "service.alpha.openshift.io/inject-cabundle": "true" },
            name: "audits.policy.example.io",
        });
        expect(result.warnings).toEqual([
            'CustomResourceDefinition "exemptions.policy.example.io": spec.conversion.strategy is "None", not "Webhook": there is no conversion webhook to trust; no CA bundle injected',
        ]);
    });

    // The hash's exact value, and that it changes exactly when the certificate does, are asserted on
    // real certificates update by update in self-signed.test.ts; a preview can only show it pending.
    test("GIVEN a preview WHEN the backend's pod template is rendered THEN its annotations wait on the certificate (unknown until it is issued) and its labels are known", () => {
        const deployment = resourceNamed(result, "kubernetes:apps/v1:Deployment", "policy-webhook");
        expect((deployment.inputs.spec as { template: { metadata: unknown } }).template.metadata).toEqual({
            annotations: "[unknown]",
            labels: { app: "policy-webhook" },
        });
        expect(deployment.options.dependsOn).toEqual(["policy-webhook-serving-secret"]);
    });
});

describe("mode service-ca", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await render("service-ca", "openshift");
    });

    test("GIVEN a webhook backend WHEN rendered THEN the Service asks service-ca for the serving Secret and the stack makes no certificate", () => {
        expect(result.errors).toEqual([]);
        expect(resourceNamed(result, SERVICE, "policy-webhook-service").inputs).toEqual({
            apiVersion: "v1",
            kind: "Service",
            metadata: {
                annotations: { "service.beta.openshift.io/serving-cert-secret-name": "policy-webhook-cert" },
                labels: WEBHOOK_LABELS,
                name: "policy-webhook-service",
                namespace: "policy",
            },
            spec: { ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: "https" }], selector: { app: "policy-webhook" } },
        });
        expect(result.resources.filter((r) => r.type.startsWith("tls:") || r.type === "kubernetes:core/v1:Secret")).toEqual([]);
    });

    test("GIVEN the webhook configurations WHEN rendered THEN they ask service-ca for the bundle, own no caBundle and ignore exactly those paths", () => {
        const validating = resourceNamed(result, VALIDATING, "policy-webhook-validating");
        expect(validating.inputs).toEqual({
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: {
                annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
                labels: WEBHOOK_LABELS,
                name: "policy.policy-webhook",
            },
            webhooks: validatingWebhooks(),
        });
        expect(validating.options.ignoreChanges).toEqual(["webhooks[*].clientConfig.caBundle"]);
        expect(resourceNamed(result, MUTATING, "policy-webhook-mutating").options.ignoreChanges).toEqual([
            "webhooks[*].clientConfig.caBundle",
        ]);
        expect(validating.options.dependsOn).toEqual(["policy-webhook", "policy-webhook-target-team-a", "policy-webhook-target-team-b"]);
    });

    test("GIVEN declared objects asking for the bundle WHEN rendered THEN they keep service-ca's request and ignore the injected fields; no caBundle anywhere", () => {
        expect(caBundlePaths(result)).toEqual([]);
        const apiService = resourceNamed(result, "kubernetes:apiregistration.k8s.io/v1:APIService", "v1.policy.example.io");
        expect(apiService.inputs.metadata).toEqual({
            annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
            name: "v1.policy.example.io",
        });
        expect(apiService.options.ignoreChanges).toEqual(["spec.caBundle"]);
        expect(
            resourceNamed(result, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "rules.policy.example.io").options
                .ignoreChanges,
        ).toEqual(["spec.conversion.webhook.clientConfig.caBundle"]);
        expect(resourceNamed(result, "kubernetes:core/v1:ConfigMap", "trust-bundle").options.ignoreChanges).toEqual([
            'data["service-ca.crt"]',
        ]);
    });
});

describe("mode cert-manager", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await render("cert-manager");
    });

    test("GIVEN a webhook backend WHEN rendered THEN a Certificate from the configured issuer covers the Service's three names", () => {
        expect(result.errors).toEqual([]);
        const certificate = resourceNamed(result, "kubernetes:cert-manager.io/v1:Certificate", "policy-webhook-certificate");
        expect(certificate.inputs).toEqual({
            apiVersion: "cert-manager.io/v1",
            kind: "Certificate",
            metadata: { labels: CERT_LABELS, name: "policy-webhook-cert", namespace: "policy" },
            spec: {
                commonName: "policy-webhook-service.policy.svc",
                dnsNames: [
                    "policy-webhook-service.policy",
                    "policy-webhook-service.policy.svc",
                    "policy-webhook-service.policy.svc.cluster.local",
                ],
                duration: "17520h",
                issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "platform-ca" },
                privateKey: { algorithm: "ECDSA", rotationPolicy: "Always", size: 256 },
                renewBefore: "720h",
                secretName: "policy-webhook-cert",
                secretTemplate: { labels: CERT_LABELS },
                usages: ["digital signature", "server auth"],
            },
        });
        expect(resourceNamed(result, "kubernetes:apps/v1:Deployment", "policy-webhook").options.dependsOn).toEqual([
            "policy-webhook-certificate",
        ]);
        expect(result.unvalidatedKinds).toEqual(["Certificate.cert-manager.io/v1"]);
    });

    test("GIVEN the configured issuer WHEN rendered THEN it is read first, so a misspelt issuer fails the preview", async () => {
        expect(result.reads).toEqual([
            {
                type: "kubernetes:cert-manager.io/v1:ClusterIssuer",
                name: "cert-manager-clusterissuer-platform-ca",
                id: "platform-ca",
                outcome: "unknown",
            },
        ]);
        expect(resourceNamed(result, "kubernetes:cert-manager.io/v1:Certificate", "policy-webhook-certificate").options.dependsOn).toEqual([
            "cert-manager-clusterissuer-platform-ca",
        ]);
        const missing = await renderConfig(
            {
                cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
                certificates: { mode: "cert-manager", issuer: { kind: "Issuer", name: "policy-ca" } },
            },
            { program, cluster: [] },
        );
        expect(missing.errors).toEqual([
            "kubernetes:cert-manager.io/v1:Issuer (cert-manager-issuer-policy-policy-ca): Preview failed: resource 'policy/policy-ca' does not exist",
        ]);
    });

    test("GIVEN the webhook configurations and declared objects WHEN rendered THEN they name the Certificate for cainjector and own no caBundle", () => {
        expect(caBundlePaths(result)).toEqual([]);
        const validating = resourceNamed(result, VALIDATING, "policy-webhook-validating");
        expect(validating.inputs.metadata).toEqual({
            annotations: { "cert-manager.io/inject-ca-from": "policy/policy-webhook-cert" },
            labels: WEBHOOK_LABELS,
            name: "policy.policy-webhook",
        });
        expect(validating.options.ignoreChanges).toEqual(["webhooks[*].clientConfig.caBundle"]);
        expect(validating.options.dependsOn).toEqual([
            "policy-webhook",
            "policy-webhook-certificate",
            "policy-webhook-target-team-a",
            "policy-webhook-target-team-b",
        ]);
        expect(
            resourceNamed(result, "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "rules.policy.example.io").inputs.metadata,
        ).toEqual({
            annotations: { "cert-manager.io/inject-ca-from": "policy/policy-webhook-cert" },
            name: "rules.policy.example.io",
        });
    });
});

describe("namespace labels", () => {
    test("GIVEN a live cluster WHEN rendered THEN each target namespace gets only the backend's label, by a server-side-apply patch", async () => {
        const result = await render("service-ca", "openshift");
        expect(resourcesOfType(result, "kubernetes:core/v1:NamespacePatch").map((r) => [r.name, r.inputs])).toEqual([
            [
                "policy-webhook-target-team-a",
                { apiVersion: "v1", kind: "Namespace", metadata: { labels: { [TARGET_LABEL]: "true" }, name: "team-a" } },
            ],
            [
                "policy-webhook-target-team-b",
                { apiVersion: "v1", kind: "Namespace", metadata: { labels: { [TARGET_LABEL]: "true" }, name: "team-b" } },
            ],
        ]);
    });

    test("GIVEN the provider renders YAML to a directory WHEN rendered THEN no namespace is patched, the selector names them, and one warning says so", async () => {
        const result = await render("service-ca", "openshift", { renderYamlToDirectory: "out/yaml" });
        expect(result.errors).toEqual([]);
        expect(resourcesOfType(result, "kubernetes:core/v1:NamespacePatch")).toEqual([]);
        const webhooks = resourceNamed(result, VALIDATING, "policy-webhook-validating").inputs.webhooks as { namespaceSelector: unknown }[];
        expect(webhooks.map((w) => w.namespaceSelector)).toEqual([
            {
                matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "team-b"] },
                    { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "policy"] },
                ],
            },
            {
                matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "team-b"] },
                    { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "policy"] },
                ],
            },
        ]);
        expect(result.warnings).toContain(
            "skipped labelling the target namespaces of webhook backend policy/policy-webhook: the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch; its namespaceSelector names them instead",
        );
    });
});

describe("certificate expiry in the delegated modes", () => {
    test("GIVEN service-ca and cert-manager WHEN rendered THEN certificateExpiry lists each serving certificate with who renews it and where its expiry is, and no trust state", async () => {
        const serviceCa = await render("service-ca", "openshift");
        expect(serviceCa.stackOutputs.certificateExpiry).toEqual([
            {
                name: "policy/policy-webhook-cert",
                kind: "serving",
                mode: "service-ca",
                renewedBy: "OpenShift service-ca operator (on its own)",
                expiryIn: "Secret policy/policy-webhook-cert annotation service.beta.openshift.io/expiry",
            },
        ]);
        expect(serviceCa.stackOutputs.certificateTrust).toBeUndefined();
        const certManager = await render("cert-manager");
        expect(certManager.stackOutputs.certificateExpiry).toEqual([
            {
                name: "policy/policy-webhook-cert",
                kind: "serving",
                mode: "cert-manager",
                renewedBy: "cert-manager (on its own, renewBefore from certificates.renewBeforeDays)",
                expiryIn: "Certificate policy/policy-webhook-cert status.notAfter and status.renewalTime",
                duration: "17520h",
                renewBefore: "720h",
            },
        ]);
    });
});
