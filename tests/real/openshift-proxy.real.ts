/**
 * OpenShift's cluster proxy on the real engine and API server (issue 35, point 6): the pre-flight
 * reads Proxy `cluster` like every other live object it checks (components/operator/olm-environment.ts,
 * `clusterProxyEnv`), so a Proxy without `status` leaves nothing unknown to a preview (docs/real-tier.md
 * found that a Pulumi read of it made every preview change the operators), and proxy URLs that carry
 * credentials reach the operator's containers while the state holds them only encrypted and no
 * preview prints them.
 *
 * The sample bundle without webhooks, as in operator-rename.real.ts. The Proxy's status is written
 * through its status subresource, as OpenShift's network operator writes it.
 */
import { applyObjects, getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { operatorsOnlyStack, widgetBundle } from "./helpers/fixtures";
import { describe as explain, TestStack } from "./helpers/stack";

const NAMESPACE = "proxy-operator";
const CRD = "widgets.samples.cluster-platform.io";
/** The credential in the proxy URLs: it must reach the pods and nothing else. */
const PASSWORD = "proxy-pw-7c1e";
const HTTP_PROXY = `http://platform:${PASSWORD}@proxy.corp.example:3128`;

let stack: TestStack;

/** Writes Proxy `cluster`'s status as the network operator does, through the status subresource. */
function proxyStatus(status: Record<string, string>): void {
    kubectl(["patch", "proxy.config.openshift.io", "cluster", "--subresource=status", "--type=merge", "-p", JSON.stringify({ status })]);
}

/** Removes Proxy `cluster`'s status: a Proxy as created, before any operator writes it. */
function noProxyStatus(): void {
    kubectlRun([
        "patch",
        "proxy.config.openshift.io",
        "cluster",
        "--subresource=status",
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/status"}]',
    ]);
}

function proxyEnvOf(): Record<string, string> {
    const container = getObject("deployment", "widget-controller", NAMESPACE)?.spec.template.spec.containers[0];
    return Object.fromEntries(
        (container.env as { name: string; value: string }[]).filter((e) => e.name.endsWith("PROXY")).map((e) => [e.name, e.value]),
    );
}

beforeAll(() => {
    applyObjects([{ apiVersion: "config.openshift.io/v1", kind: "Proxy", metadata: { name: "cluster" }, spec: {} }]);
    noProxyStatus();
    stack = new TestStack(
        "openshift-proxy",
        operatorsOnlyStack(
            [{ name: "widgets", csv: widgetBundle("widgets-proxy"), namespace: NAMESPACE, createNamespace: true, targetNamespaces: [] }],
            { platform: "openshift" },
        ),
    );
});

afterAll(() => {
    const destroyed = stack?.destroy();
    kubectlRun(["delete", "crd", CRD, "--ignore-not-found"]);
    noProxyStatus();
    expect({ status: destroyed?.status, output: destroyed?.status === 0 ? "" : destroyed && explain(destroyed) }).toEqual({
        status: 0,
        output: "",
    });
});

describe("OpenShift's cluster proxy, read by the pre-flight (issue 35)", () => {
    test("GIVEN Proxy cluster without status WHEN up runs THEN the operator gets no proxy variable and the next preview finds nothing to change", () => {
        expect(getObject("proxy.config.openshift.io", "cluster")?.status).toBeUndefined();
        const installed = stack.up();
        expect({ status: installed.status, output: installed.status === 0 ? "" : explain(installed) }).toEqual({ status: 0, output: "" });
        expect(proxyEnvOf()).toEqual({});
        const again = stack.preview(["--expect-no-changes"]);
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
    });

    test("GIVEN the proxy set with credentials in its URLs WHEN previewed and applied THEN the pods get OLM's variables, the preview and the state never show the credential, and the next preview is empty", () => {
        proxyStatus({ httpProxy: HTTP_PROXY, httpsProxy: HTTP_PROXY, noProxy: ".cluster.local,.svc" });
        const planned = stack.preview();
        expect(planned.status).toBe(0);
        expect(planned.stdout).toMatch(/~ 2 to update|~ 1 to update/);
        expect(planned.stdout + planned.stderr).not.toContain(PASSWORD);
        expect(planned.stdout).toContain("[secret]");

        const applied = stack.up();
        expect({ status: applied.status, output: applied.status === 0 ? "" : explain(applied) }).toEqual({ status: 0, output: "" });
        expect(applied.stdout + applied.stderr).not.toContain(PASSWORD);
        expect(proxyEnvOf()).toEqual({ HTTP_PROXY, HTTPS_PROXY: HTTP_PROXY, NO_PROXY: ".cluster.local,.svc" });
        expect(stack.exportState()).not.toContain(PASSWORD);

        const again = stack.preview(["--expect-no-changes"]);
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
        expect(again.stdout + again.stderr).not.toContain(PASSWORD);
        const json = stack.run(["preview", "--stack", stack.name, "--non-interactive", "--json", "--refresh"]);
        expect(json.status).toBe(0);
        expect(json.stdout + json.stderr).not.toContain(PASSWORD);
    });
});
