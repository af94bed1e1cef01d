/**
 * The HTTPS server: POST /mutate-pods (AdmissionReview in, AdmissionReview out), GET /healthz,
 * /readyz and /metrics. TLS 1.2 or newer only, with the certificate reloaded in place; request
 * bodies bounded; graceful shutdown (not ready first, then finish what is in flight, then close).
 */
import * as https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { type AdmissionHandler, type HandlerResult, badRequest, callFailure } from "./admission";
import { WEBHOOK_SERVER } from "./api";
import { CertificateFiles, TLS_OPTIONS } from "./certificates";
import type { WebhookMetrics } from "./metrics";

export const MUTATE_PATH = WEBHOOK_SERVER.mutatePodsPath;
const { livenessPath: HEALTHZ, readinessPath: READYZ, metricsPath: METRICS } = WEBHOOK_SERVER;

export interface WebhookServerOptions {
    host: string;
    port: number;
    certFile: string;
    keyFile: string;
    /** Poll interval for certificate changes the directory watch misses. */
    certPollMs: number;
    handler: AdmissionHandler;
    /** Whether the caches are synced (readiness needs it). */
    isSynced: () => boolean;
    metrics: WebhookMetrics;
    logger: Logger;
    maxBodyBytes: number;
    /** Longer than the API server's idle-connection timeout (90 s), so the client closes first. */
    keepAliveTimeoutMs: number;
    /** After SIGTERM: how long to keep accepting connections while not ready, so endpoints drop the pod first. */
    shutdownDelayMs: number;
    /** After the listener closes: how long open connections may take to drain before they are cut. */
    shutdownTimeoutMs: number;
    /**
     * On shutdown, a keep-alive connection idle for at least this long is closed at once; one used
     * more recently is likely to carry the client's next request already, so it is closed by the
     * `Connection: close` of that request's answer instead (or when the listener closes). Default 1000.
     */
    idleCloseAfterMs?: number;
}

const JSON_CONTENT_TYPE = /^application\/json\s*(;|$)/i;

export class WebhookServer {
    private readonly server: https.Server;
    private readonly certificates: CertificateFiles;
    private draining = false;
    private inFlight = 0;
    /** Open connections and when each last finished a response (or connected); absent while one is in progress. */
    private readonly idleSince = new Map<import("node:net").Socket, number>();
    private stopping: Promise<void> | undefined;

    constructor(private readonly options: WebhookServerOptions) {
        this.certificates = new CertificateFiles(
            options.certFile,
            options.keyFile,
            (pair) => this.server.setSecureContext({ ...TLS_OPTIONS, ...pair }),
            options.logger,
            options.metrics,
        );
        const pair = this.certificates.load();
        // HTTP/1.1 only (Node's https never offers ALPN "h2"; this states it). kube-apiserver speaks
        // HTTP/1.1 to admission webhooks so that concurrent admissions spread over connections,
        // hence replicas (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/
        // client.go, issue 75791); one multiplexed HTTP/2 connection would pin them to one pod and
        // defeat the Connection: close drain in shutdown().
        this.server = https.createServer(
            { ...TLS_OPTIONS, ...pair, ALPNProtocols: ["http/1.1"], requestTimeout: 30_000, headersTimeout: 20_000 },
            (req, res) => this.route(req, res),
        );
        this.server.keepAliveTimeout = options.keepAliveTimeoutMs;
        this.server.on("secureConnection", (socket) => {
            this.idleSince.set(socket, Date.now());
            socket.once("close", () => this.idleSince.delete(socket));
        });
        this.server.on("tlsClientError", (error) => options.logger.debug({ err: error.message }, "TLS handshake failed"));
        this.server.on("clientError", (error, socket) => {
            if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
            else socket.destroy();
            options.logger.debug({ err: error.message }, "malformed HTTP request");
        });
    }

    /** Starts listening and watching the certificate files; resolves with the bound port. */
    listen(): Promise<number> {
        this.certificates.watch(this.options.certPollMs);
        return new Promise((resolve, reject) => {
            this.server.once("error", reject);
            this.server.listen(this.options.port, this.options.host, () => {
                this.server.off("error", reject);
                resolve((this.server.address() as AddressInfo).port);
            });
        });
    }

    /** Ready: caches synced and not shutting down. */
    ready(): boolean {
        return !this.draining && this.options.isSynced();
    }

    /** How many times a new certificate has been put in use since start. */
    get certificateReloads(): number {
        return this.certificates.reloads;
    }

    /** Checks the certificate files now (the watch and poll do this on their own). */
    reloadCertificates(): boolean {
        return this.certificates.check();
    }

    private route(req: IncomingMessage, res: ServerResponse): void {
        const socket = req.socket;
        this.idleSince.delete(socket);
        res.once("finish", () => {
            if (!socket.destroyed) this.idleSince.set(socket, Date.now());
        });
        if (this.draining) res.setHeader("connection", "close");
        const path = (req.url ?? "/").split("?", 1)[0];
        if (path === MUTATE_PATH) return this.admit(req, res);
        if (path !== HEALTHZ && path !== READYZ && path !== METRICS)
            return this.reply(res, 404, "text/plain", `no route ${path.slice(0, 100)}\n`);
        if (req.method !== "GET" && req.method !== "HEAD") {
            res.setHeader("allow", "GET, HEAD");
            return this.reply(res, 405, "text/plain", "method not allowed\n");
        }
        req.resume();
        if (path === HEALTHZ) return this.reply(res, 200, "text/plain", "ok\n");
        if (path === READYZ) {
            if (this.ready()) return this.reply(res, 200, "text/plain", "ok\n");
            return this.reply(res, 503, "text/plain", this.draining ? "shutting down\n" : "caches not synced\n");
        }
        this.options.metrics.registry.metrics().then(
            (text) => this.reply(res, 200, this.options.metrics.registry.contentType, text),
            (error: Error) => this.reply(res, 500, "text/plain", `metrics unavailable: ${error.message}\n`),
        );
    }

    private reply(res: ServerResponse, status: number, contentType: string, body: string): void {
        if (res.headersSent || res.destroyed) return;
        // A request that arrived before shutdown began is answered after it: it closes its connection too.
        if (this.draining) res.setHeader("connection", "close");
        res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) });
        res.end(body);
    }

    private admit(req: IncomingMessage, res: ServerResponse): void {
        const started = process.hrtime.bigint();
        this.inFlight++;
        res.once("close", () => {
            this.options.metrics.latency.observe(Number(process.hrtime.bigint() - started) / 1e9);
            this.inFlight--;
        });
        const finish = (result: HandlerResult) => {
            this.options.metrics.admissions.inc({ outcome: result.outcome });
            this.reply(res, result.status, "application/json", result.body);
        };
        if (req.method !== "POST") {
            res.setHeader("allow", "POST");
            req.resume();
            this.options.metrics.admissions.inc({ outcome: "rejected" });
            return this.reply(res, 405, "text/plain", "method not allowed\n");
        }
        const contentType = req.headers["content-type"] ?? "";
        if (!JSON_CONTENT_TYPE.test(contentType)) {
            req.resume();
            return finish(badRequest(`content type must be application/json, not ${JSON.stringify(contentType.slice(0, 100))}`));
        }
        const limit = this.options.maxBodyBytes;
        const declared = Number(req.headers["content-length"]);
        if (declared > limit) return this.refuseOversized(req, res, finish);
        const chunks: Buffer[] = [];
        let size = 0;
        let refused = false;
        req.on("data", (chunk: Buffer) => {
            if (refused) return;
            size += chunk.length;
            if (size > limit) {
                refused = true;
                chunks.length = 0;
                this.refuseOversized(req, res, finish);
            } else chunks.push(chunk);
        });
        req.on("error", () => res.destroy());
        req.on("end", () => {
            if (refused) return;
            this.options.handler.handleText(Buffer.concat(chunks, size).toString("utf8")).then(finish, (error: Error) => {
                // The handler answers its own failures; reaching this is a bug, reported as one.
                this.options.logger.error({ err: error.message }, "admission handler failed");
                finish(callFailure(500, "internal error"));
            });
        });
    }

    /** 400 at once, then the connection closes; what the client still sends is read and dropped (bounded by requestTimeout). */
    private refuseOversized(req: IncomingMessage, res: ServerResponse, finish: (result: HandlerResult) => void): void {
        res.setHeader("connection", "close");
        req.removeAllListeners("data");
        req.resume();
        finish(badRequest(`the body exceeds ${this.options.maxBodyBytes} bytes`));
    }

    /**
     * Graceful stop, as the API server sees it. kube-apiserver pools keep-alive HTTP/1.1
     * connections by the Service's host name and reuses an idle one whatever pod is behind it, so
     * leaving endpoints is not enough: this server must end its own connections.
     * - at once: readiness fails; every response from now on (to requests in flight or new ones,
     *   on any connection) carries `Connection: close`, so Node closes the connection after it and
     *   the client opens its next one through the Service; idle keep-alive connections are closed
     *   (after a turn of the event loop, so a request already in a socket buffer is read first and
     *   answered rather than reset). A connection that finished a response less than
     *   `idleCloseAfterMs` ago is left to its next answer: a busy client has probably sent that
     *   request already, and closing under it would fail the admission (kube-apiserver's REST
     *   client retries a request cut by a reset connection only for GET:
     *   kubernetes/kubernetes staging/src/k8s.io/client-go/rest/request.go). A request still on the wire
     *   can meet a close at the end of the delay, as with any server that closes idle connections;
     * - for `shutdownDelayMs`: new connections are still accepted (endpoints and kube-proxy take a
     *   moment to drop the pod), each answered once and closed;
     * - then the listener closes and the process may exit as soon as the last connection has
     *   drained, or after `shutdownTimeoutMs` with whatever remains cut (delay plus timeout stay
     *   within the pod's termination grace period).
     */
    shutdown(): Promise<void> {
        this.stopping ??= (async () => {
            this.draining = true;
            this.options.logger.info(
                { inFlight: this.inFlight, delayMs: this.options.shutdownDelayMs },
                "shutting down: not ready, draining",
            );
            // Two turns: the poll phase between them reads and parses whatever requests already sit
            // in the sockets' buffers, so those connections count as busy and get an answer.
            for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
            const quietSince = Date.now() - (this.options.idleCloseAfterMs ?? 1000);
            for (const [socket, since] of this.idleSince) if (since <= quietSince) socket.destroy();
            await new Promise((resolve) => setTimeout(resolve, this.options.shutdownDelayMs));
            let timer: NodeJS.Timeout | undefined;
            const drained = new Promise<void>((resolve) => this.server.close(() => resolve()));
            await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, this.options.shutdownTimeoutMs)))]);
            clearTimeout(timer);
            this.server.closeAllConnections();
            await drained;
            this.certificates.stop();
            this.options.logger.info("server closed");
        })();
        return this.stopping;
    }
}
