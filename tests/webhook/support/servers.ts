/** Shared set-up for tests (and the benchmark) that run the HTTPS server or child processes. */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { Logger } from "pino";
import type { AdmissionHandler } from "../../../webhook/admission";
import type { WebhookMetrics } from "../../../webhook/metrics";
import { WebhookServer } from "../../../webhook/server";
import { type Authority, createAuthority, issueServingPair, projectPair } from "../../helpers/tls-signer";

/** A temporary directory holding a serving pair (kubelet layout) signed by a fresh CA. */
export async function servingCertificates(prefix: string, serialNumber: string): Promise<{ dir: string; authority: Authority }> {
    const authority = await createAuthority();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    projectPair(dir, await issueServingPair(authority, serialNumber), 1);
    return { dir, authority };
}

export interface TestServerOptions {
    dir: string;
    handler: AdmissionHandler;
    metrics: WebhookMetrics;
    logger: Logger;
    isSynced?: () => boolean;
    maxBodyBytes?: number;
    shutdownDelayMs?: number;
    shutdownTimeoutMs?: number;
    idleCloseAfterMs?: number;
}

/** A WebhookServer on 127.0.0.1 with an ephemeral port and the certificate in `dir`. */
export async function startTestServer(options: TestServerOptions): Promise<{ server: WebhookServer; port: number }> {
    const server = new WebhookServer({
        host: "127.0.0.1",
        port: 0,
        certFile: path.join(options.dir, "tls.crt"),
        keyFile: path.join(options.dir, "tls.key"),
        certPollMs: 60_000,
        handler: options.handler,
        isSynced: options.isSynced ?? (() => true),
        metrics: options.metrics,
        logger: options.logger,
        maxBodyBytes: options.maxBodyBytes ?? 64 * 1024,
        keepAliveTimeoutMs: 120_000,
        shutdownDelayMs: options.shutdownDelayMs ?? 0,
        shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5000,
        idleCloseAfterMs: options.idleCloseAfterMs,
    });
    return { server, port: await server.listen() };
}

/** A loopback port free at the time of asking. */
export function freePort(): Promise<number> {
    return new Promise((resolve) => {
        const probe = net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as net.AddressInfo;
            probe.close(() => resolve(port));
        });
    });
}
