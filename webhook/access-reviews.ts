/**
 * SubjectAccessReview results cached per (service account, ClusterBundle, the bundle's shares):
 * a bundle whose references change names other shares, so its old result is not reused. An entry is served
 * until it expires; past `refreshAfter` it is still served while one background review renews
 * it, so a steady stream of admissions never waits for (or counts) a review. Failed reviews are
 * not cached. The cache is bounded; the oldest entries go first.
 */
import type { AccessDecision } from "./decision";
import type { ShareRef } from "./driver-access";

export interface ServiceAccountRef {
    namespace: string;
    name: string;
}

export type ReviewFunction = (
    serviceAccount: ServiceAccountRef,
    clusterBundle: string,
    shares: readonly ShareRef[],
) => Promise<AccessDecision>;

export interface AccessReviewOptions {
    /** How long an allowed result is used. */
    allowedTtlMs: number;
    /** How long a denied result is used (short: a new RoleBinding should take effect soon). */
    deniedTtlMs: number;
    /** Entries kept at most. */
    maxEntries?: number;
    /** The shares a ClusterBundle mounts now (from the watched ClusterBundles); none by default. */
    sharesOf?: (clusterBundle: string) => readonly ShareRef[];
    now?: () => number;
}

interface Entry {
    decision: AccessDecision;
    refreshAt: number;
    expiresAt: number;
    renewing?: Promise<unknown>;
}

export class AccessReviewCache {
    private readonly entries = new Map<string, Entry>();
    private readonly inFlight = new Map<string, Promise<AccessDecision>>();
    private readonly now: () => number;
    private readonly maxEntries: number;
    private readonly sharesOf: (clusterBundle: string) => readonly ShareRef[];

    constructor(
        private readonly review: ReviewFunction,
        private readonly options: AccessReviewOptions,
    ) {
        this.now = options.now ?? Date.now;
        this.maxEntries = options.maxEntries ?? 10_000;
        this.sharesOf = options.sharesOf ?? (() => []);
    }

    /**
     * Decisions for each bundle: synchronously when all are cached (the steady state), else a
     * promise that reviews the missing ones (concurrent callers share one review per key).
     */
    decisions(
        serviceAccount: ServiceAccountRef,
        clusterBundles: readonly string[],
    ): Map<string, AccessDecision> | Promise<Map<string, AccessDecision>> {
        const result = new Map<string, AccessDecision>();
        const missing: string[] = [];
        for (const bundle of clusterBundles) {
            const cached = this.cached(serviceAccount, bundle);
            if (cached) result.set(bundle, cached);
            else missing.push(bundle);
        }
        if (missing.length === 0) return result;
        return Promise.all(missing.map(async (bundle) => result.set(bundle, await this.fetch(serviceAccount, bundle)))).then(() => result);
    }

    private key(serviceAccount: ServiceAccountRef, bundle: string, shares: readonly ShareRef[]): string {
        return `${serviceAccount.namespace}\n${serviceAccount.name}\n${bundle}\n${shares.map((share) => `${share.resource}/${share.name}`).join("\n")}`;
    }

    private cached(serviceAccount: ServiceAccountRef, bundle: string): AccessDecision | undefined {
        const key = this.key(serviceAccount, bundle, this.sharesOf(bundle));
        const entry = this.entries.get(key);
        if (!entry) return undefined;
        const now = this.now();
        if (now >= entry.expiresAt) {
            this.entries.delete(key);
            return undefined;
        }
        if (now >= entry.refreshAt && !entry.renewing) {
            entry.renewing = this.fetch(serviceAccount, bundle).catch(() => undefined);
        }
        return entry.decision;
    }

    private fetch(serviceAccount: ServiceAccountRef, bundle: string): Promise<AccessDecision> {
        const shares = this.sharesOf(bundle);
        const key = this.key(serviceAccount, bundle, shares);
        const pending = this.inFlight.get(key);
        if (pending) return pending;
        const request = this.review(serviceAccount, bundle, shares)
            .catch((error: unknown): AccessDecision => ({ error: error instanceof Error ? error.message : String(error) }))
            .then((decision) => {
                this.inFlight.delete(key);
                if (!("error" in decision)) this.store(key, decision);
                return decision;
            });
        this.inFlight.set(key, request);
        return request;
    }

    private store(key: string, decision: AccessDecision): void {
        const ttl = "allowed" in decision && decision.allowed ? this.options.allowedTtlMs : this.options.deniedTtlMs;
        const now = this.now();
        this.entries.delete(key);
        this.entries.set(key, { decision, expiresAt: now + ttl, refreshAt: now + ttl * 0.75 });
        while (this.entries.size > this.maxEntries) {
            const oldest = this.entries.keys().next().value as string;
            this.entries.delete(oldest);
        }
    }

    get size(): number {
        return this.entries.size;
    }
}
