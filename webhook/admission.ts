/**
 * One admission, from a parsed body to the response: classify the request, gather the inputs of
 * the pure decision from the caches (waiting, within a deadline, only when a cache is cold), and
 * decide. HTTP concerns live in server.ts.
 */
import type { Logger } from "pino";
import type { ServiceAccountRef } from "./access-reviews";
import type { AccessDecision, BundleInfo, DenialReason, InjectionDecision, KeyLookups, KeySets } from "./decision";
import { deny } from "./decision";
import { decideEphemeralContainers, decideInjection, prepareInjection } from "./inject";
import { type MountPlan, type Planner, planMounts } from "./mounts";
import type { AdmissionOutcome, WebhookMetrics } from "./metrics";
import { type Pod, podDisplayName, podServiceAccount } from "./pod";
import { type AdmissionRequest, type ReviewVersion, classifyRequest, parseReview, reviewResponse } from "./review";

/** The cluster state the handler reads (ClusterState, or a fixed snapshot in tests). */
export interface ClusterView extends KeySets {
    bundlesIn(namespace: string): ReadonlyMap<string, BundleInfo>;
    clusterBundleMap(): ReadonlyMap<string, BundleInfo>;
    whenKeysSynced(lookups: KeyLookups): Promise<void> | undefined;
    /**
     * The caches not yet synced among the bundle caches and, when given, the key caches these
     * lookups read (e.g. `clusterbundles`, `secrets in openshift-config`); empty when all are.
     * A key cache RBAC refused is not listed: the decision names it (KeySets.unreadable).
     */
    unsyncedCaches(lookups?: KeyLookups): string[];
    /** Changes with every change the caches see; when given, mount plans are memoised per version. */
    version?(): number;
}

/** SubjectAccessReview decisions, synchronous when cached. */
export interface AccessView {
    decisions(
        serviceAccount: ServiceAccountRef,
        clusterBundles: readonly string[],
    ): Map<string, AccessDecision> | Promise<Map<string, AccessDecision>>;
}

export interface HandlerOptions {
    cluster: ClusterView;
    access: AccessView;
    metrics: WebhookMetrics;
    logger: Logger;
    /** Longest wait for a cold cache or an access review before the admission is denied (retryable). */
    lookupTimeoutMs: number;
}

export interface HandlerResult {
    status: number;
    body: string;
    outcome: AdmissionOutcome;
}

class LookupTimeout extends Error {}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LookupTimeout(`${what} took longer than ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether `promise` resolves within `ms` (false when it rejects or takes longer). */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
    return withDeadline(promise, ms, "").then(
        () => true,
        () => false,
    );
}

/** The retryable denial while caches the decision reads are still listing. */
function notSynced(caches: readonly string[]): InjectionDecision {
    return deny("CacheNotSynced", 503, `the webhook's caches are not synced yet (${caches.join(", ")}); retry`);
}

/**
 * The denials that are not decisions: the webhook could not find out (a cache still listing, an
 * access review that failed or took too long, its own error). They are answered as a failed call,
 * HTTP 5xx with a Status body, never as `allowed: false`: kube-apiserver applies the webhook's
 * failurePolicy only when the call itself fails (staging/src/k8s.io/apiserver/pkg/admission/
 * plugin/webhook/mutating/dispatcher.go: `callAttrMutatingHook` turns a transport error or a
 * non-2xx status into `webhookutil.ErrCallingWebhook`, which `Dispatch` skips under `Ignore` and
 * turns into an internal error under `Fail`), while a response with `allowed: false` is always
 * returned to the client as the rejection (`ErrWebhookRejection`, whatever its code says).
 */
export const UNDECIDED: ReadonlySet<DenialReason> = new Set<DenialReason>(["CacheNotSynced", "AccessCheckFailed", "InternalError"]);

/** A failed call: the status code (5xx) and a metav1.Status body the API server puts in its error. */
export function callFailure(code: number, message: string): HandlerResult {
    const status = code >= 500 && code <= 599 ? code : 500;
    return {
        status,
        body: JSON.stringify({
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: status,
            reason: status === 503 ? "ServiceUnavailable" : "InternalError",
            message,
        }),
        outcome: "failed",
    };
}

export function badRequest(message: string): HandlerResult {
    return {
        status: 400,
        body: JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 400, reason: "BadRequest", message }),
        outcome: "rejected",
    };
}

/**
 * planMounts memoised for one cluster-state version: identical selections (every replica of a
 * Deployment) share one plan and its serialised mounts. Dropped when the version moves.
 */
function planMemo(cluster: ClusterView): Planner {
    let version = -1;
    const plans = new Map<string, MountPlan | ReturnType<typeof planMounts>>();
    return (bundles, clusterBundles, namespace, keys) => {
        const current = cluster.version?.() ?? -1;
        if (current !== version || plans.size >= 1000) {
            plans.clear();
            version = current;
        }
        const key = `${namespace}\n${bundles.map((bundle) => bundle.name).join(",")}\n${clusterBundles.map((bundle) => bundle.name).join(",")}`;
        let plan = plans.get(key);
        if (!plan) plans.set(key, (plan = planMounts(bundles, clusterBundles, namespace, keys)));
        return plan;
    };
}

export class AdmissionHandler {
    private readonly plan: Planner;

    constructor(private readonly options: HandlerOptions) {
        this.plan = options.cluster.version ? planMemo(options.cluster) : planMounts;
    }

    /**
     * Answers a request body's text. Every request is parsed and decided: a response memo keyed by
     * the request text (less its uid) used to replay answers, but on a realistic stream it never
     * hits (each pod carries its own `kube-api-access-<random>` token volume), so it only cost
     * (scripts/bench/webhook.ts, `memo_hit_pct`; docs/subscriptions.md "Speed").
     */
    async handleText(text: string): Promise<HandlerResult> {
        let body: unknown;
        try {
            body = JSON.parse(text);
        } catch (error) {
            return badRequest(`the body is not valid JSON: ${(error as Error).message.slice(0, 200)}`);
        }
        return this.handle(body);
    }

    /** Answers a parsed JSON body: 400 when it is not an answerable AdmissionReview, else 200 with a response. */
    async handle(body: unknown): Promise<HandlerResult> {
        const review = parseReview(body);
        if (!review.ok) return badRequest(review.message);
        const { apiVersion, request } = review;
        const task = classifyRequest(request);
        let decision: InjectionDecision;
        let outcome: AdmissionOutcome;
        let message: string;
        switch (task.type) {
            case "ignore":
                decision = { allowed: true, patch: [], warnings: [], injected: { bundles: {}, clusterBundles: {} } };
                message = task.message;
                outcome = "ignored";
                break;
            case "invalid":
                decision = deny("InvalidPod", 400, task.message);
                message = task.message;
                outcome = "denied";
                break;
            default:
                try {
                    decision =
                        task.type === "ephemeral"
                            ? decideEphemeralContainers(task.pod, task.existing)
                            : await this.decideCreate(task.pod, task.namespace);
                } catch (error) {
                    this.options.logger.error({ uid: request.uid, err: (error as Error).message }, "decision failed");
                    decision = deny("InternalError", 500, "internal error while evaluating the pod; retry");
                }
                outcome = !decision.allowed ? "denied" : decision.patch.length > 0 ? "patched" : "unchanged";
                message = decision.allowed ? this.summary(decision, task.type) : decision.message;
                this.log(request, task.pod, task.namespace, decision);
        }
        if (!decision.allowed) this.options.metrics.recordDenial(decision.reason);
        else
            for (const skipped of decision.skipped ?? [])
                this.options.metrics.skippedBundles.inc({ kind: skipped.kind, reason: skipped.reason });
        if (!decision.allowed && UNDECIDED.has(decision.reason)) return callFailure(decision.code, decision.message);
        return { status: 200, body: reviewResponse(apiVersion as ReviewVersion, request.uid, decision, message), outcome };
    }

    private async decideCreate(pod: Pod, namespace: string): Promise<InjectionDecision> {
        const { cluster, access } = this.options;
        // An unsynced bundle cache would answer "not found" or "nothing to inject" for bundles that
        // exist: a final answer the webhook is not sure of. A failed call (503, see UNDECIDED)
        // instead lets the API server apply the webhook's failurePolicy.
        const unsynced = cluster.unsyncedCaches();
        if (unsynced.length > 0) return notSynced(unsynced);
        const bundles = cluster.bundlesIn(namespace);
        const clusterBundles = cluster.clusterBundleMap();
        const preparation = prepareInjection({ pod, namespace, bundles, clusterBundles, keys: cluster });
        let decisions: ReadonlyMap<string, AccessDecision> = NO_ACCESS;
        if (preparation) {
            try {
                const cold = cluster.whenKeysSynced(preparation.lookups);
                if (cold) {
                    // Settled or not, a source that still cannot answer (a read by name that failed, a
                    // namespace still listing) is an unknown, never "not found".
                    await settlesWithin(cold, this.options.lookupTimeoutMs);
                    const still = cluster.unsyncedCaches(preparation.lookups);
                    if (still.length > 0) return notSynced(still);
                }
                if (preparation.accessReviews.length > 0) {
                    const serviceAccount = { namespace, name: podServiceAccount(pod) };
                    const pending = access.decisions(serviceAccount, preparation.accessReviews);
                    decisions =
                        pending instanceof Promise
                            ? await withDeadline(pending, this.options.lookupTimeoutMs, "the access review")
                            : pending;
                }
            } catch (error) {
                if (error instanceof LookupTimeout) return deny("AccessCheckFailed", 503, `${error.message}; retry`);
                throw error;
            }
        }
        // The selection the access decisions were made for is kept, even if bundles changed meanwhile.
        return decideInjection(
            { pod, namespace, bundles, clusterBundles, keys: cluster, access: decisions },
            this.plan,
            preparation?.selection,
        );
    }

    private summary(decision: InjectionDecision & { allowed: true }, type: "inject" | "ephemeral"): string {
        if (type === "ephemeral")
            return decision.patch.length > 0
                ? "mounted injected subscription volumes into ephemeral containers"
                : "ephemeral containers need no change";
        const names = [
            ...Object.keys(decision.injected.bundles).map((name) => `Bundle ${name}`),
            ...Object.keys(decision.injected.clusterBundles).map((name) => `ClusterBundle ${name}`),
        ];
        if (names.length === 0) return "no subscription bundle applies to this pod";
        return decision.patch.length > 0 ? `injected ${names.join(", ")}` : `already injected: ${names.join(", ")}`;
    }

    private log(request: AdmissionRequest, pod: Pod, namespace: string, decision: InjectionDecision): void {
        const { logger } = this.options;
        const fields = { uid: request.uid, namespace, pod: podDisplayName(pod) };
        if (!decision.allowed) logger.info({ ...fields, reason: decision.reason, message: decision.message }, "denied");
        else if (logger.isLevelEnabled("debug"))
            logger.debug({ ...fields, operations: decision.patch.length, injected: decision.injected }, "admitted");
    }
}

const NO_ACCESS: ReadonlyMap<string, AccessDecision> = new Map();
