/**
 * The API server calls the subscription webhook (issue 25, 3d): the server the stack built into
 * its image runs as one of its Deployment's pods would (helpers/pod-runtime.ts, kept running by
 * helpers/subscription-webhook.ts), at the pod IPs kwok gave, and `kubectl create` of a pod goes
 * through the real admission chain: the API server resolves the webhook Service's endpoints
 * (aggregator routing), verifies the serving certificate against `<service>.<namespace>.svc` with
 * the caBundle the stack wrote, applies the JSON patch and validates the patched pod.
 */
import { applyObjects, getObject, kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { destroyStack } from "./helpers/destroy";
import { eventually } from "./helpers/eventually";
import {
    CONFIG_NAMESPACE,
    DRIVER,
    fullStackConfig,
    fullStackKept,
    preexistingObjects,
    requireBuild,
    TEAM_NAMESPACE,
} from "./helpers/fixtures";
import { runSubscriptionServers, type SubscriptionServers } from "./helpers/subscription-servers";
import { describe as explain, REPO_ROOT, TestStack } from "./helpers/stack";

const NAMESPACE = "subscription-injection";
const DEPLOYMENT = "subscription-injection-webhook";
const SHARED_RESOURCE_DRIVER = "csi.sharedresource.openshift.io";

/** A team namespace the stack config never names (issue 27 point 4). */
const OTHER_TEAM = "team-unlisted";
const WEBHOOK_SA = `system:serviceaccount:${NAMESPACE}:${DEPLOYMENT}`;

let stack: TestStack;
let servers: SubscriptionServers | undefined;

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

beforeAll(async () => {
    requireBuild(REPO_ROOT);
    applyObjects([...preexistingObjects(), ...teamAccess()]);
    stack = new TestStack("webhook", fullStackConfig({ operators: [] }));
    const up = stack.up();
    if (up.status !== 0) {
        throw new Error(`pulumi up failed: ${explain(up)}`);
    }
    servers = await runSubscriptionServers("webhook-pods");
});

afterAll(async () => {
    kubectlRun(["delete", "pod", "with-access", "without-access", "plain", "-n", TEAM_NAMESPACE, "--ignore-not-found", "--wait=false"]);
    kubectlRun(["delete", "namespace", OTHER_TEAM, "--ignore-not-found", "--wait=false"]);
    try {
        if (stack) {
            destroyStack(stack, fullStackKept({ operator: false }));
        }
    } finally {
        await servers?.stop();
    }
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

/** Replaces one field of a cluster-scoped object out of band (a JSON patch). */
function replaceAt(kind: string, name: string, pointer: string, value: unknown): void {
    kubectl(["patch", kind, name, "--type", "json", "-p", JSON.stringify([{ op: "replace", path: pointer, value }])]);
}

describe("issue 27 on the real API server", () => {
    test("1 GIVEN the stack's driver Role WHEN the API server authorizes the driver THEN it may list and watch Secrets in the source namespace (its refresh informer) and get the copy there, and read nothing in the original's namespace", () => {
        const can = (verb: string, resource: string, namespace: string) =>
            kubectlRun([
                "auth",
                "can-i",
                verb,
                resource,
                "-n",
                namespace,
                "--as",
                `system:serviceaccount:${DRIVER.namespace}:${DRIVER.name}`,
            ]).stdout.trim();
        expect([
            can("list", "secrets", "subscription-sources"),
            can("watch", "secrets", "subscription-sources"),
            can("get", `secrets/${CONFIG_NAMESPACE}.etc-pki-entitlement`, "subscription-sources"),
            can("list", "configmaps", "subscription-sources"),
        ]).toEqual(["yes", "yes", "yes", "yes"]);
        expect([
            can("get", "secrets/unrelated", "subscription-sources"),
            can("list", "secrets", CONFIG_NAMESPACE),
            can("get", "secrets/etc-pki-entitlement", CONFIG_NAMESPACE),
        ]).toEqual(["no", "no", "no"]);
    });

    test("4 GIVEN the webhook's resourceNames rule WHEN it lists and watches etc-pki-entitlement in an unlisted namespace THEN the name-field-selected requests are allowed and the unselected list is forbidden", () => {
        kubectl(["create", "namespace", OTHER_TEAM]);
        kubectl([
            "create",
            "secret",
            "generic",
            "etc-pki-entitlement",
            "-n",
            OTHER_TEAM,
            "--from-literal=own.pem=x",
            "--from-literal=own-key.pem=y",
        ]);
        const raw = (query: string) =>
            kubectlRun(["get", "--raw", `/api/v1/namespaces/${OTHER_TEAM}/secrets?${query}`, "--as", WEBHOOK_SA]);
        const selected = raw("fieldSelector=metadata.name%3Detc-pki-entitlement");
        expect(selected.status).toBe(0);
        expect(JSON.parse(selected.stdout).items.map((item: KubeObject) => item.metadata.name)).toEqual(["etc-pki-entitlement"]);
        expect(raw("fieldSelector=metadata.name%3Detc-pki-entitlement&watch=1&timeoutSeconds=1").status).toBe(0);
        const unselected = raw("limit=1");
        expect(unselected.status).not.toBe(0);
        expect(unselected.stderr).toContain("Forbidden");
    });

    test("4 GIVEN a team's own Bundle in a namespace the stack config never names WHEN a pod asks for it THEN the API server returns it injected", async () => {
        applyObjects([
            {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "own", namespace: OTHER_TEAM },
                spec: { entitlements: [{ name: "etc-pki-entitlement" }] },
            },
        ]);
        const pod = {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "own-bundle", namespace: OTHER_TEAM, annotations: { "subscription.openshift.io/inject-bundle": "own" } },
            spec: { containers: [{ name: "build", image: "registry.invalid/builder:1" }] },
        };
        const created = await eventually("the webhook learns of a new namespace's Bundle and Secret through its informers' watches", () => {
            const run = kubectlRun(["create", "-f", "-", "-o", "json"], { input: JSON.stringify(pod) });
            if (run.status === 0) {
                return JSON.parse(run.stdout) as KubeObject;
            }
            // Pending only while the webhook's caches have not seen the Bundle or its Secret yet.
            if (run.stderr.includes(`not found in namespace "${OTHER_TEAM}"`) || run.stderr.includes("referenced Secret not found")) {
                return undefined;
            }
            throw new Error(`the pod was refused with another answer: ${run.stderr.trim()}`);
        });
        expect((created.spec.volumes as KubeObject[]).find((v) => v.name === "subscription-entitlements")?.projected.sources).toEqual([
            { secret: { name: "etc-pki-entitlement" } },
        ]);
        expect(created.spec.containers[0].volumeMounts.map((m: KubeObject) => m.mountPath)).toContain("/run/secrets/etc-pki-entitlement");
    });

    test("4 GIVEN an always-inject Bundle whose Secret does not exist WHEN a plain pod is created THEN it is admitted with the webhook's warning, never refused", () => {
        applyObjects([
            {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "orphan", namespace: TEAM_NAMESPACE, labels: { "subscription.openshift.io/always-inject": "true" } },
                spec: { entitlements: [{ name: "deleted-entitlement" }] },
            },
        ]);
        try {
            const created = kubectlRun(["create", "-f", "-", "-o", "json"], {
                input: JSON.stringify({
                    apiVersion: "v1",
                    kind: "Pod",
                    metadata: { name: "plain", namespace: TEAM_NAMESPACE },
                    spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }] },
                }),
            });
            expect(created.status).toBe(0);
            // The stack lets the webhook read only the Secrets declared bundles name in team-a (by name), so of
            // another one it can say only that it may not read it; never a refusal of the pod.
            expect(created.stderr).toContain(
                `Warning: always-inject Bundle "orphan" not injected: Bundle "orphan" references Secret ${TEAM_NAMESPACE}/deleted-entitlement: the webhook may not read secrets ${TEAM_NAMESPACE}/deleted-entitlement (its service account needs get on secrets named "deleted-entitlement" in namespace ${TEAM_NAMESPACE}: a Role with resourceNames)`,
            );
            // The namespace's usable always-inject Bundle still comes.
            const pod = JSON.parse(created.stdout) as KubeObject;
            expect((pod.spec.volumes as KubeObject[]).map((v) => v.name)).toContain("subscription-entitlements");
        } finally {
            kubectlRun(["delete", "bundle.subscription.openshift.io", "orphan", "-n", TEAM_NAMESPACE, "--ignore-not-found"]);
        }
    });

    test("5 GIVEN a pod for Windows nodes and pods with a volume named like an injected one WHEN created in a namespace with an always-inject Bundle THEN the first is admitted unchanged with a warning, the one that asked for nothing admitted with a warning, the one that named the Bundle refused naming the volume", () => {
        const pod = (name: string, spec: object, annotations: Record<string, string> = {}) =>
            JSON.stringify({
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name, namespace: TEAM_NAMESPACE, annotations },
                spec: { containers: [{ name: "app", image: "registry.invalid/app:1" }], ...spec },
            });
        try {
            const windows = kubectlRun(["create", "-f", "-", "-o", "json"], {
                input: pod("windows", { nodeSelector: { "kubernetes.io/os": "windows" } }),
            });
            expect(windows.status).toBe(0);
            expect(windows.stderr).toContain(
                "Warning: subscription bundles not injected: the pod is for Windows nodes (nodeSelector kubernetes.io/os: windows)",
            );
            const volumes = (JSON.parse(windows.stdout) as KubeObject).spec.volumes as KubeObject[];
            expect(volumes.filter((v) => v.name.startsWith("subscription-"))).toEqual([]);
            const own = { volumes: [{ name: "subscription-entitlements", emptyDir: {} }] };
            const unasked = kubectlRun(["create", "-f", "-", "-o", "json"], { input: pod("reserved-plain", own) });
            expect(unasked.status).toBe(0);
            expect(unasked.stderr).toContain(
                'Warning: always-inject Bundle "subscription" not injected: the pod\'s volume "subscription-entitlements" has a name reserved for injected subscription volumes',
            );
            expect(
                (JSON.parse(unasked.stdout) as KubeObject).spec.volumes.find((v: KubeObject) => v.name === "subscription-entitlements"),
            ).toEqual({
                name: "subscription-entitlements",
                emptyDir: {},
            });
            const asked = kubectlRun(["create", "-f", "-"], {
                input: pod("reserved", own, { "subscription.openshift.io/inject-bundle": "subscription" }),
            });
            expect(asked.status).not.toBe(0);
            expect(asked.stderr).toContain(
                'admission webhook "inject.subscription.openshift.io" denied the request: the pod\'s volume "subscription-entitlements" has a name reserved for injected subscription volumes',
            );
        } finally {
            kubectlRun([
                "delete",
                "pod",
                "windows",
                "reserved",
                "reserved-plain",
                "-n",
                TEAM_NAMESPACE,
                "--ignore-not-found",
                "--wait=false",
            ]);
        }
    });

    test("3 GIVEN the webhook cannot review access (its SubjectAccessReview permission removed out of band) WHEN a pod needs a review THEN under failurePolicy Fail the API server refuses it as a failed call, and under Ignore admits it unpatched", async () => {
        const sa = (name: string) => ({ apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: TEAM_NAMESPACE } });
        applyObjects([sa("newcomer"), sa("latecomer")]);
        const role = getObject("clusterrole", DEPLOYMENT) as KubeObject;
        const withoutReviews = (role.rules as KubeObject[]).filter((rule) => !rule.resources.includes("subjectaccessreviews"));
        replaceAt("clusterrole", DEPLOYMENT, "/rules", withoutReviews);
        const configuration = "subscription-injection-webhook";
        try {
            await eventually("the API server's RBAC authorizer sees a changed ClusterRole through its informer", () =>
                kubectlRun(["auth", "can-i", "create", "subjectaccessreviews", "--as", WEBHOOK_SA]).stdout.trim() === "no"
                    ? true
                    : undefined,
            );
            const refused = kubectlRun(["create", "-f", "-"], { input: JSON.stringify(annotatedPod("refused-by-fail", "newcomer")) });
            expect(refused.status).not.toBe(0);
            // A failed call, not a denial: "failed calling webhook", with the webhook's Status message.
            expect(refused.stderr).toContain('Internal error occurred: failed calling webhook "inject.subscription.openshift.io"');
            expect(refused.stderr).toContain("could not review access of service account team-a/newcomer");
            expect(refused.stderr).not.toContain("denied the request");

            replaceAt("mutatingwebhookconfiguration", configuration, "/webhooks/0/failurePolicy", "Ignore");
            const admitted = await eventually(
                "the API server's admission plugin reads webhook configurations through an informer, so Fail holds for a moment after the change",
                () => {
                    const run = kubectlRun(["create", "-f", "-", "-o", "json"], {
                        input: JSON.stringify(annotatedPod("admitted-by-ignore", "latecomer")),
                    });
                    if (run.status === 0) {
                        return JSON.parse(run.stdout) as KubeObject;
                    }
                    if (run.stderr.includes('failed calling webhook "inject.subscription.openshift.io"')) {
                        return undefined;
                    }
                    throw new Error(`the pod was refused with another answer: ${run.stderr.trim()}`);
                },
            );
            const names = (admitted.spec.volumes as KubeObject[]).map((v) => v.name);
            expect(names.filter((name) => name.startsWith("subscription-"))).toEqual([]);
            expect(admitted.metadata.annotations["subscription.openshift.io/bundle-generations"]).toBeUndefined();
        } finally {
            replaceAt("clusterrole", DEPLOYMENT, "/rules", role.rules);
            replaceAt("mutatingwebhookconfiguration", configuration, "/webhooks/0/failurePolicy", "Fail");
            kubectlRun([
                "delete",
                "pod",
                "refused-by-fail",
                "admitted-by-ignore",
                "-n",
                TEAM_NAMESPACE,
                "--ignore-not-found",
                "--wait=false",
            ]);
        }
    });
});
