/**
 * Admissions under load, over loopback HTTPS, for the benchmark (scripts/bench/webhook.ts) and the
 * webhook's resilience tests (tests/webhook/resilience.test.ts): concurrent keep-alive workers,
 * each waiting for its answer before sending the next, as kube-apiserver's webhook client does;
 * and a rolling restart of replicas behind one address while they answer.
 */
import type { ChildProcess } from "node:child_process";
import * as https from "node:https";
import * as net from "node:net";
import { freePort } from "./servers";
import { request } from "./https-client";
import { waitFor } from "./wait";

/** Concurrent connections, as a busy API server holds to one webhook. */
export const CONCURRENCY = 32;

export interface Target {
    name: string;
    port: number;
    agent: https.Agent;
}

export interface LoadResult {
    latenciesMs: Float64Array;
    elapsedMs: number;
    failures: number;
}

/** An AdmissionReview body split around its uid, so each request gets its own. */
export type RequestTemplate = readonly [string, string];

/** A keep-alive pool of `CONCURRENCY` sockets. */
export function keepAliveAgent(): https.Agent {
    return new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
}

/**
 * One admission; true when it was answered 200, allowed, with its uid. A connection cut
 * mid-answer, or an answer that never comes, is a failed admission (the API server's webhook
 * client gives up after the webhook's timeout, 10 s by default).
 */
export function post(target: Target, ca: string, uid: string, agent: https.Agent | false, template: RequestTemplate): Promise<boolean> {
    const body = `${template[0]}${uid}${template[1]}`;
    return new Promise((resolve) => {
        let settled = false;
        const timer = setTimeout(() => req.destroy(new Error("no answer within 10 s")), 10_000);
        const settle = (ok: boolean) => {
            if (!settled) resolve(ok);
            settled = true;
            clearTimeout(timer);
        };
        const req = https.request(
            {
                host: "127.0.0.1",
                servername: "localhost",
                port: target.port,
                path: "/mutate-pods",
                method: "POST",
                ca,
                agent,
                headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
            },
            (res) => {
                let text = "";
                res.setEncoding("utf8");
                res.on("data", (chunk) => (text += chunk));
                res.on("end", () => settle(res.statusCode === 200 && text.includes('"allowed":true') && text.includes(uid)));
                res.on("error", () => settle(false));
            },
        );
        req.on("error", () => settle(false));
        req.on("close", () => setImmediate(() => settle(false)));
        req.end(body);
    });
}

/**
 * `total` admissions from `CONCURRENCY` workers, each waiting for its answer before the next.
 * `pick` chooses the target per request; `fresh(i)` says whether request i opens its own connection.
 */
export async function load(
    total: number,
    ca: string,
    pick: () => Target,
    options: {
        fresh?: (i: number) => boolean;
        onDone?: (done: number) => void;
        prefix: string;
        /** The request body of request i. */
        template: (i: number) => RequestTemplate;
    },
): Promise<LoadResult> {
    const latenciesMs = new Float64Array(total);
    let issued = 0;
    let done = 0;
    let failures = 0;
    const started = process.hrtime.bigint();
    const worker = async () => {
        while (issued < total) {
            const i = issued++;
            const target = pick();
            const begin = process.hrtime.bigint();
            try {
                const agent = options.fresh?.(i) ? false : target.agent;
                if (!(await post(target, ca, `${options.prefix}-${i}`, agent, options.template(i)))) failures++;
            } catch {
                failures++;
            }
            latenciesMs[i] = Number(process.hrtime.bigint() - begin) / 1e6;
            options.onDone?.(++done);
        }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { latenciesMs, elapsedMs: Number(process.hrtime.bigint() - started) / 1e6, failures };
}

/** The exit code of a child process, once it has exited. */
export function exitOf(child: ChildProcess): Promise<number | null> {
    return new Promise((resolve) =>
        child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.once("exit", (code) => resolve(code)),
    );
}

/** Resolves once the server on `port` answers /readyz with 200. */
export async function ready(port: number, ca: string, what: string, timeoutMs = 60_000): Promise<void> {
    await waitFor(async () => (await request({ port, ca, path: "/readyz" }).catch(() => ({ status: 0 }))).status === 200, what, timeoutMs);
}

export interface Replica {
    child: ChildProcess;
    port: number;
}

export interface RollingRestart {
    requests: number;
    failed: number;
    connections: number;
    exitCodes: (number | null)[];
}

/**
 * Three replicas behind one address, restarted one by one under load, the way kube-apiserver
 * reaches them: one keep-alive pool for the Service host name whatever pod each connection ends
 * at (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/client.go). A TCP
 * proxy stands in for the Service and kube-proxy: each new connection goes to the next endpoint;
 * a replica joins the endpoints once /readyz answers 200, and leaves them 200 ms after its
 * SIGTERM (endpoint propagation), while its open connections stay where they are. Only the
 * server closing them moves the client to the other replicas.
 */
export async function rollingRestart(options: {
    first: Replica;
    spawnReplica: (port: number) => ChildProcess;
    /** Every replica started is added here, so the caller can stop what is left. */
    children: ChildProcess[];
    ca: string;
    template: RequestTemplate;
}): Promise<RollingRestart> {
    const endpoints: number[] = [];
    let next = 0;
    let connections = 0;
    // Every socket the proxy holds, so none outlives the scenario: pipe() stops reading a socket
    // once its destination has ended, so a connection whose other side closed never reads its own
    // peer's FIN and stays half-open; what is left is destroyed at the end.
    const open = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
        connections++;
        const upstream = net.connect(endpoints[next++ % endpoints.length], "127.0.0.1");
        for (const socket of [client, upstream]) {
            open.add(socket);
            socket.once("close", () => open.delete(socket));
        }
        client.pipe(upstream).pipe(client);
        client.on("error", () => upstream.destroy());
        upstream.on("error", () => client.destroy());
        client.on("close", () => upstream.end());
        upstream.on("close", () => client.end());
    });
    const proxyPort = await new Promise<number>((resolve) =>
        proxy.listen(0, "127.0.0.1", () => resolve((proxy.address() as net.AddressInfo).port)),
    );
    const start = async (): Promise<Replica> => {
        const port = await freePort();
        const child = options.spawnReplica(port);
        options.children.push(child);
        await ready(port, options.ca, `replica on port ${port} to be ready`);
        endpoints.push(port);
        return { child, port };
    };
    const replicas = [options.first, await start(), await start()];
    endpoints.unshift(options.first.port);

    const service: Target = { name: "service", port: proxyPort, agent: keepAliveAgent() };
    let stopped = false;
    let requests = 0;
    let failed = 0;
    const worker = async () => {
        while (!stopped) {
            const uid = `rolling-${requests++}`;
            if (!(await post(service, options.ca, uid, service.agent, options.template))) failed++;
        }
    };
    const workers = Array.from({ length: CONCURRENCY }, worker);
    const exitCodes: (number | null)[] = [];
    // The pauses are the scenario, not a wait for a result: admissions keep flowing for 500 ms
    // between replacements, and an endpoint leaves 200 ms after its SIGTERM, as it does in a cluster.
    for (const old of replicas) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        await start();
        old.child.kill("SIGTERM");
        await new Promise((resolve) => setTimeout(resolve, 200));
        endpoints.splice(endpoints.indexOf(old.port), 1);
        exitCodes.push(await exitOf(old.child));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    stopped = true;
    await Promise.all(workers);
    service.agent.destroy();
    const closed = new Promise((resolve) => proxy.close(resolve));
    for (const socket of open) socket.destroy();
    await closed;
    return { requests, failed, connections, exitCodes };
}
