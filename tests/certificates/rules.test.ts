import fc from "fast-check";
import { validateStackConfig } from "../../components/config";
import {
    effectiveCertificateSettings,
    INJECT_CABUNDLE_ALPHA,
    INJECT_CABUNDLE_BETA,
    INJECTABLE_KINDS,
    InjectableKind,
    requestsInjection,
} from "../../components/certificates/rules";
import { formatProblem } from "../../components/shared/problems";

/** Seed 001: alpha and beta for APIService and ConfigMap; beta only for the rest. */
const HONOURED: Record<InjectableKind, string[]> = {
    APIService: [INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA],
    ConfigMap: [INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA],
    CustomResourceDefinition: [INJECT_CABUNDLE_BETA],
    MutatingWebhookConfiguration: [INJECT_CABUNDLE_BETA],
    ValidatingWebhookConfiguration: [INJECT_CABUNDLE_BETA],
};

/** Every casing of "true". */
const anyCaseTrue = fc
    .array(fc.boolean(), { minLength: 4, maxLength: 4 })
    .map((upper) => [..."true"].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(""));

describe("seed 001's injection request annotations", () => {
    test('GIVEN any kind, annotation and casing of "true" WHEN checked THEN it is a request exactly when the kind honours that annotation', () => {
        fc.assert(
            fc.property(
                fc.constantFrom(...INJECTABLE_KINDS),
                fc.constantFrom(INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA),
                anyCaseTrue,
                (kind, key, value) => {
                    expect(requestsInjection(kind, { [key]: value })).toBe(HONOURED[kind].includes(key));
                },
            ),
        );
    });

    test('GIVEN a value other than "true" in any casing WHEN checked THEN it is no request', () => {
        fc.assert(
            fc.property(
                fc.constantFrom(...INJECTABLE_KINDS),
                fc.string().filter((v) => v.toLowerCase() !== "true"),
                (kind, value) => {
                    expect(requestsInjection(kind, { [INJECT_CABUNDLE_BETA]: value, [INJECT_CABUNDLE_ALPHA]: value })).toBe(false);
                },
            ),
        );
        expect(requestsInjection("ConfigMap", { [INJECT_CABUNDLE_BETA]: " true" })).toBe(false);
        expect(requestsInjection("ConfigMap", undefined)).toBe(false);
    });
});

describe("an operator's certificate override", () => {
    const stack = {
        mode: "cert-manager" as const,
        caValidityDays: 790,
        certValidityDays: 730,
        renewBeforeDays: 30,
        issuer: { kind: "ClusterIssuer" as const, name: "platform" },
    };

    test.each([
        ["no override", undefined, { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "platform" } }],
        [
            "another issuer",
            { issuer: { kind: "Issuer" as const, name: "team" } },
            { mode: "cert-manager", issuer: { kind: "Issuer", name: "team" } },
        ],
        ["another mode", { mode: "self-signed" as const }, { mode: "self-signed", issuer: undefined }],
    ])("GIVEN %s WHEN resolved THEN mode and issuer follow the override, validity the stack", (_case, override, expected) => {
        expect(effectiveCertificateSettings(stack, override)).toEqual({ ...stack, ...expected });
    });
});

describe("caInjection and certificates config rules", () => {
    const lines = (raw: Record<string, unknown>): string[] => {
        const result = validateStackConfig(raw);
        return result.ok ? [] : result.problems.map(formatProblem);
    };
    const certManager = { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "platform-ca" } };

    test.each([
        [
            "a ConfigMap in cert-manager mode",
            { certificates: certManager, caInjection: [{ kind: "ConfigMap", name: "bundle", namespace: "team-a" }] },
            [
                'cluster-platform:caInjection[0].kind: ConfigMap "team-a/bundle": cert-manager\'s cainjector does not inject ConfigMaps (certificates.mode is "cert-manager"); distribute the CA with trust-manager, or use mode self-signed or service-ca',
            ],
        ],
        [
            "an entry without its Certificate in cert-manager mode",
            { certificates: certManager, caInjection: [{ kind: "APIService", name: "v1.metrics.example.io" }] },
            [
                'cluster-platform:caInjection[0].certificate: APIService "v1.metrics.example.io": is required when certificates.mode is "cert-manager": the "<namespace>/<name>" of the Certificate whose CA cainjector injects',
            ],
        ],
        [
            "a Certificate outside cert-manager mode",
            { caInjection: [{ kind: "CustomResourceDefinition", name: "rules.example.io", certificate: "policy/webhook" }] },
            [
                'cluster-platform:caInjection[0].certificate: CustomResourceDefinition "rules.example.io": is only used when certificates.mode is "cert-manager" (mode is "self-signed")',
            ],
        ],
        [
            "a malformed Certificate reference",
            { certificates: certManager, caInjection: [{ kind: "APIService", name: "v1.metrics.example.io", certificate: "webhook" }] },
            [
                'cluster-platform:caInjection[0].certificate: "webhook" must be "<namespace>/<name>" (a DNS-1123 label, a slash, a DNS-1123 subdomain)',
            ],
        ],
        [
            "a caSource on a trust-bundle ConfigMap",
            {
                caInjection: [
                    {
                        kind: "ConfigMap",
                        name: "bundle",
                        namespace: "team-a",
                        caSource: { issue: { service: "team-a/api", secretName: "api-tls" } },
                    },
                ],
            },
            [
                'cluster-platform:caInjection[0].caSource: ConfigMap "team-a/bundle": a ConfigMap is a trust bundle with no backend: it receives the stack\'s CA, so caSource does not apply',
            ],
        ],
        [
            "a caSource in a delegated mode",
            {
                certificates: certManager,
                caInjection: [
                    {
                        kind: "APIService",
                        name: "v1.metrics.example.io",
                        certificate: "monitoring/metrics",
                        caSource: { configMap: { name: "monitoring/metrics-ca", key: "ca.crt" } },
                    },
                ],
            },
            [
                'cluster-platform:caInjection[0].caSource: APIService "v1.metrics.example.io": is only used when certificates.mode is "self-signed" (mode is "cert-manager": the injector knows the CA)',
            ],
        ],
        [
            "a caSource naming both sources",
            {
                caInjection: [
                    {
                        kind: "APIService",
                        name: "v1.metrics.example.io",
                        caSource: {
                            issue: { service: "monitoring/metrics", secretName: "metrics-tls" },
                            configMap: { name: "monitoring/metrics-ca", key: "ca.crt" },
                        },
                    },
                ],
            },
            ["cluster-platform:caInjection[0].caSource: must set exactly one of issue and configMap"],
        ],
        [
            "a caSource.issue Service that is not <namespace>/<name>",
            {
                caInjection: [
                    {
                        kind: "APIService",
                        name: "v1.metrics.example.io",
                        caSource: { issue: { service: "metrics", secretName: "metrics-tls" } },
                    },
                ],
            },
            [
                'cluster-platform:caInjection[0].caSource.issue.service: "metrics" must be "<namespace>/<name>" (a DNS-1123 label, a slash, a DNS-1123 subdomain)',
            ],
        ],
        [
            "cert-manager without an issuer",
            { certificates: { mode: "cert-manager" } },
            ['cluster-platform:certificates.issuer: is required when mode is "cert-manager"'],
        ],
        [
            "an unknown kind",
            { caInjection: [{ kind: "Secret", name: "x", namespace: "a" }] },
            [
                'cluster-platform:caInjection[0].kind: "Secret" is not one of "APIService", "ConfigMap", "CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"',
            ],
        ],
        [
            "a namespaced kind without a namespace",
            { caInjection: [{ kind: "ConfigMap", name: "trusted-ca" }] },
            ['cluster-platform:caInjection[0].namespace: is required: ConfigMap "trusted-ca" is namespaced'],
        ],
        [
            "an operator issuer without cert-manager",
            {
                operators: [
                    { name: "etcd", csv: "etcd.yaml", namespace: "etcd", certificates: { issuer: { kind: "Issuer", name: "etcd-ca" } } },
                ],
            },
            [
                'cluster-platform:operators[0].certificates.issuer: operator "etcd": is only used when the operator\'s certificate mode is "cert-manager" (it is "self-signed")',
            ],
        ],
    ])("GIVEN %s WHEN validated THEN the problem names the entry, value and rule", (_case, sections, expected) => {
        expect(lines({ cluster: { name: "prod", platform: "kubernetes", kubeContext: "test" }, ...sections })).toEqual(expected);
    });

    test("GIVEN entries with their Certificates in cert-manager mode WHEN validated THEN the config is valid", () => {
        const result = validateStackConfig({
            cluster: { name: "prod", platform: "kubernetes", kubeContext: "test" },
            certificates: certManager,
            caInjection: [{ kind: "ValidatingWebhookConfiguration", name: "policy", certificate: "policy/policy-webhook-cert" }],
        });
        expect(result.ok).toBe(true);
    });
});
