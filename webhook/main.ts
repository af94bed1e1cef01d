/**
 * Entry point of the subscription injection admission server (`node dist/webhook/main.js`).
 * Configured by environment variables (see config.ts and docs/subscriptions.md); listens at once so
 * liveness answers, and reports ready once its caches are synced. SIGTERM/SIGINT shut it down
 * gracefully; the process then exits 0.
 */
import { KubeConfig } from "@kubernetes/client-node";
import pino, { type Logger } from "pino";
import { AccessReviewCache } from "./access-reviews";
import { AdmissionHandler } from "./admission";
import { ClusterState, subjectAccessReviewer } from "./cluster-state";
import { type ServerConfig, readServerConfig } from "./config";
import { WebhookMetrics } from "./metrics";
import { WebhookServer } from "./server";

export interface RunningWebhook {
    server: WebhookServer;
    state: ClusterState;
    metrics: WebhookMetrics;
    port: number;
    /** Resolves when the caches are first synced. */
    synced: Promise<void>;
    stop(): Promise<void>;
}

export function kubeConfigFor(config: Pick<ServerConfig, "kubeconfig">): KubeConfig {
    const kubeConfig = new KubeConfig();
    if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
    else kubeConfig.loadFromCluster();
    return kubeConfig;
}

/** Builds and starts every part; the caller decides what signals do. */
export async function startWebhook(config: ServerConfig, logger: Logger, metrics = new WebhookMetrics()): Promise<RunningWebhook> {
    const kubeConfig = kubeConfigFor(config);
    const state = new ClusterState({
        kubeConfig,
        metrics,
        logger,
        readNamespaces: config.readNamespaces === "all" ? undefined : config.readNamespaces,
    });
    const access = new AccessReviewCache(subjectAccessReviewer(kubeConfig, metrics), {
        allowedTtlMs: config.accessAllowedTtlMs,
        deniedTtlMs: config.accessDeniedTtlMs,
        sharesOf: (clusterBundle) => state.sharesOf(clusterBundle),
    });
    const handler = new AdmissionHandler({ cluster: state, access, metrics, logger, lookupTimeoutMs: config.lookupTimeoutMs });
    const server = new WebhookServer({ ...config, handler, isSynced: () => state.synced(), metrics, logger });
    const port = await server.listen();
    logger.info({ port, host: config.host }, "listening (HTTPS); not ready until caches sync");
    const synced = state.start().then(() => logger.info("caches synced; ready"));
    return {
        server,
        state,
        metrics,
        port,
        synced,
        async stop() {
            await server.shutdown();
            state.stop();
        },
    };
}

async function main(): Promise<void> {
    const result = readServerConfig(process.env);
    if (!result.ok) {
        for (const problem of result.problems) process.stderr.write(`subscription-webhook: ${problem}\n`);
        process.exit(1);
    }
    const logger = pino({
        level: result.config.logLevel,
        base: { component: "subscription-webhook" },
        timestamp: pino.stdTimeFunctions.isoTime,
    });
    process.on("unhandledRejection", (error) => {
        logger.fatal({ err: error instanceof Error ? error.message : String(error) }, "unhandled rejection");
        process.exit(1);
    });
    let webhook: RunningWebhook;
    try {
        webhook = await startWebhook(result.config, logger);
    } catch (error) {
        logger.fatal({ err: (error as Error).message }, "cannot start");
        process.exit(1);
    }
    const stop = (signal: string) => {
        logger.info({ signal }, "stopping");
        webhook.stop().then(
            () => process.exit(0),
            (error: Error) => {
                logger.error({ err: error.message }, "shutdown failed");
                process.exit(1);
            },
        );
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
}

if (require.main === module) void main();
