/**
 * Issue 37 on the real API server: who can read which Secret, and what running pods keep.
 *
 * A ClusterBundle shares OpenShift's entitlement where the Insights operator keeps it
 * (`openshift-config-managed/etc-pki-entitlement`), beside the control plane's client keys
 * (openshift/cluster-kube-apiserver-operator certrotationcontroller.go) and the router's
 * certificates. The webhook and the source sync run from the stack's image (helpers/pod-runtime.ts).
 * The API server decides: SubjectAccessReviews for every service account the stack creates or binds
 * give the exact Secrets each can read; the copy follows a rotation; ephemeral containers, mirror
 * pods and the name-selected list are judged by the API server itself; a pod admitted before its
 * ClusterBundle is removed keeps a share its service account may still use.
 */
import { AuthorizationV1Api, KubeConfig, type V1ResourceAttributes } from "@kubernetes/client-node";
import { applyObjects, getObject, kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { DRIVER, editServiceAccount, fullStackConfig, preexistingObjects, requireBuild } from "./helpers/fixtures";
import { runSubscriptionServers, type SubscriptionServers, SUBSCRIPTION_NAMESPACE } from "./helpers/subscription-servers";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const PLATFORM = "openshift-config-managed";
const TEAM = "subs-team";
const OTHER = "subs-other";
const SOURCES = "subscription-sources";
const COPY = `${PLATFORM}.etc-pki-entitlement`;
const SHARE = "cluster-entitlement-etc-pki-entitlement-"; // + fingerprint: read from the cluster
const SA = {
    webhook: `system:serviceaccount:${SUBSCRIPTION_NAMESPACE}:subscription-injection-webhook`,
    sync: `system:serviceaccount:${SUBSCRIPTION_NAMESPACE}:subscription-source-sync`,
    driver: `system:serviceaccount:${DRIVER.namespace}:${DRIVER.name}`,
    builder: `system:serviceaccount:${TEAM}:builder`,
};
const b64 = (text: string) => Buffer.from(text).toString("base64");

/** What the platform keeps in openshift-config-managed, and the teams' own Secrets. */
function platformObjects(): object[] {
    const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    const secret = (ns: string, name: string, data: Record<string, string>, type = "Opaque") => ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: ns },
        type,
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    });
    const tls = { "tls.crt": "CONTROL-PLANE-CERT", "tls.key": "CONTROL-PLANE-KEY" };
    return [
        namespace(PLATFORM),
        namespace(TEAM),
        namespace(OTHER),
        secret(PLATFORM, "etc-pki-entitlement", { "entitlement.pem": "SCA-CERT-1", "entitlement-key.pem": "SCA-KEY-1" }),
        secret(PLATFORM, "kube-scheduler-client-cert-key", tls, "kubernetes.io/tls"),
        secret(PLATFORM, "kube-controller-manager-client-cert-key", tls, "kubernetes.io/tls"),
        secret(PLATFORM, "router-certs", { apps: "ROUTER" }),
        secret(TEAM, "etc-pki-entitlement", { "team.pem": "TEAM-CERT" }),
        secret(TEAM, "team-database", { password: "TEAM-DB" }),
        secret(OTHER, "etc-pki-entitlement", { "other.pem": "OTHER-CERT" }),
        secret(OTHER, "other-database", { password: "OTHER-DB" }),
        ...editServiceAccount(TEAM, "builder"),
    ];
}

const clusterBundle = {
    name: "cluster",
    entitlements: [{ name: "etc-pki-entitlement", namespace: PLATFORM }],
    aggregateToClusterRoles: ["edit"],
};
function config(clusterBundles: object[]): Record<string, unknown> {
    const base = fullStackConfig({ operators: [] });
    const subscriptions = base.subscriptions as Record<string, unknown>;
    return {
        ...base,
        subscriptions: {
            ...subscriptions,
            clusterBundles,
            bundles: [{ name: "team", namespace: TEAM, entitlements: [{ name: "etc-pki-entitlement" }] }],
        },
    };
}

let stack: TestStack;
let servers: SubscriptionServers | undefined;
let authorization: AuthorizationV1Api;

/** Whether the API server lets `user` (a service account) do `verb` on the resource (RBAC's answer, through a SubjectAccessReview). */
async function allowed(user: string, attributes: V1ResourceAttributes): Promise<boolean> {
    const namespace = user.split(":")[2];
    const { body } = await authorization.createSubjectAccessReview({
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
            user,
            groups: ["system:serviceaccounts", `system:serviceaccounts:${namespace}`, "system:authenticated"],
            resourceAttributes: attributes,
        },
    });
    return body.status?.allowed === true;
}

/**
 * Every Secret of the cluster `user` can read some way: get it, or list or watch it (namespace-wide,
 * or selected by its name, which the API server authorizes with the name).
 */
async function readableSecrets(user: string, secrets: readonly { namespace: string; name: string }[]): Promise<string[]> {
    const readable = await Promise.all(
        secrets.map(async ({ namespace, name }) => {
            const ways = await Promise.all(
                [{ verb: "get", name }, { verb: "list" }, { verb: "watch" }, { verb: "list", name }, { verb: "watch", name }].map((way) =>
                    allowed(user, { namespace, resource: "secrets", ...way }),
                ),
            );
            return ways.some(Boolean) ? `${namespace}/${name}` : undefined;
        }),
    );
    return readable.filter((secret): secret is string => secret !== undefined).sort();
}

function allSecrets(): { namespace: string; name: string }[] {
    return (JSON.parse(kubectl(["get", "secrets", "-A", "-o", "json"])).items as KubeObject[]).map((s) => ({
        namespace: s.metadata.namespace,
        name: s.metadata.name,
    }));
}

function shareName(): string {
    const shares = (JSON.parse(kubectl(["get", "sharedsecrets.sharedresource.openshift.io", "-o", "json"])).items as KubeObject[]).map(
        (s) => s.metadata.name as string,
    );
    const share = shares.find((name) => name.startsWith(SHARE));
    if (!share) throw new Error(`no share ${SHARE}*: ${shares.join(", ")}`);
    return share;
}

async function eventually<T>(attempt: () => T | undefined | Promise<T | undefined>, what: string, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
        const value = await attempt();
        if (value !== undefined) return value;
        if (Date.now() > deadline) throw new Error(`${what} did not happen in time`);
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
}

function pod(name: string, annotations: Record<string, string>, extra: object = {}): string {
    return JSON.stringify({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: TEAM, annotations },
        spec: { serviceAccountName: "builder", containers: [{ name: "build", image: "registry.invalid/builder:1" }], ...extra },
    });
}

const ASK_CLUSTER = { "subscription.openshift.io/inject-cluster-bundle": "cluster" };

beforeAll(async () => {
    requireBuild(REPO_ROOT);
    applyObjects([...preexistingObjects(), ...platformObjects()]);
    const admin = new KubeConfig();
    admin.loadFromFile(realEnv("REAL_KUBECONFIG"));
    authorization = admin.makeApiClient(AuthorizationV1Api);
    stack = new TestStack("subscriptions-access", config([clusterBundle]));
    const up = stack.up();
    if (up.status !== 0) throw new Error(`pulumi up failed: ${explain(up)}`);
    servers = await runSubscriptionServers("subscriptions-access-pods");
});

afterAll(async () => {
    kubectlRun(["delete", "pod", "--all", "-n", TEAM, "--wait=false"]);
    await servers?.stop();
    stack?.destroy();
});

describe("issue 37 point 1: no component reads a Secret it does not share", () => {
    test("GIVEN the stack's service accounts WHEN the API server is asked, Secret by Secret, whether each may get, list or watch it THEN the driver reads only the copy, the sync only the original and its copy, the webhook only etc-pki-entitlement Secrets by name and the source namespace; none a control-plane key", async () => {
        const secrets = allSecrets();
        const named = secrets.filter((s) => s.name === "etc-pki-entitlement").map((s) => `${s.namespace}/${s.name}`);
        const inSources = secrets.filter((s) => s.namespace === SOURCES).map((s) => `${s.namespace}/${s.name}`);
        expect(inSources).toEqual([`${SOURCES}/${COPY}`]);
        expect(await readableSecrets(SA.driver, secrets)).toEqual([`${SOURCES}/${COPY}`]);
        expect(await readableSecrets(SA.sync, secrets)).toEqual([`${PLATFORM}/etc-pki-entitlement`, `${SOURCES}/${COPY}`]);
        expect(await readableSecrets(SA.webhook, secrets)).toEqual([...new Set([...named, ...inSources])].sort());
        // The platform's keys, by name, for no one.
        for (const user of [SA.driver, SA.sync, SA.webhook]) {
            for (const name of ["kube-scheduler-client-cert-key", "kube-controller-manager-client-cert-key", "router-certs"]) {
                expect(await allowed(user, { namespace: PLATFORM, resource: "secrets", verb: "get", name })).toBe(false);
            }
        }
    });

    test("GIVEN the webhook's ClusterRole WHEN it lists and watches Secrets cluster-wide selected by metadata.name=etc-pki-entitlement THEN the API server allows both and forbids the unselected list", () => {
        const raw = (query: string) => kubectlRun(["get", "--raw", `/api/v1/secrets?${query}`, "--as", SA.webhook]);
        const selected = raw("fieldSelector=metadata.name%3Detc-pki-entitlement");
        expect(selected.status).toBe(0);
        expect((JSON.parse(selected.stdout).items as KubeObject[]).map((s) => s.metadata.namespace).sort()).toEqual(
            allSecrets()
                .filter((s) => s.name === "etc-pki-entitlement")
                .map((s) => s.namespace)
                .sort(),
        );
        expect(raw("fieldSelector=metadata.name%3Detc-pki-entitlement&watch=1&timeoutSeconds=1").status).toBe(0);
        const unselected = raw("limit=1");
        expect([unselected.status !== 0, unselected.stderr]).toEqual([
            true,
            expect.stringContaining(`cannot list resource "secrets" in API group "" at the cluster scope`),
        ]);
    });

    test("GIVEN OpenShift's entitlement rotated (new values and a new key) WHEN the sync has copied it THEN the driver reads the new bytes from the copy and a new pod gets the new key's mount", async () => {
        kubectl([
            "patch",
            "secret",
            "etc-pki-entitlement",
            "-n",
            PLATFORM,
            "--type",
            "merge",
            "-p",
            JSON.stringify({
                data: { "entitlement.pem": b64("SCA-CERT-2"), "entitlement-key.pem": b64("SCA-KEY-2"), "rotated.pem": b64("SCA-EXTRA-2") },
            }),
        ]);
        const copy = await eventually(() => {
            const read = kubectlRun(["get", "secret", COPY, "-n", SOURCES, "-o", "json"], { as: SA.driver });
            const data = read.status === 0 ? (JSON.parse(read.stdout).data as Record<string, string>) : {};
            return data["rotated.pem"] ? data : undefined;
        }, "the copy following the rotation");
        expect(Object.fromEntries(Object.entries(copy).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]))).toEqual({
            "entitlement.pem": "SCA-CERT-2",
            "entitlement-key.pem": "SCA-KEY-2",
            "rotated.pem": "SCA-EXTRA-2",
        });
        // The namespace's Bundle and the ClusterBundle: two sources, so each key its own file.
        const created = await eventually(() => {
            const run = kubectlRun(["create", "-f", "-", "-o", "json"], {
                input: pod("after-rotation", { ...ASK_CLUSTER, "subscription.openshift.io/inject-bundle": "team" }),
                as: SA.builder,
            });
            const mounts = run.status === 0 ? ((JSON.parse(run.stdout) as KubeObject).spec.containers[0].volumeMounts as KubeObject[]) : [];
            if (run.status === 0 && !mounts.some((m) => m.mountPath.endsWith("/rotated.pem")))
                kubectl(["delete", "pod", "after-rotation", "-n", TEAM]);
            return mounts.some((m) => m.mountPath.endsWith("/rotated.pem")) ? mounts : undefined;
        }, "a pod getting the rotated key");
        // Gone before point 4, whose pod must be the only one mounting the share.
        kubectl(["delete", "pod", "after-rotation", "-n", TEAM, "--grace-period=0", "--force"]);
        expect(
            created
                .map((m) => m.mountPath)
                .filter((p: string) => p.startsWith("/run/secrets/etc-pki-entitlement/"))
                .sort(),
        ).toEqual([
            "/run/secrets/etc-pki-entitlement/entitlement-key.pem",
            "/run/secrets/etc-pki-entitlement/entitlement.pem",
            "/run/secrets/etc-pki-entitlement/rotated.pem",
            "/run/secrets/etc-pki-entitlement/team.pem",
        ]);
    });
});

describe("issue 37 point 3: what the API server decides", () => {
    test("GIVEN a mirror pod WHEN it asks for the ClusterBundle, or only the namespace's always-inject Bundle would apply THEN both are created unchanged (the ServiceAccount plugin refuses a mirror pod that references Secrets), the first with the webhook's warning", () => {
        const mirror = (name: string, annotations: Record<string, string>) =>
            JSON.stringify({
                apiVersion: "v1",
                kind: "Pod",
                metadata: { name, namespace: TEAM, annotations: { "kubernetes.io/config.mirror": "static-hash", ...annotations } },
                spec: { nodeName: "kwok-node-0", containers: [{ name: "static", image: "registry.invalid/static:1" }] },
            });
        applyObjects([
            {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "everywhere", namespace: TEAM, labels: { "subscription.openshift.io/always-inject": "true" } },
                spec: { entitlements: [{ name: "etc-pki-entitlement" }] },
            },
        ]);
        try {
            const asked = kubectlRun(["create", "-f", "-", "-o", "json"], { input: mirror("mirror-asked", ASK_CLUSTER) });
            expect([asked.status, asked.stderr]).toEqual([
                0,
                "Warning: subscription bundles not injected: the pod is a mirror pod (kubernetes.io/config.mirror), whose volumes come from its static pod's manifest on the node, and the ServiceAccount admission plugin refuses mirror pods that reference Secrets; mount entitlements in the static pod's manifest instead\n",
            ]);
            expect((JSON.parse(asked.stdout) as KubeObject).spec.volumes ?? []).toEqual([]);
            const plain = kubectlRun(["create", "-f", "-", "-o", "json"], { input: mirror("mirror-plain", {}) });
            expect([plain.status, plain.stderr, (JSON.parse(plain.stdout) as KubeObject).spec.volumes ?? []]).toEqual([0, "", []]);
            // What injecting would have met: the API server's own refusal.
            const injected = kubectlRun(["create", "-f", "-"], {
                input: JSON.stringify({
                    ...JSON.parse(mirror("mirror-injected", {})),
                    spec: {
                        nodeName: "kwok-node-0",
                        containers: [{ name: "static", image: "registry.invalid/static:1" }],
                        volumes: [
                            { name: "subscription-entitlements", projected: { sources: [{ secret: { name: "etc-pki-entitlement" } }] } },
                        ],
                    },
                }),
            });
            expect(injected.stderr).toContain("a mirror pod may not reference secrets");
        } finally {
            kubectlRun(["delete", "bundle.subscription.openshift.io", "everywhere", "-n", TEAM, "--ignore-not-found"]);
        }
    });

    test("GIVEN an injected pod with an earlier ephemeral container that lacks the mounts WHEN another is added through pods/ephemeralcontainers THEN the API server accepts the webhook's patch: only the new one gets the mount", () => {
        const created = kubectlRun(["create", "-f", "-", "-o", "json"], {
            input: pod("debugged", { "subscription.openshift.io/inject-bundle": "team" }),
        });
        expect(created.status).toBe(0);
        const addEphemeral = (name: string) =>
            kubectlRun([
                "patch",
                "pod",
                "debugged",
                "-n",
                TEAM,
                "--subresource",
                "ephemeralcontainers",
                "--type",
                "strategic",
                "-o",
                "json",
                "-p",
                JSON.stringify({
                    spec: { ephemeralContainers: [{ name, image: "registry.invalid/debug:1", targetContainerName: "build" }] },
                }),
            ]);
        // The earlier one arrives while the webhook does not see ephemeral containers (its rule removed out of band).
        const configuration = getObject("mutatingwebhookconfiguration", "subscription-injection-webhook") as KubeObject;
        const rules = configuration.webhooks[0].rules as KubeObject[];
        const replaceRules = (value: unknown) =>
            kubectl([
                "patch",
                "mutatingwebhookconfiguration",
                "subscription-injection-webhook",
                "--type",
                "json",
                "-p",
                JSON.stringify([{ op: "replace", path: "/webhooks/0/rules", value }]),
            ]);
        replaceRules(rules.filter((rule) => !rule.resources.includes("pods/ephemeralcontainers")));
        try {
            expect(addEphemeral("earlier").status).toBe(0);
        } finally {
            replaceRules(rules);
        }
        const added = kubectlRun(["get", "pod", "debugged", "-n", TEAM, "-o", "json"]);
        expect(added.status).toBe(0);
        const later = addEphemeral("later");
        expect([later.status, later.stderr]).toEqual([0, ""]);
        const ephemeral = (JSON.parse(later.stdout) as KubeObject).spec.ephemeralContainers as KubeObject[];
        // The strategic merge puts the new container first; the webhook patched it by its index there.
        expect(
            ephemeral.map((c) => [c.name, (c.volumeMounts ?? []).map((m: KubeObject) => m.mountPath)]).sort(([a], [b]) => (a < b ? -1 : 1)),
        ).toEqual([
            ["earlier", []],
            ["later", ["/run/secrets/etc-pki-entitlement"]],
        ]);
    });
});

describe("issue 37 point 4: running pods keep their entitlements", () => {
    test("GIVEN a pod admitted with the ClusterBundle WHEN an update removes the ClusterBundle THEN its share, its copy and the service account's use stay, the driver may still read the copy, new pods are refused; the update after the pod ends deletes them", async () => {
        const created = kubectlRun(["create", "-f", "-", "-o", "json"], { input: pod("admitted-before", ASK_CLUSTER), as: SA.builder });
        expect(created.status).toBe(0);
        const share = shareName();
        const mayUse = (name: string) =>
            allowed(SA.builder, { namespace: TEAM, group: "sharedresource.openshift.io", resource: "sharedsecrets", verb: "use", name });
        expect(
            (JSON.parse(created.stdout) as KubeObject).spec.volumes.map((v: KubeObject) => v.csi?.volumeAttributes?.sharedSecret),
        ).toContain(share);

        stack.setConfig(config([]));
        const removed = stack.up();
        expect(removed.status).toBe(0);
        expect(removed.stdout + removed.stderr).toContain(
            `share "${share}" is kept while running pods mount it ("${TEAM}/admitted-before")`,
        );
        expect(getObject("clusterbundle.subscription.openshift.io", "cluster")).toBeUndefined();
        expect(getObject("sharedsecret.sharedresource.openshift.io", share)?.spec.secretRef).toEqual({ name: COPY, namespace: SOURCES });
        expect(getObject("secret", COPY, SOURCES)).toBeDefined();
        // The driver checks exactly this before mounting and whenever the share or its source changes.
        expect(await mayUse(share)).toBe(true);
        expect(await allowed(SA.driver, { namespace: SOURCES, resource: "secrets", verb: "get", name: COPY })).toBe(true);
        const refused = kubectlRun(["create", "-f", "-"], { input: pod("admitted-after", ASK_CLUSTER), as: SA.builder });
        expect(refused.stderr).toContain('ClusterBundle "cluster" (annotation subscription.openshift.io/inject-cluster-bundle) not found');

        kubectl(["delete", "pod", "admitted-before", "-n", TEAM, "--grace-period=0", "--force"]);
        await eventually(() => (getObject("pod", "admitted-before", TEAM) ? undefined : true), "the pod to go");
        const ended = stack.up();
        expect(ended.status).toBe(0);
        expect(getObject("sharedsecret.sharedresource.openshift.io", share)).toBeUndefined();
        expect(getObject("clusterrole", "cluster-subscription-bundle")).toBeUndefined();
        // The copy goes with its last share (its owner), by Kubernetes' garbage collector.
        await eventually(() => (getObject("secret", COPY, SOURCES) ? undefined : true), "the copy to be garbage-collected", 120_000);
        expect(await mayUse(share)).toBe(false);
    });
});
