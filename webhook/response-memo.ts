/**
 * Answers repeated admissions without re-deciding them. The pods of one ReplicaSet reach the
 * webhook as AdmissionReviews that differ only in `request.uid`, so a decision made for one holds
 * for all of them while nothing it read has changed. An entry is keyed by the request's exact text
 * with the uid cut out, and holds the response's text around the uid. It is used only while:
 * - the cluster-state version it was decided at is current (any Bundle, ClusterBundle, Secret or
 *   ConfigMap change moves it);
 * - it is younger than `ttlMs`, because access reviews age by time, not by version: after the TTL
 *   the full path runs again and consults (and renews) the SubjectAccessReview cache;
 * - the decision allowed the pod (denials always take the full path, which logs and counts them).
 * Equal keys mean equal requests apart from the uid, so the cached answer is the one the full
 * path would give. Nothing here parses JSON: on a hit the request is never parsed at all.
 */

/**
 * An AdmissionReview as kube-apiserver serialises it: Go's encoding/json writes struct fields in
 * declaration order, and in kubernetes/kubernetes staging/src/k8s.io/api/admission/v1/types.go
 * AdmissionReview starts with the inline TypeMeta (kind, apiVersion) and AdmissionRequest with
 * `uid` (the captured reviews in ../shared/testdata/admission-reviews show the same order). Also
 * accepted with apiVersion before kind. Only uids made of characters JSON never escapes are taken (API server
 * uids are UUIDs); anything else simply takes the full path.
 */
const REVIEW_HEAD =
    /^\{(?:"kind":"AdmissionReview","apiVersion":"admission\.k8s\.io\/v1(?:beta1)?"|"apiVersion":"admission\.k8s\.io\/v1(?:beta1)?","kind":"AdmissionReview"),"request":\{"uid":"([A-Za-z0-9._:-]{1,256})"/;

import type { AdmissionOutcome } from "./metrics";

interface Entry {
    version: number;
    outcome: AdmissionOutcome;
    expiresAt: number;
    /** The response's text before and after the uid. */
    before: string;
    after: string;
}

/** Where a request's uid sits in its text, and the text without it (the memo key). */
export interface KeyedRequest {
    uid: string;
    key: string;
}

export class ResponseMemo {
    private readonly entries = new Map<string, Entry>();

    constructor(private readonly options: { ttlMs: number; maxEntries: number; now?: () => number }) {}

    /** The uid and key of a request in the usual serialisation, or undefined (then it is never memoised). */
    keyOf(text: string): KeyedRequest | undefined {
        const head = REVIEW_HEAD.exec(text);
        if (!head) return undefined;
        const uid = head[1];
        const end = head[0].length - 1;
        return { uid, key: `${text.slice(0, end - uid.length)}${text.slice(end)}` };
    }

    /** The response to `request` (and its outcome) if an entry decided at `version` is still valid. */
    answer(request: KeyedRequest, version: number): { body: string; outcome: AdmissionOutcome } | undefined {
        const entry = this.entries.get(request.key);
        if (!entry) return undefined;
        if (entry.version !== version || entry.expiresAt <= this.now()) {
            this.entries.delete(request.key);
            return undefined;
        }
        return { body: `${entry.before}${request.uid}${entry.after}`, outcome: entry.outcome };
    }

    /** Remembers an allowed response decided at `version` for requests like `request`. */
    remember(request: KeyedRequest, version: number, response: string, outcome: AdmissionOutcome): void {
        const marker = `"uid":"${request.uid}"`;
        const at = response.indexOf(marker);
        if (at < 0) return;
        if (this.entries.size >= this.options.maxEntries) this.entries.clear();
        const start = at + marker.length - 1 - request.uid.length;
        this.entries.set(request.key, {
            version,
            outcome,
            expiresAt: this.now() + this.options.ttlMs,
            before: response.slice(0, start),
            after: response.slice(start + request.uid.length),
        });
    }

    private now(): number {
        return (this.options.now ?? Date.now)();
    }
}
