/**
 * Connections as kube-apiserver uses them: HTTP/1.1 only, and graceful shutdown as it sees it: it pools keep-alive HTTP/1.1 connections by the
 * Service host name and reuses an idle one whatever pod is behind it, so the terminating server
 * must close its connections itself (issue 18, point 3). Raw TLS sockets let the test see exactly
 * which connection the server closes and which response says `Connection: close`.
 */
import * as fs from "node:fs";
import * as tls from "node:tls";
import pino from "pino";
import { AdmissionHandler } from "../../webhook/admission";
import { WebhookMetrics } from "../../webhook/metrics";
import type { WebhookServer } from "../../webhook/server";
import type { Authority } from "../helpers/tls-signer";
import { bundle, keySets, podCreateReview, staticAccess, staticCluster } from "./support/fixtures";
import { waitFor } from "./support/wait";
import { servingCertificates, startTestServer } from "./support/servers";

interface Response {
    status: number;
    connection: string | undefined;
    body: string;
}

/** One client connection speaking HTTP/1.1 by hand: keep-alive unless the server says otherwise. */
class Connection {
    readonly closed: Promise<void>;
    private buffer = "";
    private waiting: ((response: Response) => void) | undefined;

    private constructor(private readonly socket: tls.TLSSocket) {
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => {
            this.buffer += chunk;
            this.deliver();
        });
        this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
    }

    static open(port: number, ca: string): Promise<Connection> {
        return new Promise((resolve, reject) => {
            const socket = tls.connect({ host: "127.0.0.1", port, servername: "localhost", ca, ALPNProtocols: ["http/1.1"] }, () =>
                resolve(new Connection(socket)),
            );
            socket.once("error", reject);
        });
    }

    get isClosed(): boolean {
        return this.socket.destroyed || this.socket.readableEnded;
    }

    post(body: string): Promise<Response> {
        const reply = new Promise<Response>((resolve) => (this.waiting = resolve));
        this.socket.write(
            `POST /mutate-pods HTTP/1.1\r\nHost: webhook.subscriptions.svc:443\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        return reply;
    }

    private deliver(): void {
        const end = this.buffer.indexOf("\r\n\r\n");
        if (end < 0 || !this.waiting) return;
        const lines = this.buffer.slice(0, end).split("\r\n");
        const header = (name: string) =>
            lines
                .find((line) => line.toLowerCase().startsWith(`${name}:`))
                ?.slice(name.length + 1)
                .trim();
        const length = Number(header("content-length"));
        if (this.buffer.length < end + 4 + length) return;
        const response = {
            status: Number(lines[0].split(" ")[1]),
            connection: header("connection"),
            body: this.buffer.slice(end + 4, end + 4 + length),
        };
        this.buffer = this.buffer.slice(end + 4 + length);
        const resolve = this.waiting;
        this.waiting = undefined;
        resolve(response);
    }

    destroy(): void {
        this.socket.destroy();
    }
}

/** A pod CREATE in team-a (answered at once) or in "held" (its decision waits until the test releases it). */
function review(uid: string, namespace = "team-a"): string {
    const pod = {
        metadata: { generateName: "app-", annotations: { "subscription.openshift.io/inject-bundle": "local" } },
        spec: { containers: [{ name: "app" }] },
    };
    return JSON.stringify(podCreateReview(uid, namespace, pod));
}

describe("graceful shutdown with keep-alive connections pooled by the client (as kube-apiserver does)", () => {
    let dir: string;
    let authority: Authority;
    let server: WebhookServer;
    let port: number;
    const connections: Connection[] = [];
    /** Decisions of pods in "held" in progress, each waiting for `release`. */
    let held: number;
    let release: () => void;
    /** Starts the server; connections idle for `idleCloseAfterMs` are closed at once on shutdown. */
    let start: (idleCloseAfterMs: number) => Promise<void>;

    beforeEach(async () => {
        ({ dir, authority } = await servingCertificates("webhook-shutdown-", "0d01"));
        const metrics = new WebhookMetrics({ processMetrics: false });
        const logger = pino({ level: "silent" });
        held = 0;
        const released = new Promise<void>((resolve) => (release = resolve));
        const cluster = {
            ...staticCluster(
                [bundle("team-a", "local"), bundle("held", "local")],
                [],
                keySets({ "Secret/team-a/local-entitlement": ["tls.pem"], "Secret/held/local-entitlement": ["tls.pem"] }),
            ),
            // The key cache of "held" syncs when the test says so: a request there is in flight for as long as the test needs.
            whenKeysSynced: (namespaces: { Secret: Map<string, Set<string>> }) =>
                namespaces.Secret.has("held") ? (held++, released) : undefined,
        };
        const handler = new AdmissionHandler({ cluster, access: staticAccess(new Map()), metrics, logger, lookupTimeoutMs: 1000 });
        // A shutdown timeout longer than jest's own: the test passes only if the server exits once drained.
        start = async (idleCloseAfterMs: number) => {
            ({ server, port } = await startTestServer({
                dir,
                handler,
                metrics,
                logger,
                shutdownDelayMs: 200,
                shutdownTimeoutMs: 120_000,
                idleCloseAfterMs,
            }));
        };
    });

    afterEach(async () => {
        release();
        for (const connection of connections.splice(0)) connection.destroy();
        await server.shutdown();
        fs.rmSync(dir, { recursive: true, force: true });
    });

    async function open(): Promise<Connection> {
        const connection = await Connection.open(port, authority.cert);
        connections.push(connection);
        return connection;
    }

    test("GIVEN an idle keep-alive connection and a request in flight WHEN shutdown starts THEN the idle one is closed at once, every response closes its connection, and the server exits as soon as they are drained", async () => {
        await start(0);
        const idle = await open();
        expect(await idle.post(review("before"))).toMatchObject({ status: 200, connection: "keep-alive" });
        const busy = await open();
        const inFlight = busy.post(review("in-flight", "held"));
        await waitFor(() => held === 1, "the request to be in flight");

        let exited = false;
        const stopping = server.shutdown().then(() => (exited = true));
        await idle.closed;
        expect(idle.isClosed).toBe(true);
        expect(exited).toBe(false);

        // Within the shutdown delay a new connection (endpoints not yet updated) is still served, once.
        const late = await open();
        const lateReply = await late.post(review("late"));
        expect(lateReply).toMatchObject({ status: 200, connection: "close" });
        expect(JSON.parse(lateReply.body).response).toMatchObject({ uid: "late", allowed: true });
        await late.closed;

        release();
        const reply = await inFlight;
        expect(reply).toMatchObject({ status: 200, connection: "close" });
        expect(JSON.parse(reply.body).response).toMatchObject({ uid: "in-flight", allowed: true, patchType: "JSONPatch" });
        await busy.closed;
        await stopping;
        expect(exited).toBe(true);
        await expect(Connection.open(port, authority.cert)).rejects.toThrow(/ECONNREFUSED/);
    });

    test("GIVEN a keep-alive connection WHEN a request on it is answered during shutdown THEN the answer says Connection: close and the server closes the connection after it", async () => {
        await start(0);
        const reused = await open();
        expect(await reused.post(review("first"))).toMatchObject({ status: 200, connection: "keep-alive" });
        const second = reused.post(review("second", "held"));
        await waitFor(() => held === 1, "the request to be in flight");
        const stopping = server.shutdown();
        release();
        expect(await second).toMatchObject({ status: 200, connection: "close" });
        await reused.closed;
        await stopping;
    });
    test("GIVEN a connection that finished an answer just before shutdown WHEN shutdown starts THEN it is not cut under the client's next request: that request is answered, with Connection: close", async () => {
        await start(60_000);
        const recent = await open();
        expect(await recent.post(review("before"))).toMatchObject({ status: 200, connection: "keep-alive" });
        const stopping = server.shutdown();
        const next = await recent.post(review("next"));
        expect(next).toMatchObject({ status: 200, connection: "close" });
        expect(JSON.parse(next.body).response).toMatchObject({ uid: "next", allowed: true });
        await recent.closed;
        await stopping;
    });
});

describe("protocol", () => {
    test("GIVEN a client offering h2 and http/1.1 WHEN it connects THEN ALPN settles on http/1.1 (HTTP/2 stays off, as kube-apiserver speaks HTTP/1.1 to webhooks)", async () => {
        const { dir, authority } = await servingCertificates("webhook-alpn-", "0d02");
        const metrics = new WebhookMetrics({ processMetrics: false });
        const logger = pino({ level: "silent" });
        const handler = new AdmissionHandler({
            cluster: staticCluster([], [], keySets({})),
            access: staticAccess(new Map()),
            metrics,
            logger,
            lookupTimeoutMs: 1000,
        });
        const { server, port } = await startTestServer({ dir, handler, metrics, logger });
        try {
            const negotiated = await new Promise<string | false | null>((resolve, reject) => {
                const socket = tls.connect(
                    { host: "127.0.0.1", port, servername: "localhost", ca: authority.cert, ALPNProtocols: ["h2", "http/1.1"] },
                    () => {
                        resolve(socket.alpnProtocol);
                        socket.destroy();
                    },
                );
                socket.once("error", reject);
            });
            expect(negotiated).toBe("http/1.1");
        } finally {
            await server.shutdown();
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
