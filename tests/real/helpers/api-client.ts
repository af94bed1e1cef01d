/**
 * The real tier's API server through Node's https, for tests that send it thousands of requests
 * (SubjectAccessReviews, server-side applies), where a `kubectl` process per request, or kubectl's
 * one-at-a-time walk through a List, would cost more than the requests themselves.
 *
 * One keep-alive Agent: a bounded pool of TLS connections, every request queued on it. A request is
 * retried only when the transport fails (a connection reset or closed before the answer, no answer
 * in time), at most `TRANSPORT_ATTEMPTS` times, each failure recorded with its reason; an answer,
 * whatever its status, is never retried.
 */
import * as https from "node:https";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubeObject } from "./kubectl";

const TRANSPORT_ATTEMPTS = 4;
const ANSWER_TIMEOUT_MS = 60_000;

/** An answer of the API server: its status, and its body as JSON (`{unparsed}` when it is not). */
export interface Answer {
    status: number;
    json: KubeObject;
}

export class ApiClient {
    /** Every transport failure that was retried, with its reason (a test prints the count). */
    readonly transportRetries: string[] = [];

    private constructor(
        readonly server: URL,
        readonly agent: https.Agent,
    ) {}

    /** A client of the current context of `kubeconfig`, with a pool of `sockets` connections. */
    static async fromKubeconfig(kubeconfig: string, sockets: number): Promise<ApiClient> {
        const config = new KubeConfig();
        config.loadFromFile(kubeconfig);
        const options: https.AgentOptions = {};
        await config.applyToHTTPSOptions(options as never);
        const server = new URL(config.getCurrentCluster()?.server as string);
        return new ApiClient(
            server,
            new https.Agent({ keepAlive: true, maxSockets: sockets, ca: options.ca, cert: options.cert, key: options.key }),
        );
    }

    /** `method path` with `body` (JSON unless `contentType` says otherwise), retried on transport failures only. */
    async request(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<Answer> {
        const data = body === undefined ? undefined : JSON.stringify(body);
        for (let attempt = 1; ; attempt++) {
            try {
                return await this.send(method, path, data, contentType);
            } catch (error) {
                const reason =
                    `${method} ${path.split("?")[0]}: ${(error as NodeJS.ErrnoException).code ?? ""} ${(error as Error).message}`.trim();
                if (attempt >= TRANSPORT_ATTEMPTS) {
                    throw new Error(`transport failed ${attempt} times, giving up: ${reason}`);
                }
                this.transportRetries.push(reason);
            }
        }
    }

    /** Closes the pool's connections. */
    destroy(): void {
        this.agent.destroy();
    }

    private send(method: string, path: string, data: string | undefined, contentType: string): Promise<Answer> {
        return new Promise((resolve, reject) => {
            const req = https.request(
                {
                    agent: this.agent,
                    host: this.server.hostname,
                    port: this.server.port,
                    method,
                    path,
                    headers: { accept: "application/json", ...(data !== undefined ? { "content-type": contentType } : {}) },
                },
                (res) => {
                    const chunks: Buffer[] = [];
                    res.on("data", (chunk: Buffer) => chunks.push(chunk));
                    res.on("error", reject);
                    res.on("end", () => {
                        const text = Buffer.concat(chunks).toString("utf8");
                        try {
                            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text || "{}") });
                        } catch {
                            // An answer that is not JSON is an answer: reported, not retried.
                            resolve({ status: res.statusCode ?? 0, json: { unparsed: text.slice(0, 300) } });
                        }
                    });
                },
            );
            req.setTimeout(ANSWER_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${ANSWER_TIMEOUT_MS / 1000} s`)));
            req.on("error", reject);
            req.end(data);
        });
    }
}

/** `work` over `items`, at most `limit` at a time; the results in the items' order. */
export async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array(items.length);
    let next = 0;
    await Promise.all(
        Array.from({ length: limit }, async () => {
            for (let i = next++; i < items.length; i = next++) {
                out[i] = await work(items[i]);
            }
        }),
    );
    return out;
}

/** A SubjectAccessReview's spec: who (`user`, `groups`) asks what (resource or non-resource attributes). */
export interface AccessReviewSpec {
    user: string;
    groups?: readonly string[];
    resourceAttributes?: Record<string, string>;
    nonResourceAttributes?: { path: string; verb: string };
}

/**
 * The API server's answer (`status.allowed`) to each of `specs`, in their order, `inFlight` at a
 * time. A review is a pure question of the RBAC objects the server holds, so equal specs are asked
 * once (`distinct` says how many were). A status other than 201 fails, naming the review.
 */
export async function askAccessReviews(
    client: ApiClient,
    specs: readonly AccessReviewSpec[],
    inFlight: number,
): Promise<{ allowed: boolean[]; distinct: number }> {
    const keys = specs.map((spec) => JSON.stringify(spec));
    const distinct = [...new Set(keys)];
    const answers = await inParallel(distinct, inFlight, async (key) => {
        const { status, json } = await client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: JSON.parse(key) as AccessReviewSpec,
        });
        if (status !== 201) {
            throw new Error(`SubjectAccessReview ${key} failed: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`);
        }
        return json.status?.allowed === true;
    });
    const byKey = new Map(distinct.map((key, i) => [key, answers[i]]));
    return { allowed: keys.map((key) => byKey.get(key) as boolean), distinct: distinct.length };
}
