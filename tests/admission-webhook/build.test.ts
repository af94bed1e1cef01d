import fc from "fast-check";
import {
    namespaceSelector,
    targetNamespaceLabel,
    webhookCertificateVolumes,
    webhookConfigurations,
} from "../../components/admission-webhook/build";
import { WEBHOOK_CERT_MOUNT_PATHS, WebhookBackend, WebhookDefinition } from "../../components/admission-webhook/contract";

const backend: WebhookBackend = {
    deploymentName: "policy-webhook",
    namespace: "policy",
    matchLabels: { app: "p" },
    servicePort: 8443,
    targetPort: "https",
};
const base = { rules: [], sideEffects: "None" as const, admissionReviewVersions: ["v1"] };

describe("webhook configurations", () => {
    test("GIVEN webhooks of both types WHEN built THEN one configuration per type holds them in the author's order, clientConfig generated", () => {
        const definitions: WebhookDefinition[] = [
            { ...base, name: "b.x.io", type: "ValidatingAdmissionWebhook", path: "/b" },
            { ...base, name: "m.x.io", type: "MutatingAdmissionWebhook", reinvocationPolicy: "IfNeeded" },
            { ...base, name: "a.x.io", type: "ValidatingAdmissionWebhook" },
        ];
        const built = webhookConfigurations("policy.policy-webhook", definitions, backend, undefined);
        expect(built.map((c) => [c.kind, (c.object.webhooks as { name: string }[]).map((w) => w.name)])).toEqual([
            ["MutatingWebhookConfiguration", ["m.x.io"]],
            ["ValidatingWebhookConfiguration", ["b.x.io", "a.x.io"]],
        ]);
        expect((built[1].object.webhooks as unknown[])[0]).toEqual({
            name: "b.x.io",
            clientConfig: { service: { name: "policy-webhook-service", namespace: "policy", path: "/b", port: 8443 } },
            rules: [],
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
        });
        expect((built[0].object.webhooks as { reinvocationPolicy?: string }[])[0].reinvocationPolicy).toBe("IfNeeded");
    });

    test("GIVEN an author's definition carrying clientConfig and namespaceSelector WHEN built THEN both are the generated ones", () => {
        const sneaky = {
            ...base,
            name: "v.x.io",
            type: "ValidatingAdmissionWebhook",
            clientConfig: { url: "https://evil.example.io" },
            namespaceSelector: { matchLabels: { all: "yes" } },
        } as WebhookDefinition;
        const [config] = webhookConfigurations("n", [sneaky], backend, { matchLabels: { t: "true" } });
        expect((config.object.webhooks as Record<string, unknown>[])[0]).toMatchObject({
            clientConfig: { service: { name: "policy-webhook-service", namespace: "policy", port: 8443 } },
            namespaceSelector: { matchLabels: { t: "true" } },
        });
    });
});

describe("namespace selector", () => {
    test.each([
        ["all namespaces, nothing excluded", { targetNamespaces: undefined, labelled: true }, undefined],
        [
            "all namespaces, some excluded",
            { targetNamespaces: undefined, excludedNamespaces: ["b", "a", "a"], labelled: true },
            { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["a", "b"] }] },
        ],
        [
            "labelled targets",
            { targetNamespaces: ["t2", "t1"], excludedNamespaces: ["policy"], labelled: true },
            {
                matchLabels: { "webhooks.cluster-platform.io/policy.policy-webhook": "true" },
                matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["policy"] }],
            },
        ],
        [
            "targets that cannot be labelled",
            { targetNamespaces: ["t2", "t1"], labelled: false },
            { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["t1", "t2"] }] },
        ],
        [
            "namespaces by name, with exclusions, on a live cluster (no label written)",
            {
                targetNamespaces: undefined,
                namespaceNames: ["n2", "n1", "n2"],
                excludedNamespaces: ["kube-system", "policy"],
                labelled: true,
            },
            {
                matchExpressions: [
                    { key: "kubernetes.io/metadata.name", operator: "In", values: ["n1", "n2"] },
                    { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "policy"] },
                ],
            },
        ],
        [
            "an empty list of namespaces by name (an In with no values is invalid)",
            { targetNamespaces: undefined, namespaceNames: [], labelled: true },
            { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "DoesNotExist" }] },
        ],
    ])("GIVEN %s WHEN the selector is built THEN it is exact", (_case, input, expected) => {
        expect(namespaceSelector({ backend, ...input })).toEqual(expected);
    });

    test("GIVEN any namespace and deployment names WHEN the label is made THEN it is a valid, stable label key unique to the backend", () => {
        const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
        const dnsLabel = fc.stringMatching(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
        fc.assert(
            fc.property(dnsLabel, dnsLabel, dnsLabel, (namespace, deploymentName, other) => {
                const key = targetNamespaceLabel({ namespace, deploymentName });
                expect(key).toMatch(label);
                expect(key.split("/")[1].length).toBeLessThanOrEqual(63);
                expect(targetNamespaceLabel({ namespace, deploymentName })).toBe(key);
                if (other !== deploymentName) {
                    expect(targetNamespaceLabel({ namespace, deploymentName: other })).not.toBe(key);
                }
            }),
        );
    });
});

describe("certificate mounts", () => {
    test("GIVEN a serving Secret WHEN mounted THEN it is OLM's two volumes: apiserver.crt/apiserver.key for APIServices and tls.crt/tls.key for webhooks, one mount each", () => {
        expect(webhookCertificateVolumes("policy-webhook-cert")).toEqual({
            volumes: [
                {
                    name: "apiservice-cert",
                    secret: {
                        secretName: "policy-webhook-cert",
                        items: [
                            { key: "tls.crt", path: "apiserver.crt" },
                            { key: "tls.key", path: "apiserver.key" },
                        ],
                    },
                },
                {
                    name: "webhook-cert",
                    secret: {
                        secretName: "policy-webhook-cert",
                        items: [
                            { key: "tls.crt", path: "tls.crt" },
                            { key: "tls.key", path: "tls.key" },
                        ],
                    },
                },
            ],
            volumeMounts: [
                { name: "apiservice-cert", mountPath: "/apiserver.local.config/certificates" },
                { name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs" },
            ],
        });
        expect(WEBHOOK_CERT_MOUNT_PATHS).toEqual(["/tmp/k8s-webhook-server/serving-certs", "/apiserver.local.config/certificates"]);
    });
});
