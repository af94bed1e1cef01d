import { Writable } from "node:stream";
import pino from "pino";
import { AccessReviewCache } from "../../webhook/access-reviews";
import { AdmissionHandler } from "../../webhook/admission";
import { clusterBundleShareName } from "../../webhook/api";
import { ClusterState, subjectAccessReviewer } from "../../webhook/cluster-state";
import { WebhookMetrics } from "../../webhook/metrics";
import { FakeKubeApi, bundleObject, configMap, secret } from "./support/fake-kube-api";
import { podCreateReview } from "./support/fixtures";
import { waitFor } from "./support/wait";

const SECRET_VALUE = Buffer.from("-----BEGIN ENTITLEMENT DATA----- TOP-SECRET-7f3a").toString("base64");

function capturedLogger() {
    const lines: string[] = [];
    const stream = new Writable({
        write(chunk, _encoding, done) {
            lines.push(String(chunk));
            done();
        },
    });
    return { logger: pino({ level: "trace" }, stream), lines };
}

/** The admission handler over `cluster`, reviewing access through `api` (allowed 60 s, denied 10 s). */
function handlerFor(api: FakeKubeApi, cluster: ClusterState, metrics: WebhookMetrics, logger: pino.Logger): AdmissionHandler {
    const access = new AccessReviewCache(subjectAccessReviewer(api.kubeConfig(), metrics), { allowedTtlMs: 60_000, deniedTtlMs: 10_000 });
    return new AdmissionHandler({ cluster, access, metrics, logger, lookupTimeoutMs: 2000 });
}

function review(uid: string, annotations: Record<string, string>, namespace = "team-a") {
    return podCreateReview(uid, namespace, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { generateName: "app-", annotations },
        spec: { serviceAccountName: "builder", containers: [{ name: "app", image: "ubi9" }] },
    });
}

describe("cluster state from list + watch against a stand-in API (real @kubernetes/client-node code)", () => {
    let api: FakeKubeApi;
    let state: ClusterState;
    let metrics: WebhookMetrics;
    let logs: ReturnType<typeof capturedLogger>;

    beforeEach(async () => {
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("shared-config", "etc-pki-entitlement", { "sca.pem": SECRET_VALUE, "sca-key.pem": SECRET_VALUE }));
        api.put(secret("shared-config", "unrelated", { password: SECRET_VALUE }));
        api.put(secret("shared-config", "zz-unrelated", { token: SECRET_VALUE }));
        api.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE }));
        api.put(configMap("team-a", "local-repo", { "redhat.repo": "[rhel]\nbaseurl=https://satellite.example/" }));
        api.put(
            bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }], yumRepositories: [{ name: "local-repo" }] }),
        );
        api.put(bundleObject(undefined, "cluster", { entitlements: [{ name: "etc-pki-entitlement", namespace: "shared-config" }] }, true));
        metrics = new WebhookMetrics({ processMetrics: false });
        logs = capturedLogger();
        state = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics,
            logger: logs.logger,
            retry: { initialMs: 10, maxMs: 50 },
            pageSize: 2,
        });
        await state.start();
        // start() resolves after the lists; the watches it opened reach the API a moment later.
        await waitFor(() => api.requests.length === metrics.kubeApiRequestCount, "the watch requests to arrive");
    });

    afterEach(async () => {
        state.stop();
        await api.stop();
    });

    test("GIVEN bundles and referenced objects WHEN started THEN it is synced with bundles indexed and only key names of watched namespaces cached", () => {
        expect(state.synced()).toBe(true);
        expect([...state.bundlesIn("team-a").values()]).toEqual([
            {
                name: "local",
                namespace: "team-a",
                generation: 1,
                alwaysInject: false,
                entitlements: [{ name: "local-entitlement" }],
                yumRepositories: [{ name: "local-repo" }],
            },
        ]);
        expect([...state.clusterBundleMap().values()]).toEqual([
            {
                name: "cluster",
                namespace: undefined,
                generation: 1,
                alwaysInject: true,
                entitlements: [{ name: "etc-pki-entitlement", namespace: "shared-config" }],
                yumRepositories: [],
            },
        ]);
        expect(state.keyCacheContents()).toEqual({
            "Secret/team-a": { "local-entitlement": ["local.pem"] },
            "ConfigMap/team-a": { "local-repo": ["redhat.repo"] },
            "Secret/shared-config": {
                "etc-pki-entitlement": ["sca-key.pem", "sca.pem"],
                unrelated: ["password"],
                "zz-unrelated": ["token"],
            },
        });
        expect(JSON.stringify(state.keyCacheContents())).not.toContain(SECRET_VALUE);
        expect(JSON.stringify(state.keyCacheContents())).not.toContain("satellite.example");
    });

    test("GIVEN a started state WHEN listing THEN pages of the page size were read and only referenced namespaces were listed", () => {
        expect(
            api
                .requestsSince(0)
                .filter((line) => !line.endsWith("(watch)"))
                .sort(),
        ).toEqual(
            [
                "GET /api/v1/namespaces/shared-config/secrets",
                "GET /api/v1/namespaces/shared-config/secrets",
                "GET /api/v1/namespaces/team-a/configmaps",
                "GET /api/v1/namespaces/team-a/secrets",
                "GET /apis/subscription.openshift.io/v1alpha1/bundles",
                "GET /apis/subscription.openshift.io/v1alpha1/clusterbundles",
            ].sort(),
        );
        expect(metrics.kubeApiRequestCount).toBe(api.requests.length);
    });

    test("GIVEN more Bundles than a page WHEN a state starts THEN it follows the custom-object list's metadata.continue (untyped: never renamed _continue) and sees every Bundle", async () => {
        for (const team of ["team-b", "team-c", "team-d", "team-e"]) api.put(bundleObject(team, "own", { entitlements: [{ name: "x" }] }));
        const before = api.requests.length;
        const paged = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics: new WebhookMetrics({ processMetrics: false }),
            logger: capturedLogger().logger,
            retry: { initialMs: 10, maxMs: 50 },
            pageSize: 2,
        });
        try {
            await paged.start();
            expect(["team-a", "team-b", "team-c", "team-d", "team-e"].map((ns) => [...paged.bundlesIn(ns).keys()])).toEqual([
                ["local"],
                ["own"],
                ["own"],
                ["own"],
                ["own"],
            ]);
            // 5 Bundles in pages of 2: three GETs of the list.
            expect(
                api.requestsSince(before).filter((line) => line === "GET /apis/subscription.openshift.io/v1alpha1/bundles"),
            ).toHaveLength(3);
        } finally {
            paged.stop();
        }
    });

    test("GIVEN 120 teams' etc-pki-entitlement Secrets and no page size given WHEN a state starts THEN Secrets are listed 50 a page (each page parsed whole, values included) and Bundles 500 a page, and every team's keys are known", async () => {
        state.stop(); // only the state under test talks to the API
        for (let i = 0; i < 120; i++) {
            api.put(secret(`team-${i}`, "etc-pki-entitlement", { "entitlement.pem": SECRET_VALUE, "entitlement-key.pem": SECRET_VALUE }));
            api.put(bundleObject(`team-${i}`, "team", { entitlements: [{ name: "etc-pki-entitlement" }] }));
        }
        const before = api.requests.length;
        const defaults = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics: new WebhookMetrics({ processMetrics: false }),
            logger: capturedLogger().logger,
            retry: { initialMs: 10, maxMs: 50 },
            readScopes: { Secret: new Set(["shared-config"]), ConfigMap: new Set(["shared-config"]) },
        });
        try {
            await defaults.start();
            const named = () => defaults.keyCacheContents()["Secret/<all>/etc-pki-entitlement"] ?? {};
            // The 120 teams' and shared-config's own: 121, three pages.
            await waitFor(() => Object.keys(named()).length === 121, "the 121 Secrets named etc-pki-entitlement");
            expect(named()["team-7/etc-pki-entitlement"]).toEqual(["entitlement-key.pem", "entitlement.pem"]);
            const lists = (path: string) =>
                api.requests
                    .slice(before)
                    .filter((request) => request.path === path && !request.query.watch)
                    .map((request) => request.query.limit);
            expect(lists("/api/v1/secrets")).toEqual(["50", "50", "50"]);
            expect(lists("/apis/subscription.openshift.io/v1alpha1/bundles")).toEqual(["500"]);
        } finally {
            defaults.stop();
        }
    });

    test("GIVEN a watched Secret WHEN a key is added THEN the new key name is known without a new list", async () => {
        const before = api.requests.length;
        api.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE, "local-key.pem": SECRET_VALUE }));
        await waitFor(() => state.keysOf("Secret", "team-a", "local-entitlement")?.length === 2, "the watch event");
        expect(state.keysOf("Secret", "team-a", "local-entitlement")).toEqual(["local-key.pem", "local.pem"]);
        expect(api.requestsSince(before)).toEqual([]);
    });

    test("GIVEN a new Bundle in another namespace WHEN it arrives THEN that namespace's Secrets are listed and watched, and dropped again when it goes", async () => {
        api.put(secret("team-b", "b-entitlement", { "b.pem": SECRET_VALUE }));
        api.put(bundleObject("team-b", "b", { entitlements: [{ name: "b-entitlement" }] }));
        await waitFor(() => state.keysOf("Secret", "team-b", "b-entitlement") !== undefined, "team-b's key cache");
        expect(state.bundlesIn("team-b").get("b")?.generation).toBe(1);
        api.remove("Bundle", "team-b", "b");
        await waitFor(() => !("Secret/team-b" in state.keyCacheContents()), "team-b's key cache to stop");
        expect(state.bundlesIn("team-b").size).toBe(0);
    });

    test("GIVEN the API closes every watch WHEN events follow THEN the informers resume from their resourceVersion and see them", async () => {
        api.closeWatches();
        api.put(bundleObject("team-a", "late", { entitlements: [{ name: "local-entitlement" }] }));
        await waitFor(() => state.bundlesIn("team-a").has("late"), "the resumed watch");
        expect(logs.lines.join("")).not.toContain(SECRET_VALUE);
    });

    test("GIVEN the API forgot its history WHEN watches resume from an old resourceVersion THEN 410 Gone makes them re-list", async () => {
        api.closeWatches();
        api.compact();
        const before = api.requests.length;
        await waitFor(
            () => api.requestsSince(before).includes("GET /apis/subscription.openshift.io/v1alpha1/bundles"),
            "a re-list after 410",
        );
        api.put(bundleObject("team-a", "after-gone", { entitlements: [] }));
        await waitFor(() => state.bundlesIn("team-a").has("after-gone"), "events after the re-list");
    });

    test("GIVEN the server may list only some namespaces WHEN a team's Bundle in another namespace is used THEN its Secret is read once, by name, with no watch, readiness holds and its pods are injected", async () => {
        state.stop(); // only the state under test talks to the API
        const scoped = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics,
            logger: logs.logger,
            retry: { initialMs: 10, maxMs: 50 },
            readScopes: { Secret: new Set(["shared-config", "team-a"]), ConfigMap: new Set(["shared-config", "team-a"]) },
        });
        await scoped.start();
        try {
            api.put(secret("team-b", "own-entitlement", { "b.pem": SECRET_VALUE }));
            api.put(secret("team-b", "other", { "other.pem": SECRET_VALUE }));
            api.put(bundleObject("team-b", "own", { entitlements: [{ name: "own-entitlement" }] }));
            await waitFor(() => scoped.bundlesIn("team-b").has("own"), "the team-b Bundle");
            expect(scoped.synced()).toBe(true);
            const handler = handlerFor(api, scoped, metrics, logs.logger);
            for (const uid of ["b1", "b2", "b3"]) {
                const injected = JSON.parse(
                    (await handler.handle(review(uid, { "subscription.openshift.io/inject-bundle": "own" }, "team-b"))).body,
                );
                expect(injected.response).toMatchObject({
                    allowed: true,
                    status: { code: 200, message: "injected Bundle own, ClusterBundle cluster" },
                });
            }
            expect(scoped.keyCacheContents()["Secret/team-b/own-entitlement"]).toEqual({ "own-entitlement": ["b.pem"] });
            const teamB = api.requests.filter((request) => request.path.startsWith("/api/v1/namespaces/team-b/"));
            expect(teamB.map((request) => [request.method, request.path, request.query.watch ?? ""])).toEqual([
                ["GET", "/api/v1/namespaces/team-b/secrets/own-entitlement", ""],
            ]);
        } finally {
            scoped.stop();
        }
    });

    test("GIVEN RBAC refuses a namespace's list but a by-name rule allows the read (its RoleBinding deleted) WHEN pods are admitted THEN the webhook reads by name and injects", async () => {
        state.stop();
        api.authorizeRequest = (request) => !(request.namespace === "team-a" && request.resource === "secrets" && request.verb !== "get");
        const scoped = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics,
            logger: logs.logger,
            retry: { initialMs: 10, maxMs: 50 },
        });
        await scoped.start();
        try {
            const handler = handlerFor(api, scoped, metrics, logs.logger);
            const injected = JSON.parse((await handler.handle(review("a1", { "subscription.openshift.io/inject-bundle": "local" }))).body);
            expect(injected.response).toMatchObject({ allowed: true, status: { message: "injected Bundle local, ClusterBundle cluster" } });
            const warnings = logs.lines.map((line) => JSON.parse(line)).filter((line) => line.msg.startsWith("key cache cannot sync"));
            expect(warnings.map((line) => [line.namespace, line.resource, line.permission])).toEqual([
                ["team-a", "secrets", "list and watch secrets in namespace team-a"],
            ]);
        } finally {
            scoped.stop();
        }
    });

    test("GIVEN RBAC refuses every read of one namespace's Secrets WHEN pods are admitted THEN readiness holds, other namespaces are injected, a requested Bundle there is denied naming the permission, an always-inject one only warns and is counted", async () => {
        state.stop(); // only the state under test talks to the API
        api.authorizeRequest = (request) => !(request.namespace === "team-b");
        api.put(secret("team-b", "own-entitlement", { "b.pem": SECRET_VALUE }));
        api.put(bundleObject("team-b", "own", { entitlements: [{ name: "own-entitlement" }] }));
        api.put(bundleObject("team-b", "everywhere", { entitlements: [{ name: "own-entitlement" }] }, true));
        const scoped = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics,
            logger: logs.logger,
            retry: { initialMs: 10, maxMs: 50 },
        });
        await scoped.start();
        try {
            expect(scoped.synced()).toBe(true);
            const handler = handlerFor(api, scoped, metrics, logs.logger);
            const other = JSON.parse((await handler.handle(review("a1", { "subscription.openshift.io/inject-bundle": "local" }))).body);
            expect(other.response).toMatchObject({ allowed: true, status: { message: "injected Bundle local, ClusterBundle cluster" } });
            const requested = JSON.parse(
                (await handler.handle(review("b1", { "subscription.openshift.io/inject-bundle": "own" }, "team-b"))).body,
            );
            const why =
                'the webhook may not read secrets team-b/own-entitlement (its service account needs get on secrets named "own-entitlement" in namespace team-b: a Role with resourceNames)';
            expect(requested.response).toMatchObject({
                allowed: false,
                status: {
                    code: 403,
                    message: `Bundle "own" references Secret team-b/own-entitlement: ${why} (grant it with a Role and RoleBinding for the webhook's service account: docs/subscriptions.md, "Teams' own Bundles")`,
                },
            });
            const plain = await handler.handle(review("b2", {}, "team-b"));
            expect(plain.status).toBe(200);
            expect(JSON.parse(plain.body).response).toMatchObject({
                allowed: true,
                warnings: [
                    `always-inject Bundle "everywhere" not injected: Bundle "everywhere" references Secret team-b/own-entitlement: ${why} (grant it with a Role and RoleBinding for the webhook's service account: docs/subscriptions.md, "Teams' own Bundles")`,
                ],
                status: { message: "injected ClusterBundle cluster" },
            });
            const warnings = logs.lines.map((line) => JSON.parse(line)).filter((line) => line.msg.startsWith("key cache cannot sync"));
            expect(warnings.map((line) => [line.namespace, line.resource, line.permission])).toEqual([
                ["team-b", "secrets", "list and watch secrets in namespace team-b"],
            ]);
            const gauge = (await metrics.keyCacheSynced.get()).values.map((value) => [
                value.labels.namespace,
                value.labels.resource,
                value.value,
            ]);
            expect(gauge).toContainEqual(["team-b", "secrets", 0]);
            expect(gauge).toContainEqual(["team-a", "secrets", 1]);
            expect((await metrics.skippedBundles.get()).values).toEqual([
                { labels: { kind: "Bundle", reason: "KeysUnreadable" }, value: 1 },
            ]);
        } finally {
            scoped.stop();
        }
    });

    describe("admissions in steady state", () => {
        test("GIVEN warm caches and a reviewed service account WHEN 50 pods are admitted THEN the API sees no request at all and the webhook counts none", async () => {
            const access = new AccessReviewCache(subjectAccessReviewer(api.kubeConfig(), metrics), {
                allowedTtlMs: 60_000,
                deniedTtlMs: 10_000,
                sharesOf: (bundle) => state.sharesOf(bundle),
            });
            const handler = new AdmissionHandler({ cluster: state, access, metrics, logger: logs.logger, lookupTimeoutMs: 2000 });
            const annotations = { "subscription.openshift.io/inject-bundle": "local" };
            const first = JSON.parse((await handler.handle(review("warm-up", annotations))).body);
            expect(first.response.status.message).toBe("injected Bundle local, ClusterBundle cluster");
            const sars = api.requests.filter((request) => request.path === "/apis/authorization.k8s.io/v1/subjectaccessreviews");
            // In the pod's namespace, with the one group the driver sends (pkg/client/client.go ExecuteSAR).
            const spec = (resourceAttributes: Record<string, string>) => ({
                apiVersion: "authorization.k8s.io/v1",
                kind: "SubjectAccessReview",
                spec: {
                    user: "system:serviceaccount:team-a:builder",
                    groups: ["system:serviceaccounts"],
                    resourceAttributes: { namespace: "team-a", ...resourceAttributes },
                },
            });
            expect(sars.map((sar) => sar.body)).toEqual([
                spec({ verb: "get", group: "subscription.openshift.io", version: "v1alpha1", resource: "clusterbundles", name: "cluster" }),
                spec({
                    verb: "use",
                    group: "sharedresource.openshift.io",
                    resource: "sharedsecrets",
                    name: clusterBundleShareName("cluster", "entitlement", { namespace: "shared-config", name: "etc-pki-entitlement" }),
                }),
            ]);
            const apiBefore = api.requests.length;
            const countedBefore = metrics.kubeApiRequestCount;
            for (let i = 0; i < 50; i++) {
                const result = JSON.parse((await handler.handle(review(`uid-${i}`, annotations))).body);
                expect(result.response.allowed).toBe(true);
            }
            expect(api.requests.length - apiBefore).toBe(0);
            expect(metrics.kubeApiRequestCount - countedBefore).toBe(0);
            expect(logs.lines.join("")).not.toContain(SECRET_VALUE);
        });

        test("GIVEN the SubjectAccessReview denies WHEN the bundle is requested THEN the pod is denied; an always-inject one is skipped with a warning", async () => {
            api.authorize = () => false;
            const handler = handlerFor(api, state, metrics, logs.logger);
            const requested = JSON.parse(
                (await handler.handle(review("r1", { "subscription.openshift.io/inject-cluster-bundle": "cluster" }))).body,
            );
            expect(requested.response).toMatchObject({ uid: "r1", allowed: false, status: { code: 403, reason: "Forbidden" } });
            const automatic = JSON.parse((await handler.handle(review("r2", {}))).body);
            expect(automatic.response.warnings).toEqual([
                'always-inject ClusterBundle "cluster" not injected: service account team-a/builder may not use it: get clusterbundles/cluster not allowed: no RBAC policy matched',
            ]);
        });

        test("GIVEN the review API fails WHEN a ClusterBundle applies THEN the call fails (HTTP 503, failurePolicy applies) and the failure is not cached", async () => {
            api.failReviewsWith = 500;
            const handler = handlerFor(api, state, metrics, logs.logger);
            const failed = await handler.handle(review("f1", {}));
            expect(failed).toMatchObject({ status: 503, outcome: "failed" });
            expect(JSON.parse(failed.body)).toMatchObject({ kind: "Status", code: 503, reason: "ServiceUnavailable" });
            expect(JSON.parse(failed.body).message).toContain("SubjectAccessReview failed: status 500");
            api.failReviewsWith = undefined;
            const recovered = JSON.parse((await handler.handle(review("f2", {}))).body);
            expect(recovered.response.allowed).toBe(true);
        });
    });
});

describe("cold starts and API server restarts (issue 14 point 7: never a final answer from an unsynced cache)", () => {
    const annotations = { "subscription.openshift.io/inject-bundle": "local" };

    function seed(api: FakeKubeApi): void {
        api.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE }));
        api.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
        api.put(secret("shared-config", "etc-pki-entitlement", { "sca.pem": SECRET_VALUE }));
        api.put(bundleObject(undefined, "cluster", { entitlements: [{ name: "etc-pki-entitlement", namespace: "shared-config" }] }, true));
    }

    /** Resolves once every informer named has logged a failed request (the API is really unreachable to it). */
    function failuresLogged(lines: string[], informers: string[]): () => boolean {
        return () => informers.every((name) => lines.some((line) => line.includes(`"informer":"${name}"`) && /failed/.test(line)));
    }

    test("GIVEN the API is down when the webhook starts WHEN pods are admitted THEN each call fails with HTTP 503 naming the unsynced caches (never allowed: false), readiness stays false and the denials are counted; once the API is up the same pods are injected", async () => {
        const api = new FakeKubeApi();
        await api.start();
        const port = api.port;
        await api.stop();
        seed(api);
        const metrics = new WebhookMetrics({ processMetrics: false });
        const logs = capturedLogger();
        const state = new ClusterState({ kubeConfig: api.kubeConfig(), metrics, logger: logs.logger, retry: { initialMs: 10, maxMs: 50 } });
        const handler = handlerFor(api, state, metrics, logs.logger);
        const started = state.start();
        try {
            await waitFor(
                failuresLogged(logs.lines, ["bundles", "clusterbundles"]),
                "both bundle informers to fail against the unreachable API",
            );
            const named = await handler.handle(review("cold-named", annotations));
            const unannotated = await handler.handle(review("cold-plain", {}));
            const expected = {
                status: 503,
                outcome: "failed",
                body: JSON.stringify({
                    kind: "Status",
                    apiVersion: "v1",
                    status: "Failure",
                    code: 503,
                    reason: "ServiceUnavailable",
                    message: "the webhook's caches are not synced yet (bundles, clusterbundles); retry",
                }),
            };
            expect(named).toEqual(expected);
            expect(unannotated).toEqual(expected);
            expect(state.synced()).toBe(false);
            expect((await metrics.denials.get()).values.find((value) => value.labels.reason === "CacheNotSynced")?.value).toBe(2);

            await api.start(port);
            await started;
            expect(state.synced()).toBe(true);
            const warm = JSON.parse((await handler.handle(review("warm-named", annotations))).body);
            expect(warm.response).toMatchObject({
                uid: "warm-named",
                allowed: true,
                status: { code: 200, message: "injected Bundle local, ClusterBundle cluster" },
            });
            const plain = JSON.parse((await handler.handle(review("warm-plain", {}))).body);
            expect(plain.response).toMatchObject({
                uid: "warm-plain",
                allowed: true,
                status: { code: 200, message: "injected ClusterBundle cluster" },
            });
        } finally {
            state.stop();
            await api.stop();
        }
    });

    test("GIVEN synced caches WHEN the API server restarts with different state and older resourceVersions (no watch can replay the change) THEN the informers relist and converge", async () => {
        const before = new FakeKubeApi();
        await before.start();
        seed(before);
        before.put(configMap("team-a", "local-repo", { "redhat.repo": "[rhel]" }));
        before.put(
            bundleObject("team-a", "retired", { entitlements: [{ name: "local-entitlement" }], yumRepositories: [{ name: "local-repo" }] }),
        );
        const metrics = new WebhookMetrics({ processMetrics: false });
        const logs = capturedLogger();
        const state = new ClusterState({
            kubeConfig: before.kubeConfig(),
            metrics,
            logger: logs.logger,
            retry: { initialMs: 10, maxMs: 50 },
        });
        await state.start();
        const after = new FakeKubeApi();
        try {
            expect([...state.bundlesIn("team-a").keys()].sort()).toEqual(["local", "retired"]);
            await before.stop();
            await waitFor(
                failuresLogged(logs.lines, ["bundles", "clusterbundles", "secrets/team-a", "configmaps/team-a", "secrets/shared-config"]),
                "every informer to fail against the stopped API",
            );
            // The restarted API (a restored etcd, say) holds different objects at lower resourceVersions.
            after.put(bundleObject("team-a", "local", { entitlements: [{ name: "local-entitlement" }] }));
            after.put(bundleObject("team-a", "added", { entitlements: [{ name: "local-entitlement" }] }));
            after.put(secret("team-a", "local-entitlement", { "local.pem": SECRET_VALUE, "local-key.pem": SECRET_VALUE }));
            after.put(secret("shared-config", "etc-pki-entitlement", { "sca.pem": SECRET_VALUE }));
            await after.start(before.port);
            await waitFor(
                () =>
                    state.bundlesIn("team-a").has("added") &&
                    !state.bundlesIn("team-a").has("retired") &&
                    state.clusterBundleMap().size === 0,
                "the bundle caches to converge",
            );
            await waitFor(
                () =>
                    state.keysOf("Secret", "team-a", "local-entitlement")?.length === 2 &&
                    Object.keys(state.keyCacheContents()).length === 1,
                "the key caches to converge",
            );
            expect([...state.bundlesIn("team-a").keys()].sort()).toEqual(["added", "local"]);
            expect(state.keysOf("Secret", "team-a", "local-entitlement")).toEqual(["local-key.pem", "local.pem"]);
            expect(state.clusterBundleMap().size).toBe(0);
            expect(state.keyCacheContents()).toEqual({ "Secret/team-a": { "local-entitlement": ["local-key.pem", "local.pem"] } });
        } finally {
            state.stop();
            await after.stop();
        }
    });
});
