import { Writable } from "node:stream";
import fc from "fast-check";
import pino from "pino";
import { AdmissionHandler } from "../../webhook/admission";
import type { BundleInfo } from "../../webhook/decision";
import { WebhookMetrics } from "../../webhook/metrics";
import { ResponseMemo } from "../../webhook/response-memo";
import { bundle, keySets, podCreateReview, staticAccess, staticCluster } from "./support/fixtures";

const KEYS = keySets({ "Secret/team-a/local-entitlement": ["tls.pem"], "Secret/team-a/other-entitlement": ["other.pem"] });

/** A handler over a cluster whose bundles the test can change, bumping the version as ClusterState does. */
function setUp(level: "info" | "debug" = "info") {
    let bundles: BundleInfo[] = [bundle("team-a", "local")];
    let version = 1;
    const view = () => staticCluster(bundles, [], KEYS);
    const cluster = {
        bundlesIn: (namespace: string) => view().bundlesIn(namespace),
        clusterBundleMap: () => view().clusterBundleMap(),
        keysOf: KEYS.keysOf,
        whenKeysSynced: () => undefined,
        unsyncedCaches: () => [],
        version: () => version,
    };
    const metrics = new WebhookMetrics({ processMetrics: false });
    const handler = new AdmissionHandler({
        cluster,
        access: staticAccess(new Map()),
        metrics,
        logger: pino({ level }, new Writable({ write: (_chunk, _encoding, done) => done() })),
        lookupTimeoutMs: 1000,
    });
    return {
        handler,
        metrics,
        change(next: BundleInfo[]) {
            bundles = next;
            version++;
        },
        /** Changes the bundles without moving the version: only a replay would still see the old ones. */
        changeSilently(next: BundleInfo[]) {
            bundles = next;
        },
    };
}

/** The text kube-apiserver sends: TypeMeta (kind, apiVersion) first, then request.uid. */
function apiServerText(uid: string, annotations: Record<string, string> = { "subscription.openshift.io/inject-bundle": "local" }): string {
    const review = podCreateReview(uid, "team-a", {
        metadata: { generateName: "app-", annotations },
        spec: { containers: [{ name: "app" }] },
    });
    return JSON.stringify({ kind: review.kind, apiVersion: review.apiVersion, request: review.request });
}

describe("replaying answers to identical admissions (webhook/response-memo.ts)", () => {
    test("GIVEN an allowed pod WHEN identical requests with other uids arrive THEN each gets exactly the bytes a fresh decision gives, with its own uid", async () => {
        const replaying = setUp();
        const deciding = setUp("debug"); // debug logging turns replays off: every answer is decided
        await replaying.handler.handleText(apiServerText("first"));
        await fc.assert(
            fc.asyncProperty(fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/), async (uid) => {
                const replayed = await replaying.handler.handleText(apiServerText(uid));
                const decided = await deciding.handler.handleText(apiServerText(uid));
                expect(replayed).toEqual(decided);
                expect(JSON.parse(replayed.body).response).toMatchObject({ uid, allowed: true, patchType: "JSONPatch" });
            }),
            { numRuns: 50 },
        );
    });

    test("GIVEN a replayable answer WHEN the bundles change silently THEN the old answer is replayed, and WHEN the version moves THEN the pod is decided again", async () => {
        const setup = setUp();
        const first = await setup.handler.handleText(apiServerText("a"));
        setup.changeSilently([]);
        expect((await setup.handler.handleText(apiServerText("b"))).body).toBe(first.body.replace('"uid":"a"', '"uid":"b"'));
        setup.change([]);
        const after = JSON.parse((await setup.handler.handleText(apiServerText("c"))).body).response;
        expect(after).toMatchObject({ uid: "c", allowed: false, status: { code: 404 } });
    });

    test("GIVEN a denied pod WHEN it is sent again THEN it is decided and counted again each time (denials are never replayed)", async () => {
        const setup = setUp();
        const text = (uid: string) => apiServerText(uid, { "subscription.openshift.io/inject-bundle": "missing" });
        await setup.handler.handleText(text("d1"));
        setup.changeSilently([bundle("team-a", "local"), bundle("team-a", "missing", { entitlements: ["other-entitlement"] })]);
        const second = JSON.parse((await setup.handler.handleText(text("d2"))).body).response;
        expect(second).toMatchObject({ uid: "d2", allowed: true, status: { message: "injected Bundle missing" } });
    });

    test("GIVEN requests the memo cannot key WHEN handled THEN they take the full path: a uid JSON would escape, a body that is not JSON", async () => {
        const setup = setUp();
        const escaped = await setup.handler.handleText(apiServerText('a"b'));
        expect(JSON.parse(escaped.body).response.uid).toBe('a"b');
        const broken = await setup.handler.handleText(`${apiServerText("x").slice(0, -1)}`);
        expect(broken.status).toBe(400);
        expect(JSON.parse(broken.body).message).toMatch(/^the body is not valid JSON: /);
    });

    test("GIVEN a memo entry WHEN its TTL passes or the version moves THEN it is not used; WHEN it is fresh THEN the uid is spliced in", () => {
        let now = 0;
        const memo = new ResponseMemo({ ttlMs: 1000, maxEntries: 2, now: () => now });
        const text = (uid: string) => `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"${uid}","x":1}}`;
        const first = memo.keyOf(text("u1"));
        expect(first).toEqual({
            uid: "u1",
            key: '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"","x":1}}',
        });
        memo.remember(first as NonNullable<typeof first>, 7, '{"response":{"uid":"u1","allowed":true}}', "unchanged");
        const second = memo.keyOf(text("u-2")) as NonNullable<typeof first>;
        expect(memo.answer(second, 7)).toEqual({ body: '{"response":{"uid":"u-2","allowed":true}}', outcome: "unchanged" });
        expect(memo.answer(second, 8)).toBeUndefined();
        memo.remember(first as NonNullable<typeof first>, 8, '{"response":{"uid":"u1","allowed":true}}', "unchanged");
        now = 1000;
        expect(memo.answer(second, 8)).toBeUndefined();
        expect(memo.keyOf(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1beta1","request":{"uid":"9f1c"}}`)?.uid).toBe("9f1c");
        expect(memo.keyOf(`{"kind":"Other","apiVersion":"admission.k8s.io/v1","request":{"uid":"9f1c"}}`)).toBeUndefined();
        expect(memo.keyOf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"a\\"b"}}`)).toBeUndefined();
    });
});
