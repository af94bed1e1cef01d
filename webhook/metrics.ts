/** Prometheus metrics of the admission server (served at /metrics). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { DENIAL_REASONS, type DenialReason } from "./decision";

/**
 * How an admission ended: a patch, allowed unchanged, denied, not a pod CREATE, not an
 * AdmissionReview, or failed (HTTP 5xx: the webhook could not decide, the API server applies failurePolicy).
 */
export type AdmissionOutcome = "patched" | "unchanged" | "denied" | "ignored" | "rejected" | "failed";

export class WebhookMetrics {
    readonly registry = new Registry();
    readonly admissions: Counter<"outcome">;
    readonly denials: Counter<"reason">;
    readonly latency: Histogram;
    readonly kubeApiRequests: Counter<"verb" | "resource">;
    readonly cacheSynced: Gauge;
    readonly keyCacheSynced: Gauge<"resource" | "namespace" | "name">;
    readonly skippedBundles: Counter<"kind" | "reason">;
    readonly informers: Gauge<"kind">;
    readonly objectsReadByName: Gauge;
    readonly certificateReloads: Counter<"result">;
    readonly certificateNotAfter: Gauge;
    readonly certificateExpiresIn: Gauge;
    /** Every request this process made to the Kubernetes API (lists, watches, reviews). */
    kubeApiRequestCount = 0;

    constructor(options: { processMetrics?: boolean; now?: () => number } = {}) {
        const registers = [this.registry];
        this.admissions = new Counter({
            name: "subscription_webhook_admission_requests_total",
            help: "Admission requests by outcome (patched, unchanged, denied, ignored: not a pod create, rejected: HTTP 4xx, failed: HTTP 5xx, failurePolicy applies).",
            labelNames: ["outcome"],
            registers,
        });
        this.denials = new Counter({
            name: "subscription_webhook_denials_total",
            help: "Admissions not allowed, by reason (CacheNotSynced, AccessCheckFailed and InternalError are answered as failed calls, HTTP 5xx).",
            labelNames: ["reason"],
            registers,
        });
        for (const reason of DENIAL_REASONS) this.denials.inc({ reason }, 0);
        this.latency = new Histogram({
            name: "subscription_webhook_admission_duration_seconds",
            help: "Time from the request's arrival to its response being written.",
            buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
            registers,
        });
        this.kubeApiRequests = new Counter({
            name: "subscription_webhook_kube_api_requests_total",
            help: "Requests made to the Kubernetes API (list, watch, create subjectaccessreviews); flat in steady state.",
            labelNames: ["verb", "resource"],
            registers,
        });
        this.cacheSynced = new Gauge({
            name: "subscription_webhook_cache_synced",
            help: "1 once the bundle caches are synced (readiness).",
            registers,
        });
        this.keyCacheSynced = new Gauge({
            name: "subscription_webhook_key_cache_synced",
            help: "Per key cache (Secrets or ConfigMaps of a namespace, or one object when name is set): 1 once listed, 0 while not (RBAC refused or the API failed; see the log line naming the permission).",
            labelNames: ["resource", "namespace", "name"],
            registers,
        });
        // By kind and reason, not by bundle: a label per team Bundle would grow with the cluster (the
        // admission's warning names the bundle).
        this.skippedBundles = new Counter({
            name: "subscription_webhook_always_inject_skipped_total",
            help: "Always-inject bundles left out of a pod that did not ask for them, by kind (Bundle, ClusterBundle) and reason (the denial it would have been: MountConflict, AccessDenied, ReferenceNotFound, ...); the admission carries a warning naming the bundle.",
            labelNames: ["kind", "reason"],
            registers,
        });
        this.informers = new Gauge({
            name: "subscription_webhook_informers",
            help: "Informers running, each one open watch: kind bundles (Bundles, ClusterBundles) or keys (Secrets/ConfigMaps by conventional name cluster-wide, or per listed namespace); constant in the number of teams' Bundles.",
            labelNames: ["kind"],
            registers,
        });
        this.objectsReadByName = new Gauge({
            name: "subscription_webhook_objects_read_by_name",
            help: "Secrets and ConfigMaps whose key names are cached from reads by name (bounded, least recently used first out).",
            registers,
        });
        this.certificateReloads = new Counter({
            name: "subscription_webhook_certificate_reloads_total",
            help: "Serving certificate reloads by result (loaded, invalid).",
            labelNames: ["result"],
            registers,
        });
        this.certificateNotAfter = new Gauge({
            name: "subscription_webhook_certificate_not_after_seconds",
            help: "Expiry (Unix time) of the serving certificate in use.",
            registers,
        });
        // Seconds until notAfter, computed at each scrape from the certificate in use, so an alert
        // is a plain threshold (`< 7 * 86400`). NaN until a certificate has loaded (an unlabelled
        // prom-client gauge always has a sample; NaN compares false, 0 would read "expires now").
        const notAfter = this.certificateNotAfter;
        this.certificateExpiresIn = new Gauge({
            name: "subscription_webhook_certificate_expiry_seconds",
            help: "Seconds until the serving certificate in use expires (negative once expired).",
            registers,
            async collect() {
                const value = (await notAfter.get()).values[0]?.value ?? 0;
                if (value > 0) {
                    this.set(value - (options.now ?? Date.now)() / 1000);
                } else {
                    this.set(Number.NaN);
                }
            },
        });
        if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: "subscription_webhook_" });
    }

    recordKubeApiRequest(verb: string, resource: string): void {
        this.kubeApiRequestCount++;
        this.kubeApiRequests.inc({ verb, resource });
    }

    recordDenial(reason: DenialReason): void {
        this.denials.inc({ reason });
    }
}
