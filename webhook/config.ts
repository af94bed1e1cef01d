/** The server's configuration from environment variables, validated all at once. */
import { WEBHOOK_CERT_DIR, WEBHOOK_SERVER } from "./api";
import { isDns1123Label } from "../components/shared/k8s-names";

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
     * Namespaces whose Secrets and ConfigMaps the server may list (its RBAC: one Role per
     * namespace), or "all" (a ClusterRole). Elsewhere it reads each referenced object through a
     * name-field-selected list and watch, which a `resourceNames` rule allows (cluster-state.ts).
     */
    readNamespaces: "all" | string[];
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
    readNamespaces: {
        env: "WEBHOOK_READ_NAMESPACES",
        default: "*",
        describe:
            "namespaces whose Secrets/ConfigMaps the server may list, comma-separated, or `*` for all; elsewhere each referenced object is read by name",
    },
} as const satisfies Record<keyof ServerConfig, Setting>;

/** `*` (all), or a comma-separated list of namespace names (may be empty: no namespace). */
function namespaceList(text: string, problems: string[]): "all" | string[] {
    if (text.trim() === "*") return "all";
    const names = text
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name !== "");
    const invalid = names.filter((name) => !isDns1123Label(name));
    if (invalid.length > 0) {
        problems.push(
            `${SETTINGS.readNamespaces.env}=${JSON.stringify(text)}: ${invalid.map((name) => JSON.stringify(name)).join(", ")} not a namespace name; give \`*\` or comma-separated namespace names`,
        );
    }
    return [...new Set(names)].sort();
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
        readNamespaces: namespaceList(raw(SETTINGS.readNamespaces), problems),
    };
    return problems.length > 0 ? { ok: false, problems } : { ok: true, config };
}
