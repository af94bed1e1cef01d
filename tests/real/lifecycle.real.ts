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
    fullStackKept,
    POLICY_WEBHOOK,
    preexistingObjects,
    requireBuild,
    TEAM_NAMESPACE,
    TRUST_CONFIGMAP,
} from "./helpers/fixtures";
import { destroyStack } from "./helpers/destroy";
import { eventually } from "./helpers/eventually";
import { changedSteps, previewSteps } from "./helpers/preview";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";
import { keepSubscriptionWebhook, type WebhookKeeper } from "./helpers/subscription-webhook";

const SUBSCRIPTION_NAMESPACE = "subscription-injection";

/** What the stack's state keeps on destroy, by design. */
const KEPT = fullStackKept();

let stack: TestStack;
/** The webhook's server, run while the stack's Deployment exists, so pods created after its configuration are admitted for real. */
let keeper: WebhookKeeper;
/** OLMConfig/cluster's features before the stack patches one of them (OLM's own, on an existing cluster). */
let olmFeaturesBefore: Record<string, unknown> = {};

/** The MutatingWebhookConfigurations whose webhooks call into the subscription namespace, whatever the stack names them. */
function subscriptionWebhookConfigurations(): KubeObject[] {
    return (JSON.parse(kubectl(["get", "mutatingwebhookconfigurations", "-o", "json"])).items as KubeObject[]).filter((c) =>
        (c.webhooks ?? []).some((w: KubeObject) => w.clientConfig.service?.namespace === SUBSCRIPTION_NAMESPACE),
    );
}

beforeAll(async () => {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
    olmFeaturesBefore = getObject("olmconfig", "cluster")?.spec.features ?? {};
    keeper = await keepSubscriptionWebhook();
    stack = new TestStack("full", fullStackConfig());
});

/**
 * A plain pod in the team's namespace, whose always-inject Bundle the webhook adds: the admission
 * is the server's, not luck's. Created once the server answers at every pod IP.
 */
async function admittedPod(name: string): Promise<KubeObject> {
    await eventually(
        "the keeper starts the server once the Deployment's pods and Secrets exist, as a kubelet would start them",
        async () => ((await keeper.ready()) ? true : undefined),
        { timeoutMs: 60_000, describe: () => keeper.output().slice(-2000) },
    );
    try {
        return JSON.parse(
            kubectl(["create", "-f", "-", "-o", "json"], {
                input: JSON.stringify({
                    apiVersion: "v1",
                    kind: "Pod",
                    metadata: { name, namespace: TEAM_NAMESPACE },
                    spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] },
                }),
            }),
        );
    } finally {
        kubectl(["delete", "pod", name, "-n", TEAM_NAMESPACE, "--ignore-not-found", "--wait=false"]);
    }
}

describe("the full stack on the real engine and a real API server", () => {
    test("3a GIVEN every non-AWS capability, its webhook server running as its pods would WHEN pulumi up runs THEN it ends with no error, the cluster holds the stack's objects, and the API server calls the webhook", async () => {
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
        // The API server called the stack's webhook server for the pods created under its configuration.
        const injected = await admittedPod("after-up");
        expect((injected.spec.volumes as KubeObject[]).map((v) => v.name)).toContain("subscription-entitlements");
        expect((await keeper.admissions()).patched).toBeGreaterThan(0);
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

    test("3f GIVEN a team's Bundle in the stack's CRD WHEN the stack is destroyed THEN every object its state owned is gone but what it keeps by design, the owners' fields of patched objects are untouched, and up succeeds again", async () => {
        applyObjects([
            {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "team-own", namespace: TEAM_NAMESPACE },
                spec: { entitlements: [{ name: "etc-pki-entitlement" }] },
            },
        ]);

        // Every object the state owned is gone but what it keeps by design (helpers/destroy.ts).
        destroyStack(stack, KEPT);
        expect(subscriptionWebhookConfigurations()).toEqual([]);
        // Not the stack's: kept with what is in them (the team's Bundle in the kept CRD).
        const exists = (kind: string, name: string, namespace?: string) => getObject(kind, name, namespace) !== undefined;
        expect({
            teamBundle: exists("bundle", "team-own", TEAM_NAMESPACE),
            teamNamespace: exists("namespace", TEAM_NAMESPACE),
            entitlement: exists("secret", "etc-pki-entitlement", CONFIG_NAMESPACE),
        }).toEqual({ teamBundle: true, teamNamespace: true, entitlement: true });
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
        // The server restarted with the new certificate: the API server calls it again.
        expect(((await admittedPod("after-up-again")).spec.volumes as KubeObject[]).map((v) => v.name)).toContain(
            "subscription-entitlements",
        );
    });
});

afterAll(async () => {
    // Leave the cluster as the next file expects it: nothing of this stack but what it keeps by design.
    try {
        if (stack) {
            destroyStack(stack, KEPT);
        }
    } finally {
        await keeper?.stop();
    }
});
