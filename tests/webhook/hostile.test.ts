import * as fs from "node:fs";
import * as https from "node:https";
import * as tls from "node:tls";
import fc from "fast-check";
import pino from "pino";
import { ANNOTATIONS } from "../../webhook/api";
import { AdmissionHandler } from "../../webhook/admission";
import { WebhookMetrics } from "../../webhook/metrics";
import { WebhookServer } from "../../webhook/server";
import type { Authority } from "../helpers/tls-signer";
import { allow, bundle, clusterBundle, keySets, podCreateReview, staticAccess, staticCluster } from "./support/fixtures";
import { request } from "./support/https-client";
import { servingCertificates, startTestServer } from "./support/servers";

const LIMIT = 1024 * 1024;

interface Case {
    name: string;
    /** Raw body; JSON values are serialised. */
    body: string | Buffer;
    contentType?: string;
    /** The uid the response must echo when the server answers with an AdmissionResponse. */
    uid?: string;
    chunked?: boolean;
}

const podObject = (annotations: Record<string, string> = {}, spec: Record<string, unknown> = { containers: [{ name: "app" }] }) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { generateName: "x-", annotations },
    spec,
});

function reviewCase(name: string, uid: string, request: Record<string, unknown>, apiVersion = "admission.k8s.io/v1"): Case {
    return {
        name,
        uid,
        body: JSON.stringify(podCreateReview(uid, "team-a", undefined, request, apiVersion)),
    };
}

function hostileCases(): Case[] {
    const cases: Case[] = [];
    // Not JSON at all.
    const garbage = [
        "",
        "{",
        "[",
        "}",
        "nul",
        "tru",
        "{'a':1}",
        '{"a":',
        '{"a" 1}',
        "\u0000\u0001\u0002",
        "<xml/>",
        "NaN",
        "undefined",
        '{"a":1}{"b":2}',
        "\ufeff{}x",
    ];
    for (const text of garbage) cases.push({ name: `invalid JSON ${JSON.stringify(text)}`, body: text });
    for (const bytes of fc.sample(fc.uint8Array({ minLength: 1, maxLength: 200 }), { numRuns: 25, seed: 1 })) {
        cases.push({ name: "random bytes", body: Buffer.concat([Buffer.from("\x01"), Buffer.from(bytes)]) });
    }
    cases.push({ name: "deeply nested arrays", body: `${"[".repeat(200_000)}${"]".repeat(200_000)}` });
    cases.push({ name: "truncated review", body: reviewCase("t", "trunc", { object: podObject() }).body.toString().slice(0, 120) });
    // Wrong content type.
    for (const contentType of [
        "text/plain",
        "application/xml",
        "application/jsonx",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "",
        "json",
        "application/json-patch+json",
    ]) {
        cases.push({
            name: `content type ${JSON.stringify(contentType)}`,
            body: reviewCase("ct", "ct", { object: podObject() }).body,
            contentType,
        });
    }
    // Oversized.
    cases.push({ name: "oversized body (declared)", body: Buffer.alloc(LIMIT + 1, 0x20) });
    cases.push({ name: "oversized body (chunked)", body: Buffer.alloc(LIMIT * 2, 0x20), chunked: true });
    cases.push({ name: "oversized valid JSON", body: JSON.stringify({ pad: "x".repeat(LIMIT) }) });
    // JSON that is not an answerable AdmissionReview.
    const notReviews: unknown[] = [
        null,
        42,
        "text",
        [],
        {},
        [{ apiVersion: "admission.k8s.io/v1" }],
        { apiVersion: "admission.k8s.io/v2", kind: "AdmissionReview", request: { uid: "u" } },
        { apiVersion: "v1", kind: "AdmissionReview", request: { uid: "u" } },
        { apiVersion: "admission.k8s.io/v1", kind: "Review", request: { uid: "u" } },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: null },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: [] },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: "x" },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: {} },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: 7 } },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "" } },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: "u".repeat(257) } },
        { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request: { uid: { toString: "x" } } },
        { __proto__: { apiVersion: "admission.k8s.io/v1" }, kind: "AdmissionReview" },
        { apiVersion: ["admission.k8s.io/v1"], kind: "AdmissionReview", request: { uid: "u" } },
        { uid: "bare", kind: { kind: "Pod" }, object: podObject() },
    ];
    notReviews.forEach((value, i) => cases.push({ name: `not an AdmissionReview #${i}`, body: JSON.stringify(value) }));
    cases.push({
        name: "prototype keys",
        body: '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
    });
    // Reviews of things the webhook does not mutate: allowed, with a message.
    const others: [string, Record<string, unknown>][] = [
        [
            "a Deployment",
            {
                kind: { group: "apps", version: "v1", kind: "Deployment" },
                resource: { group: "apps", version: "v1", resource: "deployments" },
            },
        ],
        ["a Secret", { kind: { group: "", version: "v1", kind: "Secret" }, resource: { group: "", version: "v1", resource: "secrets" } }],
        ["a ConfigMap", { kind: { kind: "ConfigMap" }, resource: { resource: "configmaps" } }],
        ["no kind or resource", { kind: undefined, resource: undefined }],
        ["kind as a string", { kind: "Pod", resource: "pods" }],
        ["pods in another group", { resource: { group: "example.com", version: "v1", resource: "pods" } }],
        ["DELETE", { operation: "DELETE" }],
        ["UPDATE of the pod", { operation: "UPDATE" }],
        ["CONNECT exec", { operation: "CONNECT", subResource: "exec" }],
        ["pods/status", { operation: "UPDATE", subResource: "status" }],
        ["pods/binding", { operation: "CREATE", subResource: "binding" }],
        ["operation as a number", { operation: 1 }],
        ["subResource as an object", { subResource: { x: 1 } }],
    ];
    others.forEach(([name, fields], i) => cases.push(reviewCase(`ignored: ${name}`, `other-${i}`, { object: podObject(), ...fields })));
    // Pod objects that are not pods.
    const badPods: [string, unknown][] = [
        ["no object", undefined],
        ["object null", null],
        ["object array", []],
        ["object string", "pod"],
        ["no metadata", { spec: { containers: [] } }],
        ["metadata array", { metadata: [], spec: { containers: [] } }],
        ["annotations array", { metadata: { annotations: [] }, spec: { containers: [] } }],
        ["annotation value number", { metadata: { annotations: { [ANNOTATIONS.injectBundle]: 5 } }, spec: { containers: [] } }],
        ["annotation value object", { metadata: { annotations: { a: { b: 1 } } }, spec: { containers: [] } }],
        ["no spec", { metadata: {} }],
        ["spec string", { metadata: {}, spec: "x" }],
        ["containers missing", { metadata: {}, spec: {} }],
        ["containers object", { metadata: {}, spec: { containers: { name: "a" } } }],
        ["container null", { metadata: {}, spec: { containers: [null] } }],
        ["container without name", { metadata: {}, spec: { containers: [{ image: "x" }] } }],
        ["container name number", { metadata: {}, spec: { containers: [{ name: 1 }] } }],
        ["volumeMounts string", { metadata: {}, spec: { containers: [{ name: "a", volumeMounts: "x" }] } }],
        ["mount without path", { metadata: {}, spec: { containers: [{ name: "a", volumeMounts: [{ name: "v" }] }] } }],
        [
            "mount subPath number",
            { metadata: {}, spec: { containers: [{ name: "a", volumeMounts: [{ name: "v", mountPath: "/x", subPath: 3 }] }] } },
        ],
        ["initContainers object", { metadata: {}, spec: { containers: [], initContainers: {} } }],
        ["ephemeralContainers string", { metadata: {}, spec: { containers: [], ephemeralContainers: "e" } }],
        ["volumes object", { metadata: {}, spec: { containers: [], volumes: {} } }],
        ["volume without name", { metadata: {}, spec: { containers: [], volumes: [{}] } }],
        ["serviceAccountName number", { metadata: {}, spec: { containers: [], serviceAccountName: 1 } }],
    ];
    badPods.forEach(([name, object], i) => cases.push(reviewCase(`malformed pod: ${name}`, `pod-${i}`, { object })));
    cases.push(reviewCase("no namespace anywhere", "no-ns", { namespace: undefined, object: podObject() }));
    cases.push(reviewCase("namespace as an object", "ns-obj", { namespace: { a: 1 }, object: podObject() }));
    // Hostile annotation values.
    const keys = [
        ANNOTATIONS.injectBundle,
        ANNOTATIONS.injectClusterBundle,
        ANNOTATIONS.allowBundles,
        ANNOTATIONS.denyBundles,
        ANNOTATIONS.allowClusterBundles,
        ANNOTATIONS.denyClusterBundles,
        ANNOTATIONS.bundleGenerations,
    ];
    const fixedValues = [
        "*",
        ",,,,",
        " ",
        "__proto__",
        "constructor",
        "toString,hasOwnProperty",
        "local,local,local",
        "a".repeat(300),
        "x.".repeat(200),
        "../../etc/passwd",
        "local\nmissing",
        "local;rm -rf /",
        '{"bundles":{"local":1}}',
        "\u202eesrever",
        "ｌｏｃａｌ",
        "local,".repeat(5000),
        "missing-".repeat(10) + "x",
        "b".repeat(100_000),
        "\u0000",
        "%00",
        "local, cluster",
        "*,local",
    ];
    let n = 0;
    for (const key of keys)
        for (const value of fixedValues)
            cases.push(
                reviewCase(`annotation ${key}=${JSON.stringify(value.slice(0, 20))}`, `ann-${n++}`, {
                    object: podObject({ [key]: value }),
                }),
            );
    for (const value of fc.sample(fc.string({ unit: "binary", maxLength: 60 }), { numRuns: 30, seed: 3 })) {
        cases.push(
            reviewCase("generated annotation", `gen-${n++}`, {
                object: podObject({ [ANNOTATIONS.injectBundle]: value, [ANNOTATIONS.denyClusterBundles]: value }),
            }),
        );
    }
    // Huge container counts, injected.
    const many = (count: number) =>
        Array.from({ length: count }, (_, i) => ({ name: `c${i}`, volumeMounts: [{ name: "t", mountPath: "/t" }] }));
    for (const [containers, init, ephemeral] of [
        [3000, 0, 0],
        [1, 2000, 0],
        [1, 0, 2000],
        [800, 800, 800],
        [5000, 0, 0],
    ]) {
        cases.push(
            reviewCase(`${containers}+${init}+${ephemeral} containers`, `many-${containers}-${init}-${ephemeral}`, {
                object: podObject(
                    { [ANNOTATIONS.injectBundle]: "local", [ANNOTATIONS.injectClusterBundle]: "cluster" },
                    { containers: many(containers), initContainers: many(init), ephemeralContainers: many(ephemeral) },
                ),
            }),
        );
    }
    // Hostile uids the server must echo, and both review versions.
    for (const uid of ["\u0000", "\n\r\t", "💥".repeat(50), "</script>", '"},"allowed":true,"x":{"', "u".repeat(256)]) {
        cases.push(reviewCase("hostile uid", uid, { object: podObject({ [ANNOTATIONS.injectBundle]: "local" }) }));
        cases.push(
            reviewCase(
                "hostile uid (v1beta1)",
                uid,
                { object: podObject({ [ANNOTATIONS.injectBundle]: "missing" }) },
                "admission.k8s.io/v1beta1",
            ),
        );
    }
    return cases;
}

/** Sends one case and returns how it was answered (throws on anything else). */
async function send(port: number, ca: string, agent: https.Agent, item: Case): Promise<"400" | "response"> {
    const body = typeof item.body === "string" ? Buffer.from(item.body) : item.body;
    const headers: Record<string, string> = {};
    if (item.contentType !== "") headers["content-type"] = item.contentType ?? "application/json";
    if (!item.chunked) headers["content-length"] = String(body.length);
    const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        let answered = false;
        const req = https.request(
            {
                host: "127.0.0.1",
                servername: "localhost",
                port,
                ca,
                agent: body.length > LIMIT ? false : agent,
                method: "POST",
                path: "/mutate-pods",
                headers,
            },
            (res) => {
                answered = true;
                const chunks: Buffer[] = [];
                res.on("data", (chunk: Buffer) => chunks.push(chunk));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
            },
        );
        // Writing may fail once the server has answered an oversized body; the answer still counts.
        req.on("error", (error) => (answered ? undefined : reject(error)));
        if (item.chunked) {
            for (let offset = 0; offset < body.length; offset += 64 * 1024) req.write(body.subarray(offset, offset + 64 * 1024));
            req.end();
        } else req.end(body);
    });
    if (reply.status === 400) {
        // A review the server can read (it has a uid to echo) must get a decision, not a 400.
        if (item.uid !== undefined) throw new Error(`${item.name}: 400 for a review with uid ${JSON.stringify(item.uid)}`);
        const status = JSON.parse(reply.text);
        if (!(typeof status.message === "string" && status.message.length > 0)) throw new Error(`${item.name}: 400 without a message`);
        return "400";
    }
    if (reply.status !== 200) throw new Error(`${item.name}: HTTP ${reply.status}`);
    const response = JSON.parse(reply.text).response;
    if (item.uid === undefined || response.uid !== item.uid) throw new Error(`${item.name}: response uid ${JSON.stringify(response.uid)}`);
    if (!(typeof response.status?.message === "string" && response.status.message.length > 0))
        throw new Error(`${item.name}: response without a message`);
    return "response";
}

describe("malformed and hostile requests", () => {
    let dir: string;
    let authority: Authority;
    let server: WebhookServer;
    let port: number;

    beforeAll(async () => {
        ({ dir, authority } = await servingCertificates("webhook-hostile-", "0b01"));
        const local = bundle("team-a", "local", { entitlements: ["local-entitlement"], yumRepositories: ["local-repo"] });
        const cluster = clusterBundle("cluster", { alwaysInject: true });
        const keys = keySets({
            "Secret/team-a/local-entitlement": ["a.pem"],
            "ConfigMap/team-a/local-repo": ["redhat.repo"],
            "Secret/openshift-config/cluster-entitlement": ["sca.pem"],
        });
        const metrics = new WebhookMetrics({ processMetrics: false });
        const logger = pino({ level: "silent" });
        const handler = new AdmissionHandler({
            cluster: staticCluster([local], [cluster], keys),
            access: staticAccess(allow("cluster")),
            metrics,
            logger,
            lookupTimeoutMs: 1000,
        });
        ({ server, port } = await startTestServer({ dir, handler, metrics, logger, maxBodyBytes: LIMIT }));
    });

    afterAll(async () => {
        await server.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    test("GIVEN at least 200 malformed or hostile requests WHEN sent over HTTPS THEN unreadable ones get 400 with a message, readable reviews an AdmissionResponse with their uid and a message, and the server stays up", async () => {
        const cases = hostileCases();
        const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
        const answers: Record<string, number> = { "400": 0, response: 0 };
        const failures: string[] = [];
        for (let i = 0; i < cases.length; i += 8) {
            const batch = cases.slice(i, i + 8);
            const results = await Promise.allSettled(batch.map((item) => send(port, authority.cert, agent, item)));
            results.forEach((result, j) => {
                if (result.status === "fulfilled") answers[result.value]++;
                else failures.push(`${batch[j].name}: ${(result.reason as Error).message}`);
            });
        }
        // Garbage that is not even HTTP, inside TLS.
        for (const raw of [
            "GARBAGE\r\n\r\n",
            "POST /mutate-pods HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
            "GET / HTTP/9.9\r\nHost: \u0000\r\n\r\n",
        ]) {
            const head = await new Promise<string>((resolve, reject) => {
                const socket = tls.connect({ host: "127.0.0.1", port, ca: authority.cert, servername: "localhost" }, () => socket.end(raw));
                let text = "";
                socket.on("data", (chunk) => (text += chunk.toString()));
                socket.on("close", () => resolve(text));
                socket.on("error", reject);
            });
            if (head.startsWith("HTTP/1.1 400")) answers["400"]++;
            else failures.push(`raw ${JSON.stringify(raw)}: ${JSON.stringify(head.slice(0, 40))}`);
        }
        agent.destroy();
        const total = cases.length + 3;
        console.log(
            `hostile requests: ${total} sent; ${answers["400"]} answered 400, ${answers.response} answered with an AdmissionResponse (uid + message); ${failures.length} failed`,
        );
        expect(failures).toEqual([]);
        expect(total).toBeGreaterThanOrEqual(200);
        // Exactly the unreadable requests (no uid to echo, and the three raw ones) get 400.
        const readable = cases.filter((item) => item.uid !== undefined).length;
        expect(answers).toEqual({ "400": total - readable, response: readable });
        expect((await request({ port, ca: authority.cert, path: "/healthz" })).status).toBe(200);
    });
});
