/**
 * Issue 37, black-box: the compiled servers (dist/webhook/main.js as admission server and as source
 * sync, configured with the environment the stack renders) against a stand-in API that authorizes
 * every request with the stack's rendered RBAC (ClusterRoles, Roles, bindings from the render of a
 * stack, Kubernetes' binding and aggregation rules: support/rbac-authorizer.ts) and the request
 * attributes the API server gives it (a list or watch selected by `metadata.name` carries the name).
 * Each process has its own token, so each is refused exactly what its service account may not do.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type Authority, createAuthority, issueServingPair, projectPair } from "../helpers/tls-signer";
import { FakeKubeApi, bundleObject, secret, type StoredObject } from "./support/fake-kube-api";
import { podCreateReview } from "./support/fixtures";
import { request } from "./support/https-client";
import { type RbacState, rbacAllows, rbacStateOf, requestAuthorizer } from "./support/rbac-authorizer";
import { freePort } from "./support/servers";
import { waitFor } from "./support/wait";
import { build } from "../../scripts/bench/webhook";
import { renderConfig, ROOT } from "../helpers/render";

const PLATFORM = "openshift-config-managed";
const SOURCES = "subscription-sources";
const COPY = `${PLATFORM}.etc-pki-entitlement`;
const USERS = {
    webhook: "system:serviceaccount:subscription-injection:subscription-injection-webhook",
    sync: "system:serviceaccount:subscription-injection:subscription-source-sync",
};
const b64 = (text: string) => Buffer.from(text).toString("base64");
const ASK_CLUSTER = { "subscription.openshift.io/inject-cluster-bundle": "cluster" };

interface Process {
    child: ChildProcess;
    output: () => string;
    exited: Promise<number | null>;
}

function start(env: Record<string, string>): Process {
    const child = spawn(process.execPath, ["dist/webhook/main.js"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", ...env },
        stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (chunk) => (output += chunk));
    child.stderr?.on("data", (chunk) => (output += chunk));
    return { child, output: () => output, exited: new Promise((resolve) => child.on("exit", resolve)) };
}

async function stop(process: Process | undefined): Promise<void> {
    if (!process) return;
    if (process.child.exitCode === null) process.child.kill("SIGTERM");
    await process.exited;
}

/** The container env of a rendered Deployment. */
function envOf(manifests: Record<string, unknown>[], deployment: string): Record<string, string> {
    const found = manifests.find((m) => m.kind === "Deployment" && (m.metadata as { name: string }).name === deployment) as {
        spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
    };
    return Object.fromEntries(found.spec.template.spec.containers[0].env.map((e) => [e.name, e.value]));
}

function pod(namespace: string, annotations: Record<string, string>, spec: Record<string, unknown> = {}) {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { generateName: "app-", namespace, annotations },
        spec: { serviceAccountName: "builder", containers: [{ name: "app", image: "ubi9" }], ...spec },
    };
}

describe("the compiled servers against a stand-in API enforcing the stack's rendered RBAC (issue 37)", () => {
    let dir: string;
    let authority: Authority;
    let api: FakeKubeApi;
    let manifests: Record<string, unknown>[];
    let rbac: RbacState;
    let webhook: Process | undefined;
    let sync: Process | undefined;
    let port: number;

    /** A team namespace's objects: its Bundle on the conventional Secret, and `builder` bound to edit. */
    const teamRbac: RbacState = { clusterRoles: [], roleBindings: [] };

    const admit = async (uid: string, namespace: string, object: unknown, extra: Record<string, unknown> = {}) => {
        const reply = await request({ port, ca: authority.cert, body: JSON.stringify(podCreateReview(uid, namespace, object, extra)) });
        return { status: reply.status, body: JSON.parse(reply.body) as { response: Record<string, unknown> } };
    };
    const patchOf = (response: Record<string, unknown>) =>
        response.patch
            ? (JSON.parse(Buffer.from(response.patch as string, "base64").toString()) as { path: string; value: unknown }[])
            : [];

    beforeAll(async () => {
        build();
        const rendered = await renderConfig({
            cluster: { name: "black-box", platform: "openshift", renderYamlToDirectory: "out/black-box" },
            subscriptions: {
                enabled: true,
                webhook: { image: "quay.io/acme/subscription-webhook:1.0" },
                clusterBundles: [
                    {
                        name: "cluster",
                        entitlements: [{ name: "etc-pki-entitlement", namespace: PLATFORM }],
                        aggregateToClusterRoles: ["edit"],
                    },
                ],
                bundles: [{ name: "team", namespace: "team-a", alwaysInject: true, entitlements: [{ name: "etc-pki-entitlement" }] }],
            },
        });
        expect(rendered.errors).toEqual([]);
        manifests = rendered.manifests.map((m) => m.object);
        rbac = rbacStateOf(manifests);
        authority = await createAuthority();
        dir = fs.mkdtempSync(path.join(os.tmpdir(), "least-privilege-"));
        projectPair(path.join(dir, "certs"), await issueServingPair(authority, "0f01"), 1);
        api = new FakeKubeApi();
        await api.start();
        api.users.set("webhook-token", USERS.webhook);
        api.users.set("sync-token", USERS.sync);
        api.authorizeRequest = requestAuthorizer(() => ({
            ...rbac,
            clusterRoles: [...rbac.clusterRoles, ...teamRbac.clusterRoles],
            roles: [...(rbac.roles ?? []), ...(teamRbac.roles ?? [])],
            roleBindings: [...(rbac.roleBindings ?? []), ...(teamRbac.roleBindings ?? [])],
        }));
        api.authorize = (spec) =>
            rbacAllows({ ...rbac, roleBindings: [...(rbac.roleBindings ?? []), ...(teamRbac.roleBindings ?? [])] }, spec);
        // What the cluster holds: OpenShift's entitlement beside the control plane's keys, the shares the stack declares.
        api.put(secret(PLATFORM, "etc-pki-entitlement", { "entitlement.pem": b64("SCA-1"), "entitlement-key.pem": b64("KEY-1") }));
        api.put(secret(PLATFORM, "kube-scheduler-client-cert-key", { "tls.key": b64("CONTROL-PLANE") }));
        api.put(secret("team-a", "etc-pki-entitlement", { "team.pem": b64("TEAM") }));
        api.put(secret("team-a", "database", { password: b64("DB") }));
        for (const manifest of manifests.filter((m) => ["SharedSecret", "ClusterBundle", "Bundle"].includes(String(m.kind)))) {
            api.put(manifest as StoredObject);
        }
        teamRbac.roleBindings!.push({
            metadata: { name: "builder-edit", namespace: "team-a" },
            roleRef: { kind: "ClusterRole", name: "edit" },
            subjects: [{ kind: "ServiceAccount", name: "builder", namespace: "team-a" }],
        });
        const kubeconfig = (token: string) => {
            const file = path.join(dir, `kubeconfig-${token}`);
            fs.writeFileSync(file, api.kubeconfigText(token));
            return file;
        };
        port = await freePort();
        sync = start({
            ...envOf(manifests, "subscription-source-sync"),
            SOURCE_SYNC_PORT: String(await freePort()),
            KUBECONFIG: kubeconfig("sync-token"),
        });
        webhook = start({
            ...envOf(manifests, "subscription-injection-webhook"),
            KUBECONFIG: kubeconfig("webhook-token"),
            WEBHOOK_BIND_ADDRESS: "127.0.0.1",
            WEBHOOK_PORT: String(port),
            WEBHOOK_TLS_CERT_FILE: path.join(dir, "certs", "tls.crt"),
            WEBHOOK_TLS_KEY_FILE: path.join(dir, "certs", "tls.key"),
            WEBHOOK_SHUTDOWN_DELAY_SECONDS: "0",
            WEBHOOK_BY_NAME_TTL_SECONDS: "1",
        });
        await waitFor(() => api.get("Secret", SOURCES, COPY) !== undefined, `the copy (sync output:\n${sync?.output()})`, 60_000);
        await waitFor(
            async () => (await request({ port, ca: authority.cert, path: "/readyz" }).catch(() => ({ status: 0 }))).status === 200,
            "readiness",
            60_000,
        );
    }, 300_000);

    afterAll(async () => {
        await stop(webhook);
        await stop(sync);
        await api?.stop();
        if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test("point 1 GIVEN OpenShift's entitlement shared by a ClusterBundle WHEN the sync runs THEN it writes a copy owned by the share, and neither process reads anything of openshift-config-managed but that Secret, by name", () => {
        const copy = api.get("Secret", SOURCES, COPY) as StoredObject & { data: Record<string, string> };
        const share = manifests.find((m) => m.kind === "SharedSecret") as { metadata: { name: string }; spec: { secretRef: unknown } };
        expect(share.spec.secretRef).toEqual({ name: COPY, namespace: SOURCES });
        expect(copy.data).toEqual({ "entitlement.pem": b64("SCA-1"), "entitlement-key.pem": b64("KEY-1") });
        expect(copy.metadata.ownerReferences).toEqual([
            {
                apiVersion: "sharedresource.openshift.io/v1alpha1",
                kind: "SharedSecret",
                name: share.metadata.name,
                uid: api.get("SharedSecret", undefined, share.metadata.name)?.metadata.uid,
            },
        ]);
        const platformRequests = api.requests.filter(
            (r) => r.path.startsWith(`/api/v1/namespaces/${PLATFORM}/`) || r.path === "/api/v1/secrets",
        );
        expect(platformRequests.length).toBeGreaterThan(0);
        for (const r of platformRequests) {
            const byName = r.path.endsWith("/secrets/etc-pki-entitlement") || r.query.fieldSelector === "metadata.name=etc-pki-entitlement";
            expect({ user: r.user, path: r.path, selector: r.query.fieldSelector, byName }).toMatchObject({ byName: true });
        }
        expect(api.requests.some((r) => r.user === USERS.webhook && r.path.startsWith(`/api/v1/namespaces/${PLATFORM}/`))).toBe(false);
    });

    test("point 1 GIVEN the copy WHEN a pod asks for the ClusterBundle THEN the webhook reads the copy's keys (listing only the source namespace), and a rotation of the original reaches the next pod", async () => {
        const first = await admit("p1", "team-a", pod("team-a", { ...ASK_CLUSTER, "subscription.openshift.io/deny-bundles": "*" }));
        expect(first.body.response).toMatchObject({ allowed: true, status: { message: "injected ClusterBundle cluster" } });
        api.put(
            secret(PLATFORM, "etc-pki-entitlement", {
                "entitlement.pem": b64("SCA-2"),
                "entitlement-key.pem": b64("KEY-2"),
                "rotated.pem": b64("NEW"),
            }),
        );
        await waitFor(
            () => (api.get("Secret", SOURCES, COPY) as unknown as { data: Record<string, string> }).data["rotated.pem"] === b64("NEW"),
            "the rotation copied",
        );
        // Two sources (the namespace's always-inject Bundle and the ClusterBundle): one file per key.
        const after = await admit("p2", "team-a", pod("team-a", ASK_CLUSTER));
        const mounts = patchOf(after.body.response).find((op) => op.path === "/spec/containers/0/volumeMounts")?.value as {
            mountPath: string;
        }[];
        expect(mounts.map((m) => m.mountPath).sort()).toEqual([
            "/run/secrets/etc-pki-entitlement/entitlement-key.pem",
            "/run/secrets/etc-pki-entitlement/entitlement.pem",
            "/run/secrets/etc-pki-entitlement/rotated.pem",
            "/run/secrets/etc-pki-entitlement/team.pem",
        ]);
    });

    test("point 2 GIVEN 300 teams' Bundles on etc-pki-entitlement and one on another name WHEN their pods are admitted THEN open watches do not change, every conventional one is injected, the other name is denied naming the permission until the team grants get, then injected", async () => {
        const watchesBefore = api.openWatches().sort();
        for (let i = 0; i < 300; i++) {
            api.put(secret(`team-${i}`, "etc-pki-entitlement", { [`t${i}.pem`]: b64("T") }));
            api.put(bundleObject(`team-${i}`, "own", { entitlements: [{ name: "etc-pki-entitlement" }] }));
        }
        api.put(secret("team-odd", "odd-entitlement", { "odd.pem": b64("O") }));
        api.put(bundleObject("team-odd", "own", { entitlements: [{ name: "odd-entitlement" }] }));
        await waitFor(
            async () =>
                (await admit("w", "team-299", pod("team-299", { "subscription.openshift.io/inject-bundle": "own" }))).body.response
                    .allowed === true,
            "the last team's Bundle",
        );
        const results = await Promise.all(
            Array.from({ length: 300 }, (_, i) =>
                admit(`t${i}`, `team-${i}`, pod(`team-${i}`, { "subscription.openshift.io/inject-bundle": "own" })),
            ),
        );
        expect(results.filter((r) => r.body.response.allowed !== true)).toEqual([]);
        expect(api.openWatches().sort()).toEqual(watchesBefore);
        const odd = () => admit("odd", "team-odd", pod("team-odd", { "subscription.openshift.io/inject-bundle": "own" }));
        expect((await odd()).body.response).toMatchObject({
            allowed: false,
            status: {
                code: 403,
                message:
                    'Bundle "own" references Secret team-odd/odd-entitlement: the webhook may not read secrets team-odd/odd-entitlement (its service account needs get on secrets named "odd-entitlement" in namespace team-odd: a Role with resourceNames) (grant it with a Role and RoleBinding for the webhook\'s service account: docs/subscriptions.md, "Teams\' own Bundles")',
            },
        });
        // The documented remedy: a Role with get on that name, bound to the webhook's service account.
        teamRbac.roles = [
            {
                metadata: { name: "keys", namespace: "team-odd" },
                rules: [{ apiGroups: [""], resources: ["secrets"], resourceNames: ["odd-entitlement"], verbs: ["get"] }],
            },
        ];
        teamRbac.roleBindings!.push({
            metadata: { name: "keys", namespace: "team-odd" },
            roleRef: { kind: "Role", name: "keys" },
            subjects: [{ kind: "ServiceAccount", name: "subscription-injection-webhook", namespace: "subscription-injection" }],
        });
        await waitFor(
            async () => (await odd()).body.response.allowed === true,
            "the grant to take effect (within the by-name TTL)",
            20_000,
        );
        expect(api.openWatches().sort()).toEqual(watchesBefore);
    }, 120_000);

    test("point 3 GIVEN a pod that asked for nothing mounting its own SharedSecret at the entitlement path WHEN the namespace has an always-inject Bundle THEN it is admitted unchanged with a warning and counted in /metrics; a mirror pod is left alone; only new ephemeral containers are patched", async () => {
        const own = pod(
            "team-a",
            {},
            {
                containers: [
                    { name: "app", image: "ubi9", volumeMounts: [{ name: "own", mountPath: "/run/secrets/etc-pki-entitlement" }] },
                ],
                volumes: [{ name: "own", csi: { driver: "csi.sharedresource.openshift.io", volumeAttributes: { sharedSecret: "mine" } } }],
            },
        );
        const plain = await admit("own", "team-a", own);
        expect(plain.body.response).toMatchObject({
            allowed: true,
            warnings: [
                'always-inject Bundle "team" not injected: containers already mount where subscription content goes: containers "app": volume "own" at "/run/secrets/etc-pki-entitlement" collides with /run/secrets/etc-pki-entitlement',
            ],
        });
        expect(plain.body.response.patch).toBeUndefined();
        const metrics = (await request({ port, ca: authority.cert, path: "/metrics" })).body;
        expect(metrics).toContain('subscription_webhook_always_inject_skipped_total{kind="Bundle",reason="MountConflict"} 1');

        const mirror = await admit("mirror", "team-a", pod("team-a", { ...ASK_CLUSTER, "kubernetes.io/config.mirror": "abc" }));
        expect(mirror.body.response).toMatchObject({ allowed: true });
        expect(mirror.body.response.patch).toBeUndefined();
        expect(mirror.body.response.warnings).toEqual([expect.stringContaining("the pod is a mirror pod (kubernetes.io/config.mirror)")]);

        const injected = {
            ...pod("team-a", {}),
            spec: {
                ...pod("team-a", {}).spec,
                containers: [
                    {
                        name: "app",
                        volumeMounts: [
                            { name: "subscription-entitlements", mountPath: "/run/secrets/etc-pki-entitlement", readOnly: true },
                        ],
                    },
                ],
                volumes: [{ name: "subscription-entitlements", projected: { sources: [{ secret: { name: "etc-pki-entitlement" } }] } }],
            },
        };
        const before = { ...injected, spec: { ...injected.spec, ephemeralContainers: [{ name: "earlier" }] } };
        const after = { ...injected, spec: { ...injected.spec, ephemeralContainers: [{ name: "earlier" }, { name: "later" }] } };
        const update = await admit("eph", "team-a", after, { operation: "UPDATE", subResource: "ephemeralcontainers", oldObject: before });
        expect(patchOf(update.body.response)).toEqual([
            {
                op: "add",
                path: "/spec/ephemeralContainers/1/volumeMounts",
                value: [{ name: "subscription-entitlements", mountPath: "/run/secrets/etc-pki-entitlement", readOnly: true }],
            },
        ]);
    });

    test("point 4 GIVEN the ClusterBundle deleted while the sync still keeps its copy (a share kept for running pods) WHEN a new pod asks for it THEN it is refused as not found, while a rotation still reaches the copy", async () => {
        api.remove("ClusterBundle", undefined, "cluster");
        await waitFor(
            async () => (await admit("gone", "team-a", pod("team-a", ASK_CLUSTER))).body.response.allowed === false,
            "the bundle to go",
        );
        expect((await admit("gone2", "team-a", pod("team-a", ASK_CLUSTER))).body.response).toMatchObject({
            allowed: false,
            status: {
                code: 404,
                message: 'ClusterBundle "cluster" (annotation subscription.openshift.io/inject-cluster-bundle) not found',
            },
        });
        api.put(secret(PLATFORM, "etc-pki-entitlement", { "entitlement.pem": b64("SCA-3"), "entitlement-key.pem": b64("KEY-3") }));
        await waitFor(
            () =>
                (api.get("Secret", SOURCES, COPY) as unknown as { data: Record<string, string> }).data["entitlement.pem"] === b64("SCA-3"),
            "the copy to follow",
        );
    });
});
