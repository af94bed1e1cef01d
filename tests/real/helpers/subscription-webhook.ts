/**
 * The subscription webhook's server, kept running for a stack that enables subscriptions, as the
 * Deployment's pods would run it on a real cluster. kwok marks the webhook's pods Ready while
 * nothing serves, so under `failurePolicy: Fail` every pod created after the stack's
 * MutatingWebhookConfiguration would be refused, and a test would pass only while the pods it needs
 * happened to be created first. With the keeper, admissions really happen: the API server calls the
 * server the stack built, at the pod IPs kwok gave (helpers/pod-runtime.ts), during `pulumi up` too.
 *
 * The source sync's Deployment is kept the same way (the webhook reads the copies it writes).
 *
 * The keeper is a process of its own (this file run with tsx), because the tests block in the CLI
 * (spawnSync) while the API server calls the webhook. Every second it reads the Deployment, its
 * pods and the Secrets it mounts, over its own API client (a kubectl process a second, for each of
 * the two keepers of a file, was about half of lifecycle.real.ts's 416 kubectl processes at 0.19 s
 * of CPU each, 2026-11-28): once a pod exists it starts the server; when the Deployment's
 * template or a mounted Secret changes (a destroy and up again, a certificate rotation) it restarts
 * it; when the Deployment is gone it stops it. It exits, stopping the server, on SIGTERM or when
 * its parent is gone.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { AppsV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { getObject, type KubeObject, kubectlRun } from "./kubectl";
import { runDeploymentContainer, type RunningContainer, startUntilReady, terminate } from "./pod-runtime";
import { syncCopies } from "./subscription-servers";
import { realEnv, REPO_ROOT } from "./stack";

/** What the stack's fullStackConfig installs (components/subscriptions: its namespace and Deployment). */
export const SUBSCRIPTION_WEBHOOK = { namespace: "subscription-injection", deployment: "subscription-injection-webhook" } as const;

export interface WebhookKeeper {
    /** Whether the server answers /readyz (its informers synced) at every pod IP of the Deployment, and every copy the source sync keeps exists. */
    ready(): Promise<boolean>;
    /** The admission requests the server answered, by outcome (its /metrics). */
    admissions(): Promise<Record<string, number>>;
    /** What the keeper and its servers wrote, for a failing test's message. */
    output(): string;
    stop(): Promise<void>;
}

/** The source sync Deployment beside the webhook (components/subscriptions: it writes the copies the shares point at). */
export const SOURCE_SYNC = { namespace: SUBSCRIPTION_WEBHOOK.namespace, deployment: "subscription-source-sync" } as const;

/** One keeper process for one Deployment: started, its output, stopped. */
async function startKeeper(target: { namespace: string; deployment: string }) {
    const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
    const { child, output } = await startUntilReady(
        `the keeper of ${target.deployment}`,
        tsx,
        [__filename, target.namespace, target.deployment],
        { env: process.env },
        "keeper: watching",
    );
    return {
        output,
        stop: async () => {
            await terminate(child);
            // tsx ends with its child's status, 143 when that child ends on the SIGTERM it forwarded.
            if (child.exitCode !== 0 && child.exitCode !== 143 && child.signalCode === null) {
                throw new Error(`the keeper of ${target.deployment} exited with ${child.exitCode}:\n${output()}`);
            }
        },
    };
}

/**
 * Starts the keepers for the webhook Deployment `deployment` in `namespace` and for the source sync
 * beside it: the webhook reads the keys of a ClusterBundle's copies, which only the sync writes, so
 * without it every admission asking for a ClusterBundle would be refused (the copies never exist).
 * A keeper whose Deployment the stack does not declare only watches.
 */
export async function keepSubscriptionWebhook(
    target: { namespace: string; deployment: string } = SUBSCRIPTION_WEBHOOK,
    sync: { namespace: string; deployment: string } = SOURCE_SYNC,
): Promise<WebhookKeeper> {
    const webhook = await startKeeper(target);
    let copies: Awaited<ReturnType<typeof startKeeper>>;
    try {
        copies = await startKeeper(sync);
    } catch (error) {
        await webhook.stop();
        throw error;
    }
    return {
        ready: async () => {
            const answers = await fromEveryPod(target, "/readyz");
            const copied = syncCopies().every((copy) => getObject(copy.kind.toLowerCase(), copy.name, copy.namespace) !== undefined);
            return answers.length > 0 && answers.every((a) => a.status === 200) && copied;
        },
        admissions: () => admissionCounts(target),
        output: () => `${webhook.output()}${copies.output()}`,
        stop: async () => {
            try {
                await webhook.stop();
            } finally {
                await copies.stop();
            }
        },
    };
}

/** GET `route` over TLS from every pod IP of the Deployment, verified as the API server verifies it (the Service's name, the stack's CA). */
async function fromEveryPod(target: { namespace: string; deployment: string }, route: string): Promise<{ status: number; body: string }[]> {
    const secret = getObject("secret", `${target.deployment}-tls`, target.namespace);
    const ca = Buffer.from(secret?.data["ca.crt"] ?? "", "base64");
    const pods = podsOf(target);
    return Promise.all(
        pods.map(
            (pod) =>
                new Promise<{ status: number; body: string }>((resolve) => {
                    const request = https.get(
                        {
                            host: pod.status.podIP,
                            port: 9443,
                            path: route,
                            ca,
                            servername: `${target.deployment}-service.${target.namespace}.svc`,
                            timeout: 2000,
                        },
                        (response) => {
                            let body = "";
                            response.on("data", (d: Buffer) => (body += d.toString("utf8")));
                            response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
                        },
                    );
                    request.on("error", () => resolve({ status: 0, body: "" }));
                    request.on("timeout", () => request.destroy());
                }),
        ),
    );
}

/**
 * The server's admission counter (subscription_webhook_admission_requests_total by outcome). Every
 * pod IP reaches the one server the keeper runs (the namespace holds the whole pod CIDR), so one
 * answer is the whole count.
 */
async function admissionCounts(target: { namespace: string; deployment: string }): Promise<Record<string, number>> {
    const [first] = await fromEveryPod(target, "/metrics");
    if (!first || first.status !== 200) {
        throw new Error(`the webhook server did not answer /metrics (HTTP ${first?.status ?? "no pod"})`);
    }
    const counts: Record<string, number> = {};
    for (const m of first.body.matchAll(/^subscription_webhook_admission_requests_total\{outcome="([a-z]+)"\} (\d+)/gm)) {
        counts[m[1]] = Number(m[2]);
    }
    return counts;
}

function podsOf(target: { namespace: string; deployment: string }): KubeObject[] {
    const deployment = getObject("deployment", target.deployment, target.namespace);
    if (!deployment) {
        return [];
    }
    const selector = Object.entries(deployment.spec.selector.matchLabels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
    const pods = kubectlRun(["get", "pods", "-n", target.namespace, "-l", selector, "-o", "json"]);
    return pods.status === 0 ? ((JSON.parse(pods.stdout).items as KubeObject[]).filter((p) => p.status?.podIP) ?? []) : [];
}

/** The keeper's clients of the run's cluster, as the admin kubeconfig gives it; made once per keeper process. */
let clients: { apps: AppsV1Api; core: CoreV1Api } | undefined;

function apiClients(): { apps: AppsV1Api; core: CoreV1Api } {
    if (!clients) {
        const config = new KubeConfig();
        config.loadFromFile(realEnv("REAL_KUBECONFIG"));
        clients = { apps: config.makeApiClient(AppsV1Api), core: config.makeApiClient(CoreV1Api) };
    }
    return clients;
}

/**
 * What the server runs from: the Deployment (uid and pod template) and the resourceVersion of each
 * Secret it mounts, the namespace's three lists read together. A change means the server must be
 * restarted; undefined while nothing can run (no Deployment, no pod with an IP, a Secret not there
 * yet) or while the API server does not answer.
 */
async function servingInputs(target: { namespace: string; deployment: string }): Promise<string | undefined> {
    const { apps, core } = apiClients();
    let lists;
    try {
        lists = await Promise.all([
            apps.listNamespacedDeployment(target.namespace),
            core.listNamespacedPod(target.namespace),
            core.listNamespacedSecret(target.namespace),
        ]);
    } catch {
        return undefined;
    }
    const [deployments, podItems, secretItems] = lists.map((list) => list.body.items as KubeObject[]);
    const deployment = deployments.find((i) => i.metadata.name === target.deployment);
    if (!deployment) {
        return undefined;
    }
    const labels = Object.entries(deployment.spec.selector.matchLabels as Record<string, string>);
    const pods = podItems.filter((i) => i.status?.podIP && labels.every(([k, v]) => i.metadata.labels?.[k] === v));
    const secrets = ((deployment.spec.template.spec.volumes ?? []) as KubeObject[])
        .filter((v) => v.secret)
        .map((v) => secretItems.find((i) => i.metadata.name === v.secret.secretName)?.metadata.resourceVersion);
    if (pods.length === 0 || secrets.some((v) => v === undefined)) {
        return undefined;
    }
    return JSON.stringify([deployment.metadata.uid, deployment.spec.template, secrets]);
}

async function keep(target: { namespace: string; deployment: string }): Promise<void> {
    const parent = process.ppid;
    let server: RunningContainer | undefined;
    let inputs: string | undefined;
    let generation = 0;
    let stopping = false;
    const stopServer = async () => {
        if (server) {
            await server.stop();
            process.stdout.write(`keeper: stopped server ${generation}\n${server.output()}`);
            server = undefined;
            inputs = undefined;
        }
    };
    const finish = async () => {
        stopping = true;
        await stopServer();
        process.exit(0);
    };
    process.on("SIGTERM", () => void finish());
    process.on("SIGINT", () => void finish());
    process.stdout.write(`keeper: watching ${target.namespace}/${target.deployment}\n`);
    while (!stopping) {
        if (process.ppid !== parent) {
            // The test process is gone: nothing of the run may outlive it.
            await finish();
        }
        const now = await servingInputs(target);
        if (now !== inputs || (server && server.process.exitCode !== null)) {
            await stopServer();
            if (now !== undefined) {
                generation++;
                const dir = path.join(realEnv("REAL_WORK"), "webhook-keeper", `${target.deployment}-${generation}`);
                fs.rmSync(dir, { recursive: true, force: true });
                fs.mkdirSync(dir, { recursive: true });
                try {
                    server = await runDeploymentContainer(target.namespace, target.deployment, dir);
                    inputs = now;
                    process.stdout.write(`keeper: started server ${generation} (pid ${server.process.pid})\n`);
                } catch (error) {
                    // The objects changed under the read (a destroy in progress): the next round reads again.
                    process.stdout.write(`keeper: could not start server ${generation}: ${(error as Error).message}\n`);
                }
            }
        }
        await new Promise((r) => setTimeout(r, 1000));
    }
}

if (require.main === module) {
    const [namespace, deployment] = process.argv.slice(2);
    keep({ namespace, deployment }).catch((error: Error) => {
        process.stderr.write(`keeper: ${error.stack ?? error.message}\n`);
        process.exit(1);
    });
}
