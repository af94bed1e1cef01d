import { objectNamed, patchesOf, SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig } from "../helpers/render";

const STACK = (rbacNamespaces: string[]) => ({
    cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
    olm: { disableAllNamespacePermissionPromotion: true },
    operators: [
        {
            name: "widgets",
            csv: SAMPLE_CSVS.widgets,
            namespace: "widget-operator",
            createNamespace: true,
            targetNamespaces: [],
            rbacNamespaces,
        },
    ],
});
const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

describe("disableAllNamespacePermissionPromotion: what the operator is confined to", () => {
    test("GIVEN an AllNamespaces-only CSV with promotion disabled WHEN previewed THEN a warning says it expects every namespace but gets its rbacNamespaces only", async () => {
        const result = await renderConfig(STACK(["team-a"]), { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([]);
        expect(result.warnings).toContain(
            `operators[0].csv: operator "widgets": its CSV supports only AllNamespaces, and with olm.disableAllNamespacePermissionPromotion it gets permissions in rbacNamespaces (team-a) only, while it expects to watch every namespace: it may fail or see part of the cluster`,
        );
    });

    test("GIVEN rbacNamespaces one of which the cluster lacks WHEN previewed THEN the pre-flight refuses naming it, and the one that exists passes", async () => {
        const result = await renderConfig(STACK(["team-a", "team-b"]), { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].rbacNamespaces[1]: Namespace "team-b" does not exist in the cluster: operator "widgets" gets Roles and RoleBindings there (rbacNamespaces), and the stack never creates it; create it first`,
        ]);
    });
});

describe("disableAllNamespacePermissionPromotion: where the operator's webhooks apply", () => {
    const NAME = "kubernetes.io/metadata.name";
    const clientConfig = (path: string) => ({
        caBundle: "[unknown]",
        service: { name: "widget-webhook-service", namespace: "widget-operator", path, port: 443 },
    });
    // The widgets CSV's two webhooks (tests/fixtures/operators/widget-operator), with the selector under test.
    const validating = (namespaceSelector: unknown) => ({
        name: "vwidget.samples.cluster-platform.io",
        clientConfig: clientConfig("/validate-samples-cluster-platform-io-v1-widget"),
        rules: [
            { apiGroups: ["samples.cluster-platform.io"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["widgets"] },
        ],
        failurePolicy: "Fail",
        matchPolicy: "Equivalent",
        namespaceSelector,
        sideEffects: "None",
        timeoutSeconds: 10,
        admissionReviewVersions: ["v1"],
    });
    const mutating = (namespaceSelector: unknown) => ({
        name: "mwidget.samples.cluster-platform.io",
        clientConfig: clientConfig("/mutate-samples-cluster-platform-io-v1-widget"),
        rules: [{ apiGroups: ["samples.cluster-platform.io"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["widgets"] }],
        failurePolicy: "Fail",
        namespaceSelector,
        objectSelector: { matchExpressions: [{ key: "samples.cluster-platform.io/skip-defaults", operator: "DoesNotExist" }] },
        sideEffects: "NoneOnDryRun",
        admissionReviewVersions: ["v1"],
        reinvocationPolicy: "IfNeeded",
    });
    const webhooksOf = (result: Awaited<ReturnType<typeof renderConfig>>) =>
        ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"].map(
            (kind) => objectNamed(result, kind, "widget-operator.widget-webhook").webhooks,
        );

    test("GIVEN promotion disabled and rbacNamespaces [team-b, team-a] WHEN rendered THEN both webhooks select exactly those namespaces by name, kube-system and the operator's namespace still shut out, and no namespace is labelled", async () => {
        const result = await renderConfig(STACK(["team-b", "team-a"]), { cluster: [namespace("team-a"), namespace("team-b")] });
        expect(result.errors).toEqual([]);
        const selector = {
            matchExpressions: [
                { key: NAME, operator: "In", values: ["team-a", "team-b"] },
                { key: NAME, operator: "NotIn", values: ["kube-system", "widget-operator"] },
            ],
        };
        expect(webhooksOf(result)).toEqual([[mutating(selector)], [validating(selector)]]);
        expect(patchesOf(result).filter((p) => p.kind === "Namespace")).toEqual([]);
    });

    test("GIVEN rbacNamespaces that list the operator's own namespace WHEN rendered THEN its own namespace is in scope, as for any install that targets it", async () => {
        const result = await renderConfig(STACK(["widget-operator", "team-a"]), { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([]);
        const selector = {
            matchExpressions: [
                { key: NAME, operator: "In", values: ["team-a", "widget-operator"] },
                { key: NAME, operator: "NotIn", values: ["kube-system"] },
            ],
        };
        expect(webhooksOf(result)).toEqual([[mutating(selector)], [validating(selector)]]);
    });

    test("GIVEN the same install with promotion enabled WHEN rendered THEN the webhooks keep every namespace but kube-system and the operator's", async () => {
        const config = { ...STACK(["team-a"]), olm: { disableAllNamespacePermissionPromotion: false } };
        const result = await renderConfig(config, { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([]);
        const selector = { matchExpressions: [{ key: NAME, operator: "NotIn", values: ["kube-system", "widget-operator"] }] };
        expect(webhooksOf(result)).toEqual([[mutating(selector)], [validating(selector)]]);
    });
});
