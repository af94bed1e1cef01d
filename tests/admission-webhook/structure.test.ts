import fc from "fast-check";
import { WebhookBackend, WebhookDefinition } from "../../components/admission-webhook/contract";
import { admissionWebhookProblems, isPortName } from "../../components/admission-webhook/structure";

const backend: WebhookBackend = {
    deploymentName: "policy-webhook",
    namespace: "policy",
    matchLabels: { app: "p" },
    servicePort: 443,
    targetPort: 9443,
};
const webhook: WebhookDefinition = {
    name: "vpods.policy.example.io",
    type: "ValidatingAdmissionWebhook",
    rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
};

describe("admission webhook description rules", () => {
    test("GIVEN a sound description WHEN checked THEN there is no problem", () => {
        expect(admissionWebhookProblems({ backend, webhooks: [webhook], targetNamespaces: ["a"] })).toEqual([]);
    });

    test("GIVEN every mistake at once WHEN checked THEN each is reported with the webhook's name, value and rule", () => {
        const problems = admissionWebhookProblems({
            backend: { ...backend, deploymentName: "9-webhook", servicePort: 70000, targetPort: "https--port" },
            webhooks: [
                {
                    ...webhook,
                    name: "vpods",
                    sideEffects: "Some",
                    admissionReviewVersions: ["v2"],
                    timeoutSeconds: 31,
                    reinvocationPolicy: "IfNeeded",
                    path: "validate",
                },
                { ...webhook, name: "vpods" },
                { ...webhook, name: "vpods", type: "MutatingAdmissionWebhook" },
            ],
            targetNamespaces: [],
        });
        expect(problems).toEqual([
            {
                path: "backend.deploymentName",
                message:
                    '"9-webhook" makes the Service name "9-webhook-service", which must be a DNS-1035 label: at most 63 lowercase letters, digits or \'-\', starting with a letter',
            },
            { path: "backend.servicePort", message: "70000 is not a port: must be an integer from 1 to 65535" },
            {
                path: "backend.targetPort",
                message:
                    "\"https--port\" is neither a port (an integer from 1 to 65535) nor a port name (at most 15 lowercase letters, digits or '-', with a letter)",
            },
            { path: "targetNamespaces", message: "is empty, so the webhooks would see no namespace: pass undefined for all namespaces" },
            {
                path: "webhooks[0].name",
                message:
                    'webhook "vpods": must be a fully qualified name (a DNS-1123 subdomain with at least three segments, such as "vpod.example.io")',
            },
            {
                path: "webhooks[0].sideEffects",
                message:
                    'webhook "vpods": is "Some"; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
            },
            {
                path: "webhooks[0].admissionReviewVersions",
                message: 'webhook "vpods": ["v2"] must include a version the API server sends (v1, v1beta1)',
            },
            {
                path: "webhooks[0].timeoutSeconds",
                message: 'webhook "vpods": 31 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts',
            },
            {
                path: "webhooks[0].reinvocationPolicy",
                message: 'webhook "vpods": only mutating webhooks are reinvoked; remove it from this validating webhook',
            },
            { path: "webhooks[0].path", message: 'webhook "vpods": "validate" must start with "/"' },
            {
                path: "webhooks[1].name",
                message:
                    'webhook "vpods": must be a fully qualified name (a DNS-1123 subdomain with at least three segments, such as "vpod.example.io")',
            },
            {
                path: "webhooks[1].name",
                message: 'webhook "vpods": repeats the name of webhooks[0]; names must be unique in a ValidatingAdmissionWebhook',
            },
            {
                path: "webhooks[2].name",
                message:
                    'webhook "vpods": must be a fully qualified name (a DNS-1123 subdomain with at least three segments, such as "vpod.example.io")',
            },
        ]);
    });

    test("GIVEN no webhooks WHEN checked THEN the description is refused", () => {
        expect(admissionWebhookProblems({ backend, webhooks: [], targetNamespaces: undefined })).toEqual([
            { path: "webhooks", message: "is empty: a webhook backend needs at least one webhook" },
        ]);
    });

    test("GIVEN any string WHEN checked as a port name THEN it passes exactly when it is an IANA service name", () => {
        const reference = (v: string) => v.length >= 1 && v.length <= 15 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(v) && /[a-z]/.test(v);
        fc.assert(fc.property(fc.stringMatching(/^[a-z0-9-]{0,17}$/), (value) => expect(isPortName(value)).toBe(reference(value))));
        expect(["https", "webhook-server", "h2c"].map(isPortName)).toEqual([true, true, true]);
        expect(["443", "-https", "https-", "a--b", "HTTPS", "sixteen-chars-xx"].map(isPortName)).toEqual([
            false,
            false,
            false,
            false,
            false,
            false,
        ]);
    });
});
