/** The server's configuration from environment variables, validated all at once. */
import { WEBHOOK_CERT_DIR, WEBHOOK_SERVER } from "./api";
import { KEY_RESOURCES, type SourceObject } from "./access";
import type { ReferencedKind } from "./decision";
import type { ReadScopes } from "./key-sources";
import { isDns1123Label, isDns1123Subdomain, isPlatformNamespace } from "../components/shared/k8s-names";

export interface ServerConfig {
    host: string;
    port: number;
    certFile: string;
    keyFile: string;
    /** kubeconfig file; undefined means in-cluster configuration. */
    kubeconfig?: string;
    logLevel: string;
    maxBodyBytes: number;
    keepAliveTimeoutMs: number;
    shutdownDelayMs: number;
    shutdownTimeoutMs: number;
    certPollMs: number;
    accessAllowedTtlMs: number;
    accessDeniedTtlMs: number;
    lookupTimeoutMs: number;
    /**
     * Per kind, the namespaces whose Secrets / ConfigMaps the server may list (its RBAC: one Role
     * per namespace), or "all". Elsewhere it reads each referenced object by name (key-sources.ts);
     * never a platform namespace whatever this says.
     */
    readScopes: ReadScopes;
    /** Where the copies of ClusterBundle sources are; undefined: ClusterBundle references are read in place. */
    sourceNamespace?: string;
    /** How long the key names of an object read by name are used. */
    byNameTtlMs: number;
    /** Objects read by name kept at most. */
    byNameMaxObjects: number;
}

interface Setting {
    env: string;
    describe: string;
    default: string;
}

/** Every variable, its default and meaning (the table in docs/subscriptions.md is this list). */
export const SETTINGS = {
    host: { env: "WEBHOOK_BIND_ADDRESS", default: "0.0.0.0", describe: "address to listen on" },
    port: { env: "WEBHOOK_PORT", default: String(WEBHOOK_SERVER.port), describe: "HTTPS port (1-65535)" },
    certFile: {
        env: "WEBHOOK_TLS_CERT_FILE",
        default: `${WEBHOOK_CERT_DIR}/tls.crt`,
        describe: "serving certificate (PEM, chain allowed); reloaded on change",
    },
    keyFile: { env: "WEBHOOK_TLS_KEY_FILE", default: `${WEBHOOK_CERT_DIR}/tls.key`, describe: "serving key (PEM); reloaded on change" },
    kubeconfig: { env: "KUBECONFIG", default: "", describe: "kubeconfig file; unset: in-cluster service account" },
    logLevel: { env: "LOG_LEVEL", default: "info", describe: "pino level: fatal, error, warn, info, debug, trace" },
    maxBodyBytes: { env: "WEBHOOK_MAX_REQUEST_BYTES", default: String(3 * 1024 * 1024), describe: "largest accepted request body" },
    keepAliveTimeoutMs: {
        env: "WEBHOOK_KEEPALIVE_TIMEOUT_SECONDS",
        default: "120",
        describe: "idle keep-alive timeout (above the API server's 90 s)",
    },
    shutdownDelayMs: { env: "WEBHOOK_SHUTDOWN_DELAY_SECONDS", default: "5", describe: "after SIGTERM, seconds served while not ready" },
    shutdownTimeoutMs: { env: "WEBHOOK_SHUTDOWN_TIMEOUT_SECONDS", default: "15", describe: "then, seconds in-flight requests may take" },
    certPollMs: { env: "WEBHOOK_CERT_POLL_SECONDS", default: "10", describe: "certificate poll interval (besides the file watch)" },
    accessAllowedTtlMs: {
        env: "WEBHOOK_ACCESS_ALLOWED_TTL_SECONDS",
        default: "60",
        describe: "cache time of an allowed SubjectAccessReview",
    },
    accessDeniedTtlMs: { env: "WEBHOOK_ACCESS_DENIED_TTL_SECONDS", default: "10", describe: "cache time of a denied SubjectAccessReview" },
    lookupTimeoutMs: {
        env: "WEBHOOK_LOOKUP_TIMEOUT_SECONDS",
        default: "5",
        describe: "longest wait for a cold cache or a review before a retryable denial",
    },
    readScopes: {
        env: "WEBHOOK_READ_NAMESPACES",
        default: "*",
        describe:
            "where the server may list namespace-wide: comma-separated `<namespace>` (Secrets and ConfigMaps), `<namespace>/secrets` or `<namespace>/configmaps`, or `*` for all; never a platform namespace; elsewhere each referenced object is read by name",
    },
    sourceNamespace: {
        env: "WEBHOOK_SOURCE_NAMESPACE",
        default: "",
        describe:
            "namespace holding the copies of ClusterBundle sources (the stack's source namespace); unset: read ClusterBundle references in place",
    },
    byNameTtlMs: {
        env: "WEBHOOK_BY_NAME_TTL_SECONDS",
        default: "30",
        describe: "how long the key names of an object read by name are used (a missing or forbidden one: a sixth of it)",
    },
    byNameMaxObjects: {
        env: "WEBHOOK_BY_NAME_MAX_OBJECTS",
        default: "10000",
        describe: "objects read by name kept at most (least recently used first out)",
    },
} as const satisfies Record<keyof ServerConfig, Setting>;

/** `*` (all), or comma-separated `<namespace>` or `<namespace>/<secrets|configmaps>` (may be empty: nowhere). */
function readScopes(text: string, problems: string[]): ReadScopes {
    if (text.trim() === "*") return "all";
    const scopes: Record<ReferencedKind, Set<string>> = { Secret: new Set(), ConfigMap: new Set() };
    const invalid: string[] = [];
    for (const entry of text.split(",").map((item) => item.trim())) {
        if (entry === "") continue;
        const [namespace, resource, ...rest] = entry.split("/");
        const kinds = (Object.keys(KEY_RESOURCES) as ReferencedKind[]).filter(
            (kind) => resource === undefined || KEY_RESOURCES[kind] === resource,
        );
        if (!isDns1123Label(namespace) || rest.length > 0 || kinds.length === 0) invalid.push(entry);
        else for (const kind of kinds) scopes[kind].add(namespace);
    }
    if (invalid.length > 0) {
        problems.push(
            `${SETTINGS.readScopes.env}=${JSON.stringify(text)}: ${invalid.map((entry) => JSON.stringify(entry)).join(", ")} not a namespace name, optionally followed by /secrets or /configmaps; give \`*\` or a comma-separated list`,
        );
    }
    return scopes;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export type ConfigResult = { ok: true; config: ServerConfig } | { ok: false; problems: string[] };

/** Reads the environment; every invalid variable is reported, naming its value and rule. */
export function readServerConfig(env: NodeJS.ProcessEnv): ConfigResult {
    const problems: string[] = [];
    const raw = (setting: Setting) => env[setting.env] ?? setting.default;
    const number = (setting: Setting, min: number, max: number, scale: number) => {
        const text = raw(setting);
        const value = Number(text);
        if (text.trim() === "" || !Number.isFinite(value) || value < min || value > max) {
            problems.push(`${setting.env}=${JSON.stringify(text)}: must be a number from ${min} to ${max}`);
            return 0;
        }
        return Math.round(value * scale);
    };
    const integer = (setting: Setting, min: number, max: number) => {
        const value = number(setting, min, max, 1);
        if (value !== 0 && !Number.isInteger(Number(raw(setting))))
            problems.push(`${setting.env}=${JSON.stringify(raw(setting))}: must be a whole number`);
        return value;
    };
    const text = (setting: Setting) => {
        const value = raw(setting);
        if (value === "") problems.push(`${setting.env}: must not be empty`);
        return value;
    };
    const logLevel = raw(SETTINGS.logLevel);
    if (!LOG_LEVELS.includes(logLevel))
        problems.push(`${SETTINGS.logLevel.env}=${JSON.stringify(logLevel)}: must be one of ${LOG_LEVELS.join(", ")}`);
    const config: ServerConfig = {
        host: text(SETTINGS.host),
        port: integer(SETTINGS.port, 1, 65535),
        certFile: text(SETTINGS.certFile),
        keyFile: text(SETTINGS.keyFile),
        kubeconfig: raw(SETTINGS.kubeconfig) || undefined,
        logLevel,
        maxBodyBytes: integer(SETTINGS.maxBodyBytes, 1024, 64 * 1024 * 1024),
        keepAliveTimeoutMs: number(SETTINGS.keepAliveTimeoutMs, 1, 3600, 1000),
        shutdownDelayMs: number(SETTINGS.shutdownDelayMs, 0, 300, 1000),
        shutdownTimeoutMs: number(SETTINGS.shutdownTimeoutMs, 0, 300, 1000),
        certPollMs: number(SETTINGS.certPollMs, 0.1, 3600, 1000),
        accessAllowedTtlMs: number(SETTINGS.accessAllowedTtlMs, 0, 3600, 1000),
        accessDeniedTtlMs: number(SETTINGS.accessDeniedTtlMs, 0, 3600, 1000),
        lookupTimeoutMs: number(SETTINGS.lookupTimeoutMs, 0.1, 60, 1000),
        readScopes: readScopes(raw(SETTINGS.readScopes), problems),
        byNameTtlMs: number(SETTINGS.byNameTtlMs, 1, 3600, 1000),
        byNameMaxObjects: integer(SETTINGS.byNameMaxObjects, 100, 1_000_000),
    };
    const sourceNamespace = raw(SETTINGS.sourceNamespace);
    if (sourceNamespace !== "") {
        if (isDns1123Label(sourceNamespace)) config.sourceNamespace = sourceNamespace;
        else problems.push(`${SETTINGS.sourceNamespace.env}=${JSON.stringify(sourceNamespace)}: not a namespace name`);
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}

/** The source sync's configuration (webhook/source-sync.ts), from the same kind of environment. */
export interface SourceSyncConfig {
    sourceNamespace: string;
    objects: SourceObject[];
    resyncMs: number;
    /** Plain HTTP for /healthz, /readyz and /metrics. */
    port: number;
    kubeconfig?: string;
    logLevel: string;
}

export const SOURCE_SYNC_SETTINGS = {
    sourceNamespace: { env: "SOURCE_SYNC_NAMESPACE", default: "", describe: "the source namespace the copies are written to" },
    objects: {
        env: "SOURCE_SYNC_OBJECTS",
        default: "[]",
        describe: 'JSON list of the originals to copy: [{"kind":"Secret"|"ConfigMap","namespace":...,"name":...,"shares":[...]}]',
    },
    resyncMs: { env: "SOURCE_SYNC_RESYNC_SECONDS", default: "300", describe: "how often every copy is applied again" },
    port: { env: "SOURCE_SYNC_PORT", default: "8080", describe: "plain HTTP port of /healthz, /readyz and /metrics" },
} as const;

function sourceObjects(text: string, problems: string[]): SourceObject[] {
    const where = `${SOURCE_SYNC_SETTINGS.objects.env}=${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)}`;
    let parsed: unknown;
    try {
        parsed = JSON.parse(text);
    } catch (error) {
        problems.push(`${where}: not JSON (${(error as Error).message})`);
        return [];
    }
    if (!Array.isArray(parsed)) {
        problems.push(`${where}: must be a JSON list`);
        return [];
    }
    const objects: SourceObject[] = [];
    parsed.forEach((item: unknown, index) => {
        const record = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
        const shares = Array.isArray(record.shares) ? record.shares : [];
        const valid =
            (record.kind === "Secret" || record.kind === "ConfigMap") &&
            typeof record.namespace === "string" &&
            isDns1123Label(record.namespace) &&
            typeof record.name === "string" &&
            isDns1123Subdomain(record.name) &&
            shares.length > 0 &&
            shares.every((share) => typeof share === "string" && isDns1123Subdomain(share));
        if (!valid)
            problems.push(
                `${SOURCE_SYNC_SETTINGS.objects.env}[${index}]: needs kind Secret or ConfigMap, a namespace name, an object name and a non-empty list of share names`,
            );
        else
            objects.push({
                kind: record.kind as SourceObject["kind"],
                namespace: record.namespace as string,
                name: record.name as string,
                shares: shares as string[],
            });
    });
    return objects;
}

/** Reads the source sync's environment; every invalid variable is reported, naming its value and rule. */
export function readSourceSyncConfig(env: NodeJS.ProcessEnv): { ok: true; config: SourceSyncConfig } | { ok: false; problems: string[] } {
    const problems: string[] = [];
    const raw = (setting: { env: string; default: string }) => env[setting.env] ?? setting.default;
    const sourceNamespace = raw(SOURCE_SYNC_SETTINGS.sourceNamespace);
    if (!isDns1123Label(sourceNamespace) || isPlatformNamespace(sourceNamespace))
        problems.push(
            `${SOURCE_SYNC_SETTINGS.sourceNamespace.env}=${JSON.stringify(sourceNamespace)}: must be a namespace name, not a platform one (kube*, openshift*)`,
        );
    const objects = sourceObjects(raw(SOURCE_SYNC_SETTINGS.objects), problems);
    const inSource = objects.filter((object) => object.namespace === sourceNamespace);
    if (inSource.length > 0)
        problems.push(
            `${SOURCE_SYNC_SETTINGS.objects.env}: ${inSource.map((object) => `${object.kind} ${object.namespace}/${object.name}`).join(", ")} already in the source namespace`,
        );
    const seconds = Number(raw(SOURCE_SYNC_SETTINGS.resyncMs));
    if (!Number.isFinite(seconds) || seconds < 1 || seconds > 86_400)
        problems.push(
            `${SOURCE_SYNC_SETTINGS.resyncMs.env}=${JSON.stringify(raw(SOURCE_SYNC_SETTINGS.resyncMs))}: must be a number from 1 to 86400`,
        );
    const port = Number(raw(SOURCE_SYNC_SETTINGS.port));
    if (!Number.isInteger(port) || port < 1 || port > 65535)
        problems.push(
            `${SOURCE_SYNC_SETTINGS.port.env}=${JSON.stringify(raw(SOURCE_SYNC_SETTINGS.port))}: must be a whole number from 1 to 65535`,
        );
    const logLevel = raw(SETTINGS.logLevel);
    if (!LOG_LEVELS.includes(logLevel))
        problems.push(`${SETTINGS.logLevel.env}=${JSON.stringify(logLevel)}: must be one of ${LOG_LEVELS.join(", ")}`);
    if (problems.length > 0) return { ok: false, problems };
    return {
        ok: true,
        config: { sourceNamespace, objects, resyncMs: seconds * 1000, port, kubeconfig: raw(SETTINGS.kubeconfig) || undefined, logLevel },
    };
}
