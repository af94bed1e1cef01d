/**
 * The full stack through its whole life on the real engine and API server (issue 25, 3a-3c, 3e,
 * 3f): up, no perpetual diff, drift seen as exactly what changed, state free of secrets and of the
 * runner, destroy keeping what docs/operations.md promises, and up again. The steps run in order on one
 * stack, each starting from where the previous one left the cluster.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { applyObjects, getObject, type KubeObject, kubectl } from "./helpers/kubectl";
import {
    CONFIG_NAMESPACE,
    ENTITLEMENT_MARKER,
    fullStackConfig,
    OLM_AGGREGATE_VIEW,
    POLICY_WEBHOOK,
    preexistingObjects,
    requireBuild,
    TEAM_NAMESPACE,
    TRUST_CONFIGMAP,
} from "./helpers/fixtures";
import { changedSteps, previewSteps } from "./helpers/preview";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const SUBSCRIPTION_NAMESPACE = "subscription-injection";

let stack: TestStack;
/** OLMConfig/cluster's features before the stack patches one of them (OLM's own, on an existing cluster). */
let olmFeaturesBefore: Record<string, unknown> = {};

/** The MutatingWebhookConfigurations whose webhooks call into the subscription namespace, whatever the stack names them. */
function subscriptionWebhookConfigurations(): KubeObject[] {
    return (JSON.parse(kubectl(["get", "mutatingwebhookconfigurations", "-o", "json"])).items as KubeObject[]).filter((c) =>
        (c.webhooks ?? []).some((w: KubeObject) => w.clientConfig.service?.namespace === SUBSCRIPTION_NAMESPACE),
    );
}

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
    olmFeaturesBefore = getObject("olmconfig", "cluster")?.spec.features ?? {};
    stack = new TestStack("full", fullStackConfig());
});

describe("the full stack on the real engine and a real API server", () => {
    test("3a GIVEN every non-AWS capability WHEN pulumi up runs THEN it ends with no error and the cluster holds the stack's objects", () => {
        const up = stack.up();
        expect({ status: up.status, errors: /error:/.test(up.stdout + up.stderr) ? explain(up) : "" }).toEqual({ status: 0, errors: "" });

        const webhook = getObject("deployment", "subscription-injection-webhook", SUBSCRIPTION_NAMESPACE);
        expect(webhook?.status?.availableReplicas).toBe(2);
        // The MutatingWebhookConfiguration whose webhook calls the webhook's Service, whatever the stack names it.
        const mutating = subscriptionWebhookConfigurations();
        expect(mutating.flatMap((c) => c.webhooks.map((w: KubeObject) => [w.name, w.failurePolicy, w.clientConfig.service.name]))).toEqual([
            ["inject.subscription.openshift.io", "Fail", "subscription-injection-webhook-service"],
        ]);
        // The CA the stack made, injected into the other team's objects (caInjection), as the API server holds them.
        const caBundle = Buffer.from(mutating[0].webhooks[0].clientConfig.caBundle, "base64").toString("utf8");
        expect(getObject("configmap", TRUST_CONFIGMAP, CONFIG_NAMESPACE)?.data["service-ca.crt"]).toBe(caBundle);
        expect(
            Buffer.from(getObject("validatingwebhookconfiguration", POLICY_WEBHOOK)?.webhooks[0].clientConfig.caBundle, "base64").toString(
                "utf8",
            ),
        ).toBe(caBundle);
        expect(getObject("clusterbundle", "cluster")?.spec.aggregateToClusterRoles).toEqual(["admin", "edit"]);
        expect(getObject("olmconfig", "cluster")?.spec.features).toEqual({ ...olmFeaturesBefore, disableCopiedCSVs: true });
    });

    test("3b GIVEN the stack just applied WHEN previewed again, with and without refresh THEN the engine finds no change", () => {
        for (const extra of [[], ["--refresh"]]) {
            const preview = stack.preview(["--expect-no-changes", ...extra]);
            expect({ args: extra, status: preview.status }).toEqual({ args: extra, status: 0 });
        }
    });

    test("3c GIVEN a managed field edited and a managed object deleted out of band WHEN previewed with refresh THEN exactly those two show, and up puts them back", () => {
        kubectl([
            "patch",
            "clusterbundle",
            "cluster",
            "--type=merge",
            "--field-manager=out-of-band",
            "-p",
            JSON.stringify({ spec: { aggregateToClusterRoles: ["admin"] } }),
        ]);
        kubectl(["delete", "clusterrole", "subscription-bundles-view"]);

        const changes = changedSteps(previewSteps(stack, ["--refresh"]));
        expect(changes).toEqual([
            { op: "create", type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", name: "subscription-bundles-view", paths: [] },
            {
                op: "update",
                type: "kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle",
                name: "clusterbundle-cluster",
                paths: ["spec.aggregateToClusterRoles[1]"],
            },
        ]);

        const up = stack.up(["--refresh"]);
        expect(up.status).toBe(0);
        expect(getObject("clusterbundle", "cluster")?.spec.aggregateToClusterRoles).toEqual(["admin", "edit"]);
        expect(getObject("clusterrole", "subscription-bundles-view")).toBeDefined();
        expect(stack.preview(["--expect-no-changes", "--refresh"]).status).toBe(0);
    });

    test("3e GIVEN the applied stack WHEN its state is exported THEN it holds no entitlement data, no unencrypted private key and nothing of the runner's environment", () => {
        const state = stack.exportState();
        const runner = [
            realEnv("REAL_KUBECONFIG"),
            fs.readFileSync(realEnv("REAL_KUBECONFIG"), "utf8").slice(0, 200),
            stack.home,
            path.dirname(stack.home),
            stack.stateDir,
        ];
        expect({
            entitlement: state.includes(ENTITLEMENT_MARKER),
            entitlementBase64: state.includes(Buffer.from(ENTITLEMENT_MARKER).toString("base64").slice(0, 24)),
            privateKeys: state.match(/-----BEGIN [A-Z ]*PRIVATE KEY-----/g) ?? [],
            runner: runner.filter((value) => state.includes(value)),
            kubeconfigInputs: [...state.matchAll(/"kubeconfig": "([^"]*)"/g)].map((m) => m[1]),
        }).toEqual({ entitlement: false, entitlementBase64: false, privateKeys: [], runner: [], kubeconfigInputs: ["", "", "", ""] });
        // The serving keys are there, as Pulumi secrets (ciphertext).
        expect(
            JSON.parse(state).deployment.resources.filter((r: { type: string }) => r.type === "tls:index/privateKey:PrivateKey").length,
        ).toBeGreaterThan(0);
        expect(state).toContain(`"${specialSigKey}": "${specialSecretSig}"`);
    });

    test("3e GIVEN a second runner with another KUBECONFIG path, HOME and PULUMI_HOME WHEN it previews the stack THEN the providers and every resource show no diff", () => {
        const otherHome = path.join(realEnv("REAL_WORK"), "second-runner");
        fs.mkdirSync(otherHome, { recursive: true });
        const otherKubeconfig = path.join(otherHome, "config");
        fs.copyFileSync(realEnv("REAL_KUBECONFIG"), otherKubeconfig);
        const preview = stack.run(["preview", "--stack", stack.name, "--non-interactive", "--expect-no-changes", "--diff"], {
            KUBECONFIG: otherKubeconfig,
            HOME: otherHome,
            PULUMI_HOME: path.join(otherHome, ".pulumi"),
        });
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    });

    test("3f GIVEN a team's Bundle in the stack's CRD WHEN the stack is destroyed THEN what it owns is gone and what docs/operations.md keeps is kept, and up succeeds again", () => {
        applyObjects([
            {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "team-own", namespace: TEAM_NAMESPACE },
                spec: { entitlements: [{ name: "etc-pki-entitlement" }] },
            },
        ]);

        const destroy = stack.destroy();
        expect(destroy.status).toBe(0);
        const exists = (kind: string, name: string, namespace?: string) => getObject(kind, name, namespace) !== undefined;
        expect({
            ownNamespace: exists("namespace", SUBSCRIPTION_NAMESPACE),
            operatorNamespace: exists("namespace", "node-maintenance"),
            webhookConfiguration: subscriptionWebhookConfigurations().length > 0,
            clusterBundle: exists("clusterbundle", "cluster"),
            // Kept: CRDs (with the team's custom resource), pre-existing and adopted objects.
            bundleCrd: exists("crd", "bundles.subscription.openshift.io"),
            clusterBundleCrd: exists("crd", "clusterbundles.subscription.openshift.io"),
            operatorCrd: exists("crd", "nodemaintenances.nodemaintenance.medik8s.io"),
            teamBundle: exists("bundle", "team-own", TEAM_NAMESPACE),
            teamNamespace: exists("namespace", TEAM_NAMESPACE),
            entitlement: exists("secret", "etc-pki-entitlement", CONFIG_NAMESPACE),
            adoptedRole: exists("clusterrole", OLM_AGGREGATE_VIEW),
        }).toEqual({
            ownNamespace: false,
            operatorNamespace: false,
            webhookConfiguration: false,
            clusterBundle: false,
            bundleCrd: true,
            clusterBundleCrd: true,
            operatorCrd: true,
            teamBundle: true,
            teamNamespace: true,
            entitlement: true,
            adoptedRole: true,
        });
        // Patched objects: the stack's fields relinquished, the owners' fields untouched.
        expect(getObject("configmap", TRUST_CONFIGMAP, CONFIG_NAMESPACE)?.data).toEqual({ owner: "security team" });
        const policy = getObject("validatingwebhookconfiguration", POLICY_WEBHOOK);
        expect(policy?.webhooks[0].clientConfig).toEqual({
            service: { name: "policy-webhook", namespace: CONFIG_NAMESPACE, path: "/validate", port: 443 },
        });
        expect(getObject("olmconfig", "cluster")?.spec.features).toEqual(olmFeaturesBefore);

        const again = stack.up();
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
        const settled = stack.preview(["--expect-no-changes", "--diff"]);
        expect({ status: settled.status, output: settled.status === 0 ? "" : explain(settled) }).toEqual({ status: 0, output: "" });
    });
});

afterAll(() => {
    // Leave the cluster as the next file expects it: nothing of this stack.
    stack?.destroy();
});
