/**
 * The live VerifyApi: HTTPS to the API server with the kubeconfig's credentials (client-node's
 * KubeConfig), reads, `?dryRun=All` creates and SubjectAccessReviews only; and a backend's
 * certificate read through the API server's pods/portforward (client-node's PortForward over
 * WebSocket), or directly from the pod's address when the port-forward cannot be made (a node
 * without a kubelet that forwards, as kwok's; a runner on the pod network reaches the address).
 */
import { X509Certificate } from "node:crypto";
import * as https from "node:https";
import { Duplex, PassThrough } from "node:stream";
import * as tls from "node:tls";
import type { KubeConfig } from "@kubernetes/client-node";
import type { ObjectRef } from "../../components/shared/object-refs";
import type { Review, VerifyApi } from "./checks";
import type { Json } from "./declared";

const TIMEOUT_MS = 8000;
const METADATA_ONLY = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

interface Answer {
    readonly status: number;
    readonly body: string;
}

function statusMessage(answer: Answer): string {
    try {
        const s = JSON.parse(answer.body) as { message?: string; reason?: string };
        return s.message ?? s.reason ?? answer.body;
    } catch {
        return answer.body.slice(0, 300);
    }
}

/** The certificates a TLS peer sent, leaf first, read without trusting them. */
function peerChain(socket: tls.TLSSocket): X509Certificate[] {
    const chain: X509Certificate[] = [];
    let c: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
    const seen = new Set<string>();
    while (c?.raw && !seen.has(c.fingerprint256)) {
        seen.add(c.fingerprint256);
        chain.push(new X509Certificate(c.raw));
        c = c.issuerCertificate;
    }
    return chain;
}

function handshake(options: tls.ConnectionOptions): Promise<X509Certificate[]> {
    return new Promise((resolve, reject) => {
        // The chain is judged by certificates.ts against the object's caBundle, not by Node's trust store.
        const socket = tls.connect({ ...options, rejectUnauthorized: false });
        const timer = setTimeout(() => {
            socket.destroy();
            reject(new Error(`no TLS handshake within ${TIMEOUT_MS / 1000} s`));
        }, TIMEOUT_MS);
        socket.once("secureConnect", () => {
            clearTimeout(timer);
            const chain = peerChain(socket);
            socket.destroy();
            resolve(chain);
        });
        socket.once("error", (error) => {
            clearTimeout(timer);
            socket.destroy();
            reject(error);
        });
    });
}

export async function liveApi(kc: KubeConfig): Promise<VerifyApi> {
    const server = kc.getCurrentCluster()?.server;
    if (!server) throw new Error(`kube context "${kc.getCurrentContext()}" names no cluster server`);

    async function call(method: string, path: string, body?: unknown, accept = "application/json"): Promise<Answer> {
        const url = new URL(path, server);
        const options: https.RequestOptions = {
            method,
            hostname: url.hostname,
            port: url.port,
            path: `${url.pathname}${url.search}`,
            headers: { Accept: accept, ...(body ? { "Content-Type": "application/json" } : {}) },
            timeout: 30_000,
        };
        await kc.applyToHTTPSOptions(options);
        return new Promise((resolve, reject) => {
            const request = https.request(options, (response) => {
                const parts: Buffer[] = [];
                response.on("data", (d: Buffer) => parts.push(d));
                response.on("end", () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString("utf8") }));
            });
            request.on("timeout", () => request.destroy(new Error(`${method} ${path}: no answer within 30 s`)));
            request.on("error", (error) => reject(new Error(`${method} ${server}${path}: ${error.message}`)));
            if (body) request.write(JSON.stringify(body));
            request.end();
        });
    }
    const failed = (method: string, path: string, a: Answer) =>
        new Error(
            `${method} ${path} answered HTTP ${a.status}: ${statusMessage(a)}${a.status === 403 ? " (verify's permissions: docs/operations.md, Verify)" : ""}`,
        );

    const { PortForward } = await import("@kubernetes/client-node");
    async function throughApiServer(namespace: string, name: string, port: number): Promise<X509Certificate[]> {
        const fromPod = new PassThrough();
        const toPod = new PassThrough();
        const errors = new PassThrough();
        let errorText = "";
        errors.on("data", (d: Buffer) => (errorText += d.toString("utf8")));
        const forward = new PortForward(kc, true);
        const ws = await Promise.race([
            forward.portForward(namespace, name, [port], fromPod, errors, toPod),
            new Promise<never>((_, reject) =>
                setTimeout(() => reject(new Error(`no port-forward within ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS),
            ),
        ]);
        try {
            return await handshake({ socket: Duplex.from({ readable: fromPod, writable: toPod }) });
        } catch (error) {
            throw new Error(errorText.trim() || (error as Error).message);
        } finally {
            const socket = typeof ws === "function" ? ws() : ws;
            socket?.close();
        }
    }

    return {
        now: new Date(),
        async get(path) {
            const a = await call("GET", path);
            if (a.status === 404) return undefined;
            if (a.status !== 200) throw failed("GET", path, a);
            return JSON.parse(a.body) as Json;
        },
        async exists(ref: ObjectRef) {
            const prefix = ref.apiVersion.includes("/") ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
            const path = `${prefix}${ref.namespace ? `/namespaces/${ref.namespace}` : ""}/${ref.plural}/${ref.name}`;
            // Metadata only (components/shared/object-presence.ts): only the status is used.
            const a = await call("GET", path, undefined, METADATA_ONLY);
            if (a.status === 200) return true;
            if (a.status === 404) return false;
            throw failed("GET", path, a);
        },
        async list(path, labelSelector) {
            const items: Json[] = [];
            let token = "";
            do {
                const query = new URLSearchParams({
                    limit: "500",
                    ...(labelSelector ? { labelSelector } : {}),
                    ...(token ? { continue: token } : {}),
                });
                const a = await call("GET", `${path}?${query}`);
                if (a.status === 404) return [];
                if (a.status !== 200) throw failed("GET", path, a);
                const page = JSON.parse(a.body) as { items?: Json[]; metadata?: { continue?: string } };
                items.push(...(page.items ?? []));
                token = page.metadata?.continue ?? "";
            } while (token);
            return items;
        },
        async dryRunCreate(path, object) {
            const a = await call("POST", `${path}?dryRun=All&fieldManager=cluster-platform-verify`, object);
            if (a.status === 200 || a.status === 201) return { object: JSON.parse(a.body) as Json };
            // Verify itself may not create pods there: a usage error, not the canary's verdict.
            if (a.status === 401 || (a.status === 403 && /cannot create resource/.test(a.body))) throw failed("POST", path, a);
            return { refused: `HTTP ${a.status}: ${statusMessage(a)}` };
        },
        async review(r: Review) {
            const path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
            const a = await call("POST", path, {
                apiVersion: "authorization.k8s.io/v1",
                kind: "SubjectAccessReview",
                spec: {
                    user: r.user,
                    groups: r.groups,
                    resourceAttributes: { verb: r.verb, group: r.group, resource: r.resource, namespace: r.namespace, name: r.name },
                },
            });
            if (a.status !== 201 && a.status !== 200) throw failed("POST", path, a);
            const status = (JSON.parse(a.body) as { status?: { allowed?: boolean; reason?: string } }).status;
            return { allowed: status?.allowed === true, reason: status?.reason ?? "" };
        },
        async servedChain(pod, port) {
            try {
                return { chain: await throughApiServer(pod.namespace, pod.name, port), via: "through the API server (pods/portforward)" };
            } catch (forwardError) {
                const why = (forwardError as Error).message.split("\n")[0];
                try {
                    return {
                        chain: await handshake({ host: pod.address, port }),
                        via: `directly from ${pod.address}:${port} (pods/portforward failed: ${why})`,
                    };
                } catch (directError) {
                    return {
                        error: `pods/portforward failed (${why}) and ${pod.address}:${port} is not reachable from here (${(directError as Error).message})`,
                    };
                }
            }
        },
    };
}
