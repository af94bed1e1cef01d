/**
 * The API server calls the subscription webhook (issue 25, 3d): the server the stack built into
 * its image runs as one of its Deployment's pods would (helpers/pod-runtime.ts), at the pod IPs kwok
 * gave, and `kubectl create` of a pod goes through the real admission chain: the API server
 * resolves the webhook Service's endpoints (aggregator routing), verifies the serving certificate
 * against `<service>.<namespace>.svc` with the caBundle the stack wrote, applies the JSON patch and
 * validates the patched pod.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { applyObjects, getObject, kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { fullStackConfig, preexistingObjects, requireBuild, TEAM_NAMESPACE } from "./helpers/fixtures";
import { runDeploymentContainer, type RunningContainer } from "./helpers/pod-runtime";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const NAMESPACE = "subscription-injection";
const DEPLOYMENT = "subscription-injection-webhook";
const SERVICE = "subscription-injection-webhook-service";
const SHARED_RESOURCE_DRIVER = "csi.sharedresource.openshift.io";

let stack: TestStack;
let server: RunningContainer | undefined;

/** The team's service accounts: one bound to `edit` (which the ClusterBundle's role aggregates to), one that may only create pods. */
function teamAccess(): object[] {
    const sa = (name: string) => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: TEAM_NAMESPACE } });
    /** A RoleBinding in the team's namespace, named `<serviceAccount>-<role>`. */
    const binding = (serviceAccount: string, kind: "ClusterRole" | "Role", role: string) => ({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: `${serviceAccount}-${role}`, namespace: TEAM_NAMESPACE },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: role },
        subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace: TEAM_NAMESPACE }],
    });
    return [
        sa("builder"),
        sa("stranger"),
        binding("builder", "ClusterRole", "edit"),
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "Role",
            metadata: { name: "pod-creator", namespace: TEAM_NAMESPACE },
            rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["create", "get"] }],
        },
        binding("stranger", "Role", "pod-creator"),
    ];
}

function annotatedPod(name: string, serviceAccount: string): object {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: TEAM_NAMESPACE, annotations: { "subscription.openshift.io/inject-cluster-bundle": "cluster" } },
        spec: { serviceAccountName: serviceAccount, containers: [{ name: "build", image: "registry.invalid/builder:1" }] },
    };
}

/** GET /readyz on every pod IP of the Deployment, as the API server would reach them; true when all answer 200. */
async function allPodsReady(ca: Buffer): Promise<boolean> {
    const pods = (JSON.parse(kubectl(["get", "pods", "-n", NAMESPACE, "-o", "json"])) as KubeObject).items as KubeObject[];
    const answers = await Promise.all(
        pods.map(
            (pod) =>
                new Promise<number>((resolve) => {
                    const request = https.get(
                        {
                            host: pod.status.podIP,
                            port: 9443,
                            path: "/readyz",
                            ca,
                            servername: `${SERVICE}.${NAMESPACE}.svc`,
                            timeout: 2000,
                        },
                        (response) => {
                            response.resume();
                            resolve(response.statusCode ?? 0);
                        },
                    );
                    request.on("error", () => resolve(0));
                    request.on("timeout", () => request.destroy());
                }),
        ),
    );
    return pods.length > 0 && answers.every((status) => status === 200);
}

beforeAll(async () => {
    requireBuild(REPO_ROOT);
    applyObjects([...preexistingObjects(), ...teamAccess()]);
    stack = new TestStack("webhook", fullStackConfig({ operators: [] }));
    const up = stack.up();
    if (up.status !== 0) {
        throw new Error(`pulumi up failed: ${explain(up)}`);
    }
    const dir = path.join(realEnv("REAL_WORK"), "webhook-pod");
    fs.mkdirSync(dir, { recursive: true });
    server = await runDeploymentContainer(NAMESPACE, DEPLOYMENT, dir);
    const secret = getObject("secret", `${DEPLOYMENT}-tls`, NAMESPACE);
    const ca = Buffer.from(secret?.data["ca.crt"], "base64");
    const deadline = Date.now() + 60_000;
    while (!(await allPodsReady(ca))) {
        if (Date.now() > deadline || server.process.exitCode !== null) {
            throw new Error(`the webhook server did not become ready at its pod IPs:\n${server.output()}`);
        }
        await new Promise((r) => setTimeout(r, 250));
    }
});

afterAll(async () => {
    kubectlRun(["delete", "pod", "with-access", "without-access", "-n", TEAM_NAMESPACE, "--ignore-not-found", "--wait=false"]);
    await server?.stop();
    stack?.destroy();
});

describe("the API server calls the subscription webhook", () => {
    test("3d GIVEN a service account bound to edit, which the ClusterBundle's role aggregates to WHEN it creates a pod asking for the ClusterBundle THEN the API server returns the pod with the Shared Resource CSI volumes and the entitlement mounts", () => {
        const created = kubectlRun(["create", "-f", "-", "-o", "json"], {
            input: JSON.stringify(annotatedPod("with-access", "builder")),
            as: `system:serviceaccount:${TEAM_NAMESPACE}:builder`,
        });
        // The webhook's admission warning reaches kubectl through the API server.
        expect({ status: created.status, stderr: created.stderr }).toEqual({
            status: 0,
            stderr: "Warning: entitlements come from 2 volumes, so each file is mounted on its own (subPath) and a changed Secret reaches this pod only when its containers restart\n",
        });
        const pod = JSON.parse(created.stdout) as KubeObject;
        const csi = (pod.spec.volumes as KubeObject[])
            .filter((v) => v.csi)
            .map((v) => [v.csi.driver, v.csi.readOnly, Object.keys(v.csi.volumeAttributes).sort()]);
        expect(csi).toEqual([
            [SHARED_RESOURCE_DRIVER, true, ["sharedSecret"]],
            [SHARED_RESOURCE_DRIVER, true, ["sharedConfigMap"]],
        ]);
        // The namespace's always-inject Bundle comes too, as the projected entitlement volume (beside the
        // token volume the API server's ServiceAccount admission adds, kube-api-access-*).
        expect(
            (pod.spec.volumes as KubeObject[]).filter((v) => v.projected && !v.name.startsWith("kube-api-access-")).map((v) => v.name),
        ).toEqual(["subscription-entitlements"]);
        // Two entitlement sources: each key its own file under the directory; the yum file beside it (docs/subscriptions.md, "What a pod gets", 6).
        const mountPaths = (pod.spec.containers[0].volumeMounts as KubeObject[])
            .map((m) => m.mountPath)
            .filter((p) => p.startsWith("/run/secrets/"));
        expect(mountPaths.sort()).toEqual([
            "/run/secrets/etc-pki-entitlement/cluster-entitlement-key.pem",
            "/run/secrets/etc-pki-entitlement/cluster-entitlement.pem",
            "/run/secrets/etc-pki-entitlement/team-entitlement-key.pem",
            "/run/secrets/etc-pki-entitlement/team-entitlement.pem",
            "/run/secrets/redhat.repo",
        ]);
        expect(pod.metadata.annotations["subscription.openshift.io/bundle-generations"]).toBeDefined();
    });

    test("3d GIVEN a service account that may create pods but not use the ClusterBundle's shares WHEN it creates the same pod THEN the API server refuses it with the webhook's message", () => {
        const refused = kubectlRun(["create", "-f", "-", "-o", "json"], {
            input: JSON.stringify(annotatedPod("without-access", "stranger")),
            as: `system:serviceaccount:${TEAM_NAMESPACE}:stranger`,
        });
        expect(refused.status).not.toBe(0);
        expect(refused.stderr).toContain(
            `Error from server (Forbidden): error when creating "STDIN": admission webhook "inject.subscription.openshift.io" denied the request: service account ${TEAM_NAMESPACE}/stranger may not use ClusterBundle "cluster": get clusterbundles/cluster not allowed`,
        );
        expect(getObject("pod", "without-access", TEAM_NAMESPACE)).toBeUndefined();
    });
});
