/**
 * The subscription capability's two servers, run from the image the stack pushed, as their
 * Deployments' pods would run (pod-runtime.ts): the admission webhook (ready once every pod IP of its
 * Deployment answers /readyz over HTTPS with the stack's CA) and, when the stack declares it, the
 * source sync (ready once every copy it keeps exists in the source namespace).
 */
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { sourceCopyName } from "../../../webhook/api";
import { getObject, kubectl, type KubeObject } from "./kubectl";
import { runDeploymentContainer, type RunningContainer } from "./pod-runtime";
import { realEnv } from "./stack";

export const SUBSCRIPTION_NAMESPACE = "subscription-injection";
export const WEBHOOK_DEPLOYMENT = "subscription-injection-webhook";
export const SOURCE_SYNC_DEPLOYMENT = "subscription-source-sync";
const SERVICE = "subscription-injection-webhook-service";

export interface SubscriptionServers {
    webhook: RunningContainer;
    sync?: RunningContainer;
    /** The webhook's serving CA (to reach its pod IPs). */
    ca: Buffer;
    stop(): Promise<void>;
}

/** GET `path` on port 9443 of every pod IP of the webhook Deployment; true when all answer 200. */
async function allPodsReady(ca: Buffer): Promise<boolean> {
    const pods = (
        JSON.parse(
            kubectl(["get", "pods", "-n", SUBSCRIPTION_NAMESPACE, "-l", "app.kubernetes.io/component=admission-webhook", "-o", "json"]),
        ) as KubeObject
    ).items as KubeObject[];
    const answers = await Promise.all(
        pods.map(
            (pod) =>
                new Promise<number>((resolve) => {
                    const request = https.get(
                        {
                            host: pod.status.podIP,
                            port: 9443,
                            path: "/readyz",
                            ca,
                            servername: `${SERVICE}.${SUBSCRIPTION_NAMESPACE}.svc`,
                            timeout: 2000,
                        },
                        (response) => {
                            response.resume();
                            resolve(response.statusCode ?? 0);
                        },
                    );
                    request.on("error", () => resolve(0));
                    request.on("timeout", () => request.destroy());
                }),
        ),
    );
    return pods.length > 0 && answers.every((status) => status === 200);
}

/** The copies the sync Deployment keeps: `<source namespace>`, `<kind>`, `<copy name>` from its environment. */
export function syncCopies(): { namespace: string; kind: string; name: string }[] {
    const deployment = getObject("deployment", SOURCE_SYNC_DEPLOYMENT, SUBSCRIPTION_NAMESPACE);
    if (!deployment) return [];
    const env = Object.fromEntries(
        (deployment.spec.template.spec.containers[0].env as { name: string; value: string }[]).map((e) => [e.name, e.value]),
    );
    const objects = JSON.parse(env.SOURCE_SYNC_OBJECTS) as { kind: string; namespace: string; name: string }[];
    return objects.map((object) => ({ namespace: env.SOURCE_SYNC_NAMESPACE, kind: object.kind, name: sourceCopyName(object) }));
}

async function until(
    condition: () => boolean | Promise<boolean>,
    what: string,
    failed: () => string | undefined,
    ms = 90_000,
): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await condition())) {
        const why = failed();
        if (Date.now() > deadline || why !== undefined) throw new Error(`${what} did not happen${why ? `:\n${why}` : " in time"}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
    }
}

/** Starts both servers under `<REAL_WORK>/<name>` and waits until the webhook is ready and every copy exists. */
export async function runSubscriptionServers(name: string): Promise<SubscriptionServers> {
    const dir = path.join(realEnv("REAL_WORK"), name);
    fs.mkdirSync(path.join(dir, "webhook"), { recursive: true });
    const webhook = await runDeploymentContainer(SUBSCRIPTION_NAMESPACE, WEBHOOK_DEPLOYMENT, path.join(dir, "webhook"));
    let sync: RunningContainer | undefined;
    const servers: SubscriptionServers = {
        webhook,
        ca: Buffer.from(getObject("secret", `${WEBHOOK_DEPLOYMENT}-tls`, SUBSCRIPTION_NAMESPACE)?.data["ca.crt"], "base64"),
        async stop() {
            await webhook.stop();
            await sync?.stop();
        },
    };
    try {
        if (getObject("deployment", SOURCE_SYNC_DEPLOYMENT, SUBSCRIPTION_NAMESPACE)) {
            fs.mkdirSync(path.join(dir, "sync"), { recursive: true });
            sync = await runDeploymentContainer(SUBSCRIPTION_NAMESPACE, SOURCE_SYNC_DEPLOYMENT, path.join(dir, "sync"));
            servers.sync = sync;
        }
        const exited = () =>
            webhook.process.exitCode !== null
                ? `the webhook exited:\n${webhook.output()}`
                : sync && sync.process.exitCode !== null
                  ? `the source sync exited:\n${sync.output()}`
                  : undefined;
        await until(() => allPodsReady(servers.ca), "the webhook becoming ready at its pod IPs", exited);
        await until(
            () => syncCopies().every((copy) => getObject(copy.kind.toLowerCase(), copy.name, copy.namespace) !== undefined),
            "the source sync writing every copy",
            exited,
        );
        return servers;
    } catch (error) {
        await servers.stop();
        throw error;
    }
}
