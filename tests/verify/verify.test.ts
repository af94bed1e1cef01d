/**
 * `npm run verify`'s logic (scripts/verify/) over a stand-in cluster: what the stack declares read
 * from an export and a config, the refusal of another cluster, the certificate chain against a
 * caBundle (certificates made with @peculiar/x509, tests/webhook/support/certs.ts), and each check
 * passing on a healthy stand-in and failing (or not checked) when its property is broken. The live
 * API server's answers are proven by tests/real/verify.real.ts.
 */
import { X509Certificate } from "node:crypto";
import { type Row, runChecks, type VerifyApi, judgeCanary, canaryPod } from "../../scripts/verify/checks";
import { verifyServedChain } from "../../scripts/verify/certificates";
import { DAY } from "../helpers/clock";
import { declared, type Json, stateObjects } from "../../scripts/verify/declared";
import { exitCode, formatTable } from "../../scripts/verify/report";
import { checkIdentity, contextFor, identityObjects } from "../../scripts/verify/target";
import { parseCanary } from "../../scripts/verify/cli";
import { type Authority, createAuthority, issueServingPair } from "../helpers/tls-signer";

const CONFIG = {
    "cluster-platform:cluster": { value: JSON.stringify({ name: "c1", platform: "kubernetes", kubeContext: "prod" }) },
    "cluster-platform:aws": { value: JSON.stringify({ enabled: false }) },
    "cluster-platform:webhookImage": { value: JSON.stringify({ repository: "registry.example.com/webhook" }) },
    "cluster-platform:subscriptions": {
        value: JSON.stringify({
            enabled: true,
            clusterBundles: [
                { name: "cluster", entitlements: [{ name: "etc-pki-entitlement", namespace: "cfg" }], aggregateToClusterRoles: ["edit"] },
            ],
            bundles: [{ name: "team", namespace: "team-a", entitlements: [{ name: "etc-pki-entitlement" }] }],
        }),
    },
    "cluster-platform:secretThing": { secret: true },
};

const resource = (type: string, outputs: Json, extra: Json = {}) => ({
    type,
    urn: `urn:${type}::${outputs.metadata.name}`,
    outputs,
    ...extra,
});
const SHARE = "cluster-entitlement-etc-pki-entitlement-d0e25df8";
const EXPORT = {
    deployment: {
        resources: [
            { type: "pulumi:pulumi:Stack", urn: "urn:stack" },
            resource("kubernetes:core/v1:Namespace", { apiVersion: "v1", kind: "Namespace", metadata: { name: "ops", uid: "uid-ops" } }),
            resource("kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle", {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "ClusterBundle",
                metadata: { name: "cluster" },
            }),
            resource("kubernetes:subscription.openshift.io/v1alpha1:Bundle", {
                apiVersion: "subscription.openshift.io/v1alpha1",
                kind: "Bundle",
                metadata: { name: "team", namespace: "team-a" },
            }),
            resource("kubernetes:sharedresource.openshift.io/v1alpha1:SharedSecret", {
                apiVersion: "sharedresource.openshift.io/v1alpha1",
                kind: "SharedSecret",
                metadata: { name: SHARE },
                spec: { secretRef: { namespace: "subscription-sources", name: "cfg.etc-pki-entitlement" } },
            }),
            resource("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: { name: "cluster-subscription-bundle", labels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } },
                rules: [
                    {
                        apiGroups: ["subscription.openshift.io"],
                        resources: ["clusterbundles"],
                        resourceNames: ["cluster"],
                        verbs: ["get", "list", "watch"],
                    },
                    { apiGroups: ["sharedresource.openshift.io"], resources: ["sharedsecrets"], resourceNames: [SHARE], verbs: ["use"] },
                ],
            }),
            resource("kubernetes:apps/v1:Deployment", {
                apiVersion: "apps/v1",
                kind: "Deployment",
                metadata: { name: "widget", namespace: "ops" },
            }),
            resource("kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration", {
                apiVersion: "admissionregistration.k8s.io/v1",
                kind: "ValidatingWebhookConfiguration",
                metadata: { name: "vwidget" },
            }),
            resource(
                "kubernetes:storage.k8s.io/v1:CSIDriver",
                { apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: "x" } },
                { external: true },
            ),
            resource(
                "kubernetes:core/v1:Namespace",
                { apiVersion: "v1", kind: "Namespace", metadata: { name: "gone", uid: "u" } },
                { delete: true },
            ),
        ],
    },
};

const HOST = "widget-service.ops.svc";
let ca: Authority;
let otherCa: Authority;
let served: X509Certificate[];

beforeAll(async () => {
    [ca, otherCa] = await Promise.all([createAuthority("stack-ca"), createAuthority("other-ca")]);
    served = [new X509Certificate((await issueServingPair(ca, "02", [HOST])).cert)];
});

/** A healthy cluster for EXPORT; tests break one property each. */
function standIn() {
    const b64 = (s: string) => Buffer.from(s).toString("base64");
    const objects = new Map<string, Json>([
        ["/apis/storage.k8s.io/v1/csidrivers/csi.sharedresource.openshift.io", { metadata: { name: "csi.sharedresource.openshift.io" } }],
        [
            "/apis/apps/v1/namespaces/ops/deployments/widget",
            {
                spec: {
                    replicas: 1,
                    template: {
                        spec: { serviceAccountName: "widget", containers: [{ name: "w", envFrom: [{ secretRef: { name: "creds" } }] }] },
                    },
                },
                status: { availableReplicas: 1, conditions: [{ type: "Available", status: "True" }] },
            },
        ],
        ["/api/v1/namespaces/ops/serviceaccounts/widget", { metadata: { name: "widget" } }],
        [
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/vwidget",
            {
                metadata: { name: "vwidget" },
                webhooks: [
                    {
                        name: "v.widget.io",
                        clientConfig: { service: { namespace: "ops", name: "widget-service", port: 443 }, caBundle: b64(ca.cert) },
                    },
                ],
            },
        ],
        [
            "/api/v1/namespaces/ops/services/widget-service",
            { spec: { selector: { app: "widget" }, ports: [{ name: "https", port: 443 }] } },
        ],
    ]);
    const present = new Set(["Secret ops/creds"]);
    const lists = new Map<string, Json[]>([
        ["/apis/storage.k8s.io/v1/csinodes", [{ spec: { drivers: [] } }]],
        [
            "/apis/rbac.authorization.k8s.io/v1/rolebindings",
            [
                {
                    metadata: { namespace: "team-a" },
                    roleRef: { kind: "ClusterRole", name: "edit" },
                    subjects: [{ kind: "ServiceAccount", name: "builder", namespace: "team-a" }],
                },
            ],
        ],
        [
            "/apis/discovery.k8s.io/v1/namespaces/ops/endpointslices",
            [
                {
                    metadata: { namespace: "ops" },
                    ports: [{ name: "https", port: 9443 }],
                    endpoints: [
                        {
                            addresses: ["10.0.0.5"],
                            conditions: { ready: true },
                            targetRef: { kind: "Pod", name: "widget-1", namespace: "ops" },
                        },
                    ],
                },
            ],
        ],
    ]);
    const allowed = new Set([
        `system:serviceaccount:openshift-builds:csi-driver-shared-resource get secrets subscription-sources/cfg.etc-pki-entitlement`,
        `system:serviceaccount:team-a:builder use sharedsecrets team-a/${SHARE}`,
        `system:serviceaccount:team-a:builder get clusterbundles team-a/cluster`,
    ]);
    const injected = (pod: Json): Json => {
        const cluster = pod.metadata.annotations["subscription.openshift.io/inject-cluster-bundle"];
        const volume = cluster
            ? {
                  name: "subscription-share-1a2b3c4d",
                  csi: { driver: "csi.sharedresource.openshift.io", volumeAttributes: { sharedSecret: SHARE } },
              }
            : { name: "subscription-entitlements", projected: { sources: [{ secret: { name: "etc-pki-entitlement" } }] } };
        const generations = cluster ? { clusterBundles: { [cluster]: "1" } } : { bundles: { team: "1" } };
        return {
            ...pod,
            metadata: {
                ...pod.metadata,
                annotations: { ...pod.metadata.annotations, "subscription.openshift.io/bundle-generations": JSON.stringify(generations) },
            },
            spec: {
                ...pod.spec,
                volumes: [volume],
                containers: pod.spec.containers.map((c: Json) => ({
                    ...c,
                    volumeMounts: [{ name: volume.name, mountPath: "/run/secrets/etc-pki-entitlement" }],
                })),
            },
        };
    };
    const state = {
        objects,
        present,
        lists,
        allowed,
        chain: () => served as X509Certificate[] | undefined,
        refuse: undefined as string | undefined,
    };
    const api: VerifyApi = {
        now: new Date(),
        get: async (p) => objects.get(p),
        exists: async (ref) => present.has(`${ref.kind} ${ref.namespace}/${ref.name}`),
        list: async (p) => lists.get(p) ?? [],
        dryRunCreate: async (_p, pod) => (state.refuse ? { refused: state.refuse } : { object: injected(pod) }),
        review: async (r) => ({ allowed: allowed.has(`${r.user} ${r.verb} ${r.resource} ${r.namespace}/${r.name}`), reason: "" }),
        servedChain: async () => {
            const chain = state.chain();
            return chain
                ? { chain, via: "through the API server (pods/portforward)" }
                : { error: "pods/portforward failed (upgrade refused)" };
        },
    };
    return { api, state };
}

const d = () => declared("prod-stack", EXPORT, CONFIG);
const verdicts = (rows: Row[]) => rows.map((r) => `${r.result}: ${r.check} ${r.object}`);
const find = (rows: Row[], check: string, object?: string) =>
    rows.filter((r) => r.check === check && (!object || r.object.startsWith(object)));

describe("verify", () => {
    test("GIVEN a stack's export and config THEN verify reads the bundles, the ClusterBundle's role, shares and aggregation, and only objects the stack owns; secrets and deleted resources are left out", () => {
        const stack = d();
        expect(stack.clusterBundles).toEqual(["cluster"]);
        expect(stack.bundles).toEqual([{ namespace: "team-a", name: "team" }]);
        expect(stack.grants).toEqual([
            {
                bundle: "cluster",
                role: "cluster-subscription-bundle",
                aggregatesTo: ["edit"],
                shares: [{ resource: "sharedsecrets", name: SHARE }],
            },
        ]);
        expect(stateObjects(EXPORT).map((o) => `${o.kind} ${o.name} ${o.owned}`)).not.toContain("Namespace gone true");
        expect(stateObjects(EXPORT).find((o) => o.kind === "CSIDriver")?.owned).toBe(false);
    });

    test("GIVEN an invalid config or a state without objects THEN verify refuses naming the key, the value and the rule, or the missing update", () => {
        const bad = { ...CONFIG, "cluster-platform:cluster": { value: JSON.stringify({ name: "Bad_Name", platform: "kubernetes" }) } };
        expect(() => declared("s", EXPORT, bad)).toThrow(
            /stack s: invalid configuration: 1 problem\n {2}- cluster-platform:cluster\.name: .*Bad_Name/,
        );
        expect(() => declared("s", { deployment: { resources: [] } }, CONFIG)).toThrow(
            "stack s holds no Kubernetes objects in its state: run pulumi up first",
        );
        expect(() => parseCanary("team-a")).toThrow('--canary "team-a": expected <namespace>/<serviceaccount> (DNS-1123 names)');
        expect(parseCanary("team-a/builder")).toEqual({ namespace: "team-a", serviceAccount: "builder" });
    });

    test("GIVEN another kube context than the stack's, or a cluster whose objects have other uids THEN verify refuses naming both", () => {
        const cluster = d().config.cluster;
        expect(contextFor("prod-stack", cluster, undefined, "prod")).toBe("prod");
        expect(() => contextFor("prod-stack", cluster, "staging", "prod")).toThrow(
            'stack prod-stack names kube context "prod" (cluster-platform:cluster.kubeContext) but verify would use "staging" (--context): refusing to verify another cluster',
        );
        expect(() => contextFor("prod-stack", cluster, undefined, "staging")).toThrow(
            `verify would use "staging" (the kubeconfig's current-context)`,
        );
        const recorded = identityObjects(d().objects);
        expect(recorded.map((o) => o.name)).toEqual(["ops"]);
        expect(() => checkIdentity("prod-stack", "prod", recorded, new Map([["Namespace ops", "uid-ops"]]))).not.toThrow();
        expect(() => checkIdentity("prod-stack", "prod", recorded, new Map([["Namespace ops", "uid-elsewhere"]]))).toThrow(
            `the cluster of kube context "prod" is not stack prod-stack's: Namespace ops has uid uid-ops in the stack's state and uid-elsewhere in that cluster`,
        );
    });

    test("GIVEN a served certificate THEN it passes against the CA that signed it with its expiry, and fails against another CA, an empty bundle or another host", () => {
        const now = new Date();
        const ok = verifyServedChain(served, ca.cert, HOST, now);
        expect(ok.ok).toBe(true);
        expect(ok.why).toMatch(/^chains to CN=stack-ca in the caBundle; expires \S+ \((6|7) days\)$/);
        expect(verifyServedChain(served, otherCa.cert, HOST, now)).toMatchObject({
            ok: false,
            why: expect.stringContaining("does not chain to any of the caBundle's 1 certificate(s) (CN=other-ca)"),
        });
        expect(verifyServedChain(served, "", HOST, now)).toMatchObject({
            ok: false,
            why: "the caBundle is empty or holds no PEM certificate",
        });
        expect(verifyServedChain(served, ca.cert, "other.ops.svc", now)).toMatchObject({
            ok: false,
            why: expect.stringContaining("does not name other.ops.svc"),
        });
        expect(verifyServedChain(served, ca.cert, HOST, new Date(Date.now() + 8 * DAY))).toMatchObject({
            ok: false,
            why: expect.stringContaining("expired on"),
        });
    });

    test("GIVEN a healthy cluster THEN every check passes except the CSI node plugin, which is not checked with its reason, and the exit code is 0", async () => {
        const { api } = standIn();
        const rows = await runChecks(d(), api, []);
        expect(verdicts(rows)).toEqual([
            "passed: csi-driver CSIDriver csi.sharedresource.openshift.io",
            "not checked: csi-node-plugin CSIDriver csi.sharedresource.openshift.io",
            `passed: share-source sharedsecrets/${SHARE}`,
            "passed: share-use ClusterBundle cluster as team-a/builder",
            "passed: canary ClusterBundle cluster in team-a as builder",
            "passed: canary Bundle team-a/team as default",
            "passed: service ValidatingWebhookConfiguration vwidget v.widget.io",
            "passed: certificate ValidatingWebhookConfiguration vwidget v.widget.io",
            "passed: deployment Deployment ops/widget",
            "passed: pod-references Deployment ops/widget",
        ]);
        expect(find(rows, "canary", "ClusterBundle")[0].why).toBe(
            `volumes subscription-share-1a2b3c4d (csi ${SHARE}); mounts /run/secrets/etc-pki-entitlement`,
        );
        expect(find(rows, "csi-node-plugin")[0].why).toBe(
            "no CSINode of the 1 node(s) lists the driver: its node plugin runs nowhere here, so no mount can be tried",
        );
        expect(exitCode(rows)).toBe(0);
        const table = formatTable("prod-stack", "prod", rows).split("\n");
        expect(table[1]).toMatch(/^RESULT {2}CHECK +OBJECT +WHY$/);
        expect(table[2]).toMatch(/^n\/a +csi-node-plugin/);
        expect(table.at(-1)).toBe("9 passed, 0 failed, 1 not checked (not checked is not passed: see docs/operations.md, Verify)");
    });

    test("GIVEN each property broken in turn THEN exactly its check fails (or is not checked) naming why, and the exit code is 1", async () => {
        const broken = async (breakIt: (s: ReturnType<typeof standIn>["state"]) => void) => {
            const { api, state } = standIn();
            breakIt(state);
            const rows = await runChecks(d(), api, []);
            return rows
                .filter((r) => r.result !== "passed" && r.check !== "csi-node-plugin")
                .map((r) => `${r.result}: ${r.check} ${r.object}: ${r.why}`);
        };
        expect(await broken((s) => s.objects.delete("/apis/storage.k8s.io/v1/csidrivers/csi.sharedresource.openshift.io"))).toEqual([
            "failed: csi-driver CSIDriver csi.sharedresource.openshift.io: absent: no ClusterBundle share can be mounted",
        ]);
        expect(await broken((s) => s.allowed.delete(`system:serviceaccount:team-a:builder use sharedsecrets team-a/${SHARE}`))).toEqual([
            `failed: share-use ClusterBundle cluster as team-a/builder: SubjectAccessReview denies use sharedsecrets/${SHARE}`,
        ]);
        expect(await broken((s) => s.allowed.clear())).toContain(
            `failed: share-source sharedsecrets/${SHARE}: system:serviceaccount:openshift-builds:csi-driver-shared-resource may not get secrets subscription-sources/cfg.etc-pki-entitlement: no RBAC rule allows it`,
        );
        expect(await broken((s) => s.lists.set("/apis/rbac.authorization.k8s.io/v1/rolebindings", []))).toEqual([
            "not checked: share-use ClusterBundle cluster: no ServiceAccount is bound to cluster-subscription-bundle, edit in any namespace; pass --canary <namespace>/<serviceaccount>",
            "not checked: canary ClusterBundle cluster: no service account to run the canary as (see share-use)",
        ]);
        expect(
            await broken(
                (s) => (s.refuse = 'HTTP 403: admission webhook "inject.subscription.openshift.io" denied the request: AccessDenied'),
            ),
        ).toEqual([
            'failed: canary ClusterBundle cluster in team-a as builder: the canary pod was refused: HTTP 403: admission webhook "inject.subscription.openshift.io" denied the request: AccessDenied',
            'failed: canary Bundle team-a/team as default: the canary pod was refused: HTTP 403: admission webhook "inject.subscription.openshift.io" denied the request: AccessDenied',
        ]);
        const vwc = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/vwidget";
        expect(
            await broken((s) => {
                s.objects.get(vwc).webhooks[0].clientConfig.caBundle = Buffer.from(otherCa.cert).toString("base64");
            }),
        ).toEqual([
            expect.stringMatching(
                /^failed: certificate ValidatingWebhookConfiguration vwidget v\.widget\.io: the served certificate \(issuer CN=stack-ca\) does not chain to any of the caBundle's 1 certificate\(s\) \(CN=other-ca\) \(read through the API server \(pods\/portforward\)\)$/,
            ),
        ]);
        expect(await broken((s) => s.lists.set("/apis/discovery.k8s.io/v1/namespaces/ops/endpointslices", []))).toEqual([
            'failed: service ValidatingWebhookConfiguration vwidget v.widget.io: Service ops/widget-service:443 has no ready endpoint (its selector {"app":"widget"} matches no ready pod, or no port 443)',
            "not checked: certificate ValidatingWebhookConfiguration vwidget v.widget.io: no backend to read the certificate from (see service)",
        ]);
        expect(await broken((s) => (s.chain = () => undefined))).toEqual([
            "not checked: certificate ValidatingWebhookConfiguration vwidget v.widget.io: the certificate of pod ops/widget-1 could not be read: pods/portforward failed (upgrade refused)",
        ]);
        expect(
            await broken((s) => {
                s.objects.get("/apis/apps/v1/namespaces/ops/deployments/widget").status = {
                    availableReplicas: 0,
                    conditions: [
                        {
                            type: "Available",
                            status: "False",
                            reason: "MinimumReplicasUnavailable",
                            message: "Deployment does not have minimum availability.",
                        },
                    ],
                };
            }),
        ).toEqual([
            "failed: deployment Deployment ops/widget: not Available (0/1 available): MinimumReplicasUnavailable Deployment does not have minimum availability.",
        ]);
        expect(await broken((s) => s.present.clear())).toEqual([
            "failed: pod-references Deployment ops/widget: missing: Secret ops/creds (template.spec.containers[0].envFrom[0].secretRef.name)",
        ]);
        const { api, state } = standIn();
        state.present.clear();
        expect(exitCode(await runChecks(d(), api, []))).toBe(1);
    });

    test("GIVEN a dry-run answer the webhook never touched, or one without the bundle's share THEN the canary fails saying so", () => {
        const pod = canaryPod("team-a", "builder", "subscription.openshift.io/inject-cluster-bundle", "cluster");
        expect(pod.metadata.name).toBe("verify-canary-cluster");
        expect(judgeCanary({ object: pod }, "ClusterBundle", "cluster", [SHARE]).why).toBe(
            "the API server admitted the canary without ClusterBundle cluster (no subscription.openshift.io/bundle-generations entry): the webhook was not called (failurePolicy Ignore, or the namespace is excluded) or skipped it",
        );
        const partial = {
            ...pod,
            metadata: {
                ...pod.metadata,
                annotations: { "subscription.openshift.io/bundle-generations": '{"clusterBundles":{"cluster":"1"}}' },
            },
        };
        expect(judgeCanary({ object: partial }, "ClusterBundle", "cluster", [SHARE])).toEqual({
            result: "failed",
            why: `injected without the share(s) ${SHARE}; volumes: `,
        });
    });
});
