/**
 * Entry point of the subscription servers (`node dist/webhook/main.js`), one image for both:
 * `SUBSCRIPTION_SERVER=admission` (the default) runs the admission server, `source-sync` the source
 * sync (webhook/source-sync.ts). Configured by environment variables (see config.ts and
 * docs/subscriptions.md); the admission server listens at once so liveness answers, and reports ready
 * once its caches are synced. SIGTERM/SIGINT shut either down gracefully; the process then exits 0.
 */
import { KubeConfig } from "@kubernetes/client-node";
import pino, { type Logger } from "pino";
import { AccessReviewCache } from "./access-reviews";
import { AdmissionHandler } from "./admission";
import { ClusterState, subjectAccessReviewer } from "./cluster-state";
import { type ServerConfig, type SourceSyncConfig, readServerConfig, readSourceSyncConfig } from "./config";
import { SourceSync, SourceSyncMetrics, sourceSyncHttpServer } from "./source-sync";
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
        readScopes: config.readScopes,
        sourceNamespace: config.sourceNamespace,
        byName: { freshMs: config.byNameTtlMs, negativeMs: config.byNameTtlMs / 6, maxObjects: config.byNameMaxObjects },
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

/** The source sync as a process: its informers, and plain HTTP for probes and metrics. */
export async function startSourceSync(
    config: SourceSyncConfig,
    logger: Logger,
    metrics = new SourceSyncMetrics(),
): Promise<{ sync: SourceSync; port: number; stop(): Promise<void> }> {
    const sync = new SourceSync({
        kubeConfig: kubeConfigFor(config),
        logger,
        sourceNamespace: config.sourceNamespace,
        objects: config.objects,
        resyncMs: config.resyncMs,
        metrics,
    });
    const server = sourceSyncHttpServer(sync, metrics);
    await new Promise<void>((resolve) => server.listen(config.port, resolve));
    const { port } = server.address() as import("node:net").AddressInfo;
    sync.start();
    logger.info({ port, sourceNamespace: config.sourceNamespace, objects: config.objects.length }, "source sync started");
    void sync.settled().then(() => logger.info("every original listed once; ready"));
    return {
        sync,
        port,
        async stop() {
            sync.stop();
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}

function processLogger(level: string, component: string): Logger {
    return pino({ level, base: { component }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** Exits 1 after printing each problem, or returns the configuration. */
function configured<T>(result: { ok: true; config: T } | { ok: false; problems: string[] }, component: string): T {
    if (result.ok) return result.config;
    for (const problem of result.problems) process.stderr.write(`${component}: ${problem}\n`);
    process.exit(1);
}

async function main(): Promise<void> {
    const role = process.env.SUBSCRIPTION_SERVER ?? "admission";
    if (role !== "admission" && role !== "source-sync") {
        process.stderr.write(`subscription-webhook: SUBSCRIPTION_SERVER=${JSON.stringify(role)}: must be admission or source-sync\n`);
        process.exit(1);
    }
    const component = role === "admission" ? "subscription-webhook" : "subscription-source-sync";
    const result = role === "admission" ? { ...readServerConfig(process.env), role } : { ...readSourceSyncConfig(process.env), role };
    const config = configured<ServerConfig | SourceSyncConfig>(result, component);
    const logger = processLogger(config.logLevel, component);
    process.on("unhandledRejection", (error) => {
        logger.fatal({ err: error instanceof Error ? error.message : String(error) }, "unhandled rejection");
        process.exit(1);
    });
    let running: { stop(): Promise<void> };
    try {
        running =
            result.role === "admission"
                ? await startWebhook(config as ServerConfig, logger)
                : await startSourceSync(config as SourceSyncConfig, logger);
    } catch (error) {
        logger.fatal({ err: (error as Error).message }, "cannot start");
        process.exit(1);
    }
    const stop = (signal: string) => {
        logger.info({ signal }, "stopping");
        running.stop().then(
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
