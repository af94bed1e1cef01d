/**
 * The serving certificate and key, read from the mounted Secret files and reloaded when they
 * change (kubelet swaps a `..data` symlink, cert-manager or service-ca rewrite the Secret). A
 * directory watch reacts at once; a poll catches what the watch misses. A new pair is used only
 * after it loads as a TLS context (so a half-written rotation keeps the old one); connections
 * already open keep theirs, so no request in flight fails.
 */
import { createHash, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as tls from "node:tls";
import type { Logger } from "pino";
import type { WebhookMetrics } from "./metrics";

export const TLS_OPTIONS = { minVersion: "TLSv1.2" } as const satisfies tls.SecureContextOptions;

export interface KeyPair {
    cert: Buffer;
    key: Buffer;
}

export class CertificateFiles {
    private fingerprint = "";
    /** Pairs loaded after the first. */
    reloads = 0;
    private watchers: fs.FSWatcher[] = [];
    private poll: NodeJS.Timeout | undefined;
    private debounce: NodeJS.Timeout | undefined;

    constructor(
        private readonly certFile: string,
        private readonly keyFile: string,
        private readonly onChange: (pair: KeyPair) => void,
        private readonly logger: Logger,
        private readonly metrics: WebhookMetrics,
    ) {}

    /** Reads and validates the pair (throws when it does not load); remembers it as current. */
    load(): KeyPair {
        const pair = { cert: fs.readFileSync(this.certFile), key: fs.readFileSync(this.keyFile) };
        tls.createSecureContext({ ...TLS_OPTIONS, ...pair });
        this.fingerprint = fingerprintOf(pair);
        this.recordExpiry(pair.cert);
        return pair;
    }

    /** Watches both files' directories and polls every `pollMs`. */
    watch(pollMs: number): void {
        for (const directory of new Set([path.dirname(this.certFile), path.dirname(this.keyFile)])) {
            try {
                const watcher = fs.watch(directory, () => this.scheduleCheck());
                watcher.on("error", (error) =>
                    this.logger.warn({ directory, err: error.message }, "certificate directory watch failed; polling only"),
                );
                this.watchers.push(watcher);
            } catch (error) {
                this.logger.warn({ directory, err: (error as Error).message }, "cannot watch certificate directory; polling only");
            }
        }
        this.poll = setInterval(() => this.check(), pollMs);
        this.poll.unref();
    }

    private scheduleCheck(): void {
        if (this.debounce) clearTimeout(this.debounce);
        this.debounce = setTimeout(() => this.check(), 50);
        this.debounce.unref();
    }

    /** Reloads when the files differ from the pair in use; keeps the old pair when the new one does not load. */
    check(): boolean {
        let pair: KeyPair;
        try {
            pair = { cert: fs.readFileSync(this.certFile), key: fs.readFileSync(this.keyFile) };
        } catch (error) {
            this.logger.warn({ err: (error as Error).message }, "cannot read serving certificate files; keeping the current pair");
            return false;
        }
        const fingerprint = fingerprintOf(pair);
        if (fingerprint === this.fingerprint) return false;
        try {
            tls.createSecureContext({ ...TLS_OPTIONS, ...pair });
        } catch (error) {
            this.metrics.certificateReloads.inc({ result: "invalid" });
            this.logger.warn(
                { err: (error as Error).message },
                "new serving certificate does not load (rotation in progress?); keeping the current pair",
            );
            return false;
        }
        this.fingerprint = fingerprint;
        this.onChange(pair);
        this.reloads++;
        this.metrics.certificateReloads.inc({ result: "loaded" });
        this.recordExpiry(pair.cert);
        this.logger.info({ notAfter: new X509Certificate(pair.cert).validTo }, "serving certificate reloaded");
        return true;
    }

    private recordExpiry(cert: Buffer): void {
        try {
            this.metrics.certificateNotAfter.set(Date.parse(new X509Certificate(cert).validTo) / 1000);
        } catch {
            // A chain whose first block is not parseable still served; the gauge simply stays.
        }
    }

    stop(): void {
        for (const watcher of this.watchers) watcher.close();
        this.watchers = [];
        if (this.poll) clearInterval(this.poll);
        if (this.debounce) clearTimeout(this.debounce);
    }
}

function fingerprintOf(pair: KeyPair): string {
    return createHash("sha256").update(pair.cert).update("\0").update(pair.key).digest("hex");
}
