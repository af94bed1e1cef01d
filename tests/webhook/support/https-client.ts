/** A small HTTPS client for tests and the benchmark: status, headers, body, and the server certificate's serial. */
import * as https from "node:https";
import type { TLSSocket } from "node:tls";

export interface Reply {
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
    serialNumber?: string;
}

export interface RequestOptions {
    port: number;
    ca: string;
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    agent?: https.Agent | false;
    maxVersion?: "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
    minVersion?: "TLSv1" | "TLSv1.1" | "TLSv1.2" | "TLSv1.3";
}

export function request(options: RequestOptions): Promise<Reply> {
    return new Promise((resolve, reject) => {
        const body = options.body;
        const req = https.request(
            {
                host: "127.0.0.1",
                servername: "localhost",
                port: options.port,
                method: options.method ?? (body === undefined ? "GET" : "POST"),
                path: options.path ?? "/mutate-pods",
                ca: options.ca,
                agent: options.agent ?? false,
                maxVersion: options.maxVersion,
                minVersion: options.minVersion,
                headers: {
                    ...(body !== undefined
                        ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
                        : {}),
                    ...options.headers,
                },
            },
            (res) => {
                const chunks: Buffer[] = [];
                const serialNumber = (res.socket as TLSSocket).getPeerCertificate?.()?.serialNumber;
                res.on("data", (chunk: Buffer) => chunks.push(chunk));
                res.on("end", () =>
                    resolve({
                        status: res.statusCode ?? 0,
                        headers: res.headers,
                        body: Buffer.concat(chunks).toString("utf8"),
                        serialNumber,
                    }),
                );
                res.on("error", reject);
            },
        );
        req.on("error", reject);
        req.end(body);
    });
}
