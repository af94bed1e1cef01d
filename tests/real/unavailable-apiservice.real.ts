/**
 * Deletes that cannot hang on another team's outage (issue 39, point 3). An APIService whose
 * Service has no endpoints (a metrics adapter scaled to zero) makes the namespace controller keep
 * every deleted namespace Terminating (`NamespaceDeletionDiscoveryFailure`, kubernetes
 * `pkg/controller/namespace/deletion`). The pre-flight warns naming it; the stack's Namespace delete
 * waits its bounded custom timeout, not the provider's 10 minutes, and fails naming the Namespace,
 * which stays in the state; once the APIService is repaired the namespace goes and the next run
 * converges with an empty preview.
 *
 * One stack: the sample widget operator in a namespace the stack creates, removed from config.
 */
import { applyObjects, getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, requireBuild, WIDGET_CRD, widgetOperatorStack } from "./helpers/fixtures";
import { describe as explain, REPO_ROOT, TestStack } from "./helpers/stack";

const STACK = "unavailable-apiservice";
const NAMESPACE = "widgets-outage";
const API_SERVICE = "v1.outage.real.cluster-platform.io";

const withOperator = widgetOperatorStack(NAMESPACE);
/** The same stack without the operator: its removal from config. */
const base = { ...withOperator, operators: [] };

/** The APIService of another team, backed by a Service that selects no pod. */
function brokenApiService(): void {
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
        {
            apiVersion: "v1",
            kind: "Service",
            metadata: { name: "outage-adapter", namespace: CONFIG_NAMESPACE },
            spec: { selector: { app: "outage-adapter-scaled-to-zero" }, ports: [{ name: "https", port: 443, targetPort: 6443 }] },
        },
        {
            apiVersion: "apiregistration.k8s.io/v1",
            kind: "APIService",
            metadata: { name: API_SERVICE },
            spec: {
                group: "outage.real.cluster-platform.io",
                version: "v1",
                service: { name: "outage-adapter", namespace: CONFIG_NAMESPACE, port: 443 },
                insecureSkipTLSVerify: true,
                groupPriorityMinimum: 1000,
                versionPriority: 15,
            },
        },
    ]);
    kubectl(["wait", `apiservice/${API_SERVICE}`, "--for=condition=Available=False", "--timeout=60s"]);
}

let stack: TestStack;

beforeAll(() => {
    requireBuild(REPO_ROOT);
    brokenApiService();
    stack = new TestStack(STACK, withOperator);
});

afterAll(() => {
    // Whatever happened, the cluster's discovery is whole again for the files after this one.
    kubectlRun(["delete", "apiservice", API_SERVICE, "--ignore-not-found"]);
    stack?.destroy();
    kubectlRun(["delete", "crd", WIDGET_CRD, "--ignore-not-found"]);
});

describe("deletes while another team's APIService is unavailable (issue 39)", () => {
    test("GIVEN an APIService whose Service has no endpoints WHEN a capability owning a namespace is applied, then removed from config THEN both runs warn naming it, the removal fails within the bounded timeout naming the Namespace, and once the APIService is repaired the namespace goes and the next preview is empty", () => {
        const warning = `APIService ${API_SERVICE} (MissingEndpoints: `;

        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expect(up.stdout).toContain(warning);
        expect(up.stdout).toContain(`(this stack's ${NAMESPACE}; any removed from config; all on pulumi destroy) stays Terminating`);

        // The bounded wait is the Namespace's custom delete timeout, kept in the state (destroy uses it too).
        expect(stack.customTimeouts(`kubernetes:core/v1:Namespace::namespace-${NAMESPACE}`)).toEqual({ delete: 60 });

        stack.setConfig(base);
        const removal = stack.up();
        const output = `${removal.stdout}\n${removal.stderr}`;
        expect({
            status: removal.status,
            warned: output.includes(warning),
            // The provider's delete of the Namespace ended at the custom timeout (60 s), not its 10-minute default.
            namespaceFailed: new RegExp(
                `kubernetes:core/v1:Namespace \\(.*${NAMESPACE}\\)|${NAMESPACE}.*(timed out|deadline|finalizers)`,
            ).test(output),
        }).toEqual({ status: 1, warned: true, namespaceFailed: true });
        const terminating = getObject("namespace", NAMESPACE);
        expect({
            phase: terminating?.status?.phase,
            discoveryFailure: (terminating?.status?.conditions ?? []).find(
                (c: { type: string }) => c.type === "NamespaceDeletionDiscoveryFailure",
            )?.status,
        }).toEqual({ phase: "Terminating", discoveryFailure: "True" });
        // Still in the state: the next run deletes it again.
        expect(stack.exportState()).toContain(`kubernetes:core/v1:Namespace::namespace-${NAMESPACE}`);

        // Repaired (here: the team removes its APIService); the namespace controller's retry finalizes the namespace.
        kubectl(["delete", "apiservice", API_SERVICE]);
        kubectl(["wait", `namespace/${NAMESPACE}`, "--for=delete", "--timeout=300s"]);

        const next = stack.up();
        expect({ status: next.status, output: next.status === 0 ? "" : explain(next) }).toEqual({ status: 0, output: "" });
        expect(stack.exportState()).not.toContain(`kubernetes:core/v1:Namespace::namespace-${NAMESPACE}`);
        const preview = stack.preview(["--expect-no-changes"]);
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    });
});
