import fc from "fast-check";
import { WebhookContext, WebhookDescriptionInput, webhookDescriptionProblems } from "../../components/admission-webhook/rules";
import { webhookFailClosedAvailability } from "../../policy-packs/k8s-rbac/webhook-availability";
import { webhookNamespaceExclusions, webhookSideEffects, webhookTimeout } from "../../policy-packs/k8s-rbac/webhooks";
import { k8s, stackViolations, UNKNOWN_VALUE, violations } from "./support";

const NAME_LABEL = "kubernetes.io/metadata.name";

/** A CSV's webhook description that passes the operator pre-flight, for comparing the pre-flight's timeout rule with the pack's. */
const CSV_WEBHOOK: WebhookDescriptionInput = {
    generateName: "vpod.example.io",
    type: "ValidatingAdmissionWebhook",
    deploymentName: "widget-webhook",
    rules: [{ apiGroups: [""], resources: ["pods"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
};
const CSV_CONTEXT: WebhookContext = {
    operator: "widgets",
    deployments: [{ name: "widget-webhook", portNames: [] }],
    ownedCrds: [],
    allNamespacesOnly: true,
};

/** A webhook entry as the AdmissionWebhook component renders one, with `overrides`. */
function webhook(overrides: Record<string, unknown> = {}) {
    return {
        name: "vpod.example.io",
        clientConfig: { service: { name: "widget-webhook-service", namespace: "widgets", path: "/validate", port: 443 } },
        rules: [{ operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"] }],
        namespaceSelector: { matchExpressions: [{ key: NAME_LABEL, operator: "NotIn", values: ["kube-system", "widgets"] }] },
        sideEffects: "None",
        timeoutSeconds: 5,
        admissionReviewVersions: ["v1"],
        ...overrides,
    };
}

function configuration(kind: string, webhooks: Record<string, unknown>[], typeKind: string = kind) {
    return k8s({ apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name: "widgets.widget-webhook" }, webhooks }, typeKind);
}

describe("k8s-webhook-timeout", () => {
    test("GIVEN webhooks waiting 31 s and 0 s WHEN analyzed THEN each names the configuration, the webhook and the platform's one limit (the pre-flight's)", () => {
        const target = configuration("ValidatingWebhookConfiguration", [
            webhook({ timeoutSeconds: 31 }),
            webhook({ name: "vsvc.example.io", timeoutSeconds: 0 }),
        ]);
        expect(violations(webhookTimeout, target)).toEqual([
            'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): timeoutSeconds 31 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts',
            'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "vsvc.example.io" (webhooks[1]): timeoutSeconds 0 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts',
        ]);
    });

    test("GIVEN any sideEffects value WHEN the operator pre-flight and the pack judge it THEN they agree (one rule)", () => {
        fc.assert(
            fc.property(fc.constantFrom(undefined, "None", "NoneOnDryRun", "Some", "Unknown", "none", ""), (sideEffects) => {
                const preflight = webhookDescriptionProblems([{ ...CSV_WEBHOOK, sideEffects }], CSV_CONTEXT).map(
                    (p) => p.message.split("): ")[1],
                );
                const pack = violations(
                    webhookSideEffects,
                    configuration("ValidatingWebhookConfiguration", [webhook({ sideEffects })]),
                ).map((v) => v.split(": sideEffects ")[1]);
                expect(pack).toEqual(preflight);
            }),
        );
    });

    test("GIVEN any timeout WHEN the operator pre-flight and the pack judge it THEN they agree (one rule, one limit)", () => {
        fc.assert(
            fc.property(fc.integer({ min: -5, max: 40 }), (timeoutSeconds) => {
                const preflight = webhookDescriptionProblems([{ ...CSV_WEBHOOK, timeoutSeconds }], CSV_CONTEXT).length > 0;
                const pack =
                    violations(webhookTimeout, configuration("ValidatingWebhookConfiguration", [webhook({ timeoutSeconds })])).length > 0;
                expect(pack).toEqual(preflight);
            }),
        );
    });

    test("GIVEN timeoutSeconds 10 or unset (the API's default 10) WHEN analyzed THEN nothing is reported; WHEN the limit is 5 THEN the unset one is", () => {
        const target = configuration("MutatingWebhookConfiguration", [
            webhook({ timeoutSeconds: 10 }),
            webhook({ name: "mpod.example.io", timeoutSeconds: undefined }),
        ]);
        expect(violations(webhookTimeout, target)).toEqual([]);
        expect(violations(webhookTimeout, target, { maxTimeoutSeconds: 5 })).toEqual([
            'MutatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): timeoutSeconds 10 must be an integer from 1 to 5, so a slow webhook cannot stall every request it intercepts',
            'MutatingWebhookConfiguration "widgets.widget-webhook" webhook "mpod.example.io" (webhooks[1]): timeoutSeconds is unset, so the API server waits its default 10 s; set it to at most 5',
        ]);
    });

    test("GIVEN a patch of a webhook this stack does not own, setting only its CA bundle WHEN analyzed THEN the fields it leaves out are not judged", () => {
        const patch = configuration(
            "ValidatingWebhookConfiguration",
            [{ name: "policy.example.io", clientConfig: { caBundle: "LS0t" } }],
            "ValidatingWebhookConfigurationPatch",
        );
        expect(violations(webhookTimeout, patch)).toEqual([]);
        expect(violations(webhookSideEffects, patch)).toEqual([]);
        expect(violations(webhookNamespaceExclusions, patch)).toEqual([]);
    });

    test("GIVEN a patch that sets a bad timeout, side effects and selector WHEN analyzed THEN the fields it sets are judged like an object's", () => {
        const patch = configuration(
            "ValidatingWebhookConfiguration",
            [
                {
                    name: "policy.example.io",
                    timeoutSeconds: 45,
                    sideEffects: "Some",
                    namespaceSelector: {},
                    clientConfig: { service: { name: "policy", namespace: "policy" } },
                },
            ],
            "ValidatingWebhookConfigurationPatch",
        );
        const who = 'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "policy.example.io" (webhooks[0])';
        expect(violations(webhookTimeout, patch)).toEqual([
            `${who}: timeoutSeconds 45 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts`,
        ]);
        expect(violations(webhookSideEffects, patch)).toEqual([
            `${who}: sideEffects is "Some"; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything`,
        ]);
        expect(violations(webhookNamespaceExclusions, patch)).toEqual([
            `${who}: its namespaceSelector does not shut out "kube-system", "policy" by name; add {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, policy]}`,
        ]);
    });
});

describe("k8s-webhook-side-effects", () => {
    test("GIVEN sideEffects Some and unset WHEN analyzed THEN both are reported; None and NoneOnDryRun pass", () => {
        const target = configuration("MutatingWebhookConfiguration", [
            webhook({ sideEffects: "Some" }),
            webhook({ name: "b.example.io", sideEffects: undefined }),
            webhook({ name: "c.example.io", sideEffects: "NoneOnDryRun" }),
            webhook({ name: "d.example.io", sideEffects: "None" }),
        ]);
        expect(violations(webhookSideEffects, target)).toEqual([
            'MutatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): sideEffects is "Some"; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
            'MutatingWebhookConfiguration "widgets.widget-webhook" webhook "b.example.io" (webhooks[1]): sideEffects is unset; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
        ]);
    });
});

describe("k8s-webhook-namespace-exclusions", () => {
    test("GIVEN a selector that only opts namespaces in by label WHEN analyzed THEN kube-system and the webhook's own namespace are reported", () => {
        const target = configuration("ValidatingWebhookConfiguration", [
            webhook({ namespaceSelector: { matchLabels: { "webhooks.cluster-platform.io/widgets.widget-webhook": "true" } } }),
        ]);
        expect(violations(webhookNamespaceExclusions, target)).toEqual([
            'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): its namespaceSelector does not shut out "kube-system", "widgets" by name; add {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, widgets]}',
        ]);
    });

    test("GIVEN no namespaceSelector WHEN analyzed THEN it intercepts every namespace and is reported", () => {
        const target = configuration("MutatingWebhookConfiguration", [webhook({ namespaceSelector: undefined })]);
        expect(violations(webhookNamespaceExclusions, target)).toEqual([
            'MutatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): its namespaceSelector does not shut out "kube-system", "widgets" by name; add {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, widgets]}',
        ]);
    });

    test("GIVEN names shut out by NotIn, or a name In list without them WHEN analyzed THEN nothing is reported; alsoExcluded adds namespaces", () => {
        expect(violations(webhookNamespaceExclusions, configuration("ValidatingWebhookConfiguration", [webhook()]))).toEqual([]);
        const onlyTeams = configuration("ValidatingWebhookConfiguration", [
            webhook({ namespaceSelector: { matchExpressions: [{ key: NAME_LABEL, operator: "In", values: ["team-a", "team-b"] }] } }),
        ]);
        expect(violations(webhookNamespaceExclusions, onlyTeams)).toEqual([]);
        expect(
            violations(webhookNamespaceExclusions, configuration("ValidatingWebhookConfiguration", [webhook()]), {
                alsoExcluded: ["openshift-etcd"],
            }),
        ).toEqual([
            'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" (webhooks[0]): its namespaceSelector does not shut out "openshift-etcd" by name; add {key: kubernetes.io/metadata.name, operator: NotIn, values: [openshift-etcd]}',
        ]);
    });
});

describe("k8s-webhook-fail-closed-availability (stack policy)", () => {
    const labels = { "app.kubernetes.io/name": "widget-webhook" };
    const service = k8s({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "widget-webhook-service", namespace: "widgets" },
        spec: { selector: labels, ports: [{ port: 443 }] },
    });
    const deployment = (replicas: unknown) =>
        k8s({
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: { name: "widget-webhook", namespace: "widgets" },
            spec: {
                ...(replicas === undefined ? {} : { replicas }),
                selector: { matchLabels: labels },
                template: { metadata: { labels: { ...labels, extra: "x" } }, spec: { containers: [] } },
            },
        });
    const budget = k8s({
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: "widget-webhook", namespace: "widgets" },
        spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
    });
    const failClosed = configuration("ValidatingWebhookConfiguration", [webhook({ failurePolicy: undefined })]);
    const who = 'ValidatingWebhookConfiguration "widgets.widget-webhook" webhook "vpod.example.io" fails closed (failurePolicy Fail)';

    test("GIVEN a webhook failing closed (failurePolicy unset) backed by one replica and no budget WHEN the stack is analyzed THEN both are reported against the configuration's URN", () => {
        expect(stackViolations(webhookFailClosedAvailability, [failClosed, service, deployment(undefined)])).toEqual([
            {
                violation: `${who}: its Deployment "widgets/widget-webhook" runs 1 replica; at least 2 are needed so that one pod's restart does not block every request the webhook intercepts`,
                urn: failClosed.urn,
            },
            {
                violation: `${who}: no PodDisruptionBudget in namespace "widgets" selects the pods of its Deployment "widgets/widget-webhook", so a node drain may evict them all at once`,
                urn: failClosed.urn,
            },
        ]);
    });

    test("GIVEN 2 replicas and a budget selecting the pods WHEN analyzed THEN nothing is reported; WHEN minReplicas is 3 THEN the replicas are", () => {
        expect(stackViolations(webhookFailClosedAvailability, [failClosed, service, deployment(2), budget])).toEqual([]);
        expect(stackViolations(webhookFailClosedAvailability, [failClosed, service, deployment(2), budget], { minReplicas: 3 })).toEqual([
            {
                violation: `${who}: its Deployment "widgets/widget-webhook" runs 2 replicas; at least 3 are needed so that one pod's restart does not block every request the webhook intercepts`,
                urn: failClosed.urn,
            },
        ]);
    });

    test("GIVEN failurePolicy Ignore WHEN analyzed THEN its backend is not judged", () => {
        const ignoring = configuration("ValidatingWebhookConfiguration", [webhook({ failurePolicy: "Ignore" })]);
        expect(stackViolations(webhookFailClosedAvailability, [ignoring, service, deployment(1)])).toEqual([]);
    });

    test("GIVEN the Service is not in the stack, or selects no Deployment WHEN analyzed THEN the policy says it cannot find the backend", () => {
        expect(stackViolations(webhookFailClosedAvailability, [failClosed])).toEqual([
            {
                violation: `${who}: its Service "widgets/widget-webhook-service" is not declared in this stack, so the Deployment behind it cannot be checked for 2 replicas and a PodDisruptionBudget`,
                urn: failClosed.urn,
            },
        ]);
        expect(stackViolations(webhookFailClosedAvailability, [failClosed, service])).toEqual([
            {
                violation: `${who}: no Deployment in namespace "widgets" runs the pods its Service "widgets/widget-webhook-service" selects`,
                urn: failClosed.urn,
            },
        ]);
    });

    test("GIVEN replicas unknown during a preview WHEN analyzed THEN only what is known (the missing budget) is reported", () => {
        expect(
            stackViolations(webhookFailClosedAvailability, [failClosed, service, deployment(UNKNOWN_VALUE)]).map((v) => v.violation),
        ).toEqual([
            `${who}: no PodDisruptionBudget in namespace "widgets" selects the pods of its Deployment "widgets/widget-webhook", so a node drain may evict them all at once`,
        ]);
    });
});
