/**
 * AdmissionReview (admission.k8s.io/v1 and v1beta1) in and out: which requests are well-formed
 * enough to answer, what each asks the webhook to do, and the response the API server expects.
 */
import type { InjectionDecision } from "./decision";
import { serializePatch } from "./json-patch";
import { type Pod, ephemeralContainerNames, readPod } from "./pod";
import { isRecord } from "../components/shared/records";

export const REVIEW_VERSIONS = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

export interface AdmissionRequest {
    uid: string;
    kind?: { group?: string; version?: string; kind?: string };
    resource?: { group?: string; version?: string; resource?: string };
    subResource?: string;
    namespace?: string;
    operation?: string;
    object?: unknown;
    oldObject?: unknown;
}

export type ParsedReview = { ok: true; apiVersion: ReviewVersion; request: AdmissionRequest } | { ok: false; message: string };

const MAX_UID_LENGTH = 256;

/** Accepts an AdmissionReview with a request and a uid; anything else is answered with HTTP 400. */
export function parseReview(body: unknown): ParsedReview {
    if (!isRecord(body)) return { ok: false, message: "the body is not a JSON object" };
    const apiVersion = body.apiVersion;
    if (!REVIEW_VERSIONS.includes(apiVersion as ReviewVersion) || body.kind !== "AdmissionReview") {
        return { ok: false, message: `expected an AdmissionReview of apiVersion ${REVIEW_VERSIONS.join(" or ")}` };
    }
    const request = body.request;
    if (!isRecord(request)) return { ok: false, message: "the AdmissionReview has no request" };
    const uid = request.uid;
    if (typeof uid !== "string" || uid.length === 0 || uid.length > MAX_UID_LENGTH) {
        return { ok: false, message: `request.uid must be a string of 1 to ${MAX_UID_LENGTH} characters` };
    }
    return { ok: true, apiVersion: apiVersion as ReviewVersion, request: request as unknown as AdmissionRequest };
}

export type AdmissionTask =
    | { type: "inject"; pod: Pod; namespace: string }
    | { type: "ephemeral"; pod: Pod; namespace: string; existing: ReadonlySet<string> }
    | { type: "ignore"; message: string }
    | { type: "invalid"; message: string };

function text(value: unknown): string {
    return typeof value === "string" ? value.slice(0, 100) : "";
}

/** What the request asks for: a pod CREATE, new ephemeral containers, or nothing the webhook mutates. */
export function classifyRequest(request: AdmissionRequest): AdmissionTask {
    const kind = isRecord(request.kind) ? text(request.kind.kind) : "";
    const resource = isRecord(request.resource) ? text(request.resource.resource) : "";
    const group = isRecord(request.resource) ? text(request.resource.group) : "";
    const subResource = text(request.subResource);
    const operation = text(request.operation);
    if (resource !== "pods" || group !== "" || kind !== "Pod") {
        return {
            type: "ignore",
            message: `subscription injection mutates only pods, not ${JSON.stringify(`${group ? `${group}/` : ""}${resource}`)} (${JSON.stringify(kind)})`,
        };
    }
    const ephemeral = subResource === "ephemeralcontainers" && operation === "UPDATE";
    if (!ephemeral && !(subResource === "" && operation === "CREATE")) {
        return {
            type: "ignore",
            message: `subscription injection acts on pod CREATE and pods/ephemeralcontainers UPDATE, not ${JSON.stringify(operation)} of ${JSON.stringify(subResource ? `pods/${subResource}` : "pods")}`,
        };
    }
    const reading = readPod(request.object);
    if (!reading.ok) return { type: "invalid", message: `request.object is not a valid Pod: ${reading.problem}` };
    const namespace = text(request.namespace) || text(reading.pod.metadata.namespace);
    if (!namespace)
        return { type: "invalid", message: "the request names no namespace (request.namespace and metadata.namespace are empty)" };
    if (!ephemeral) return { type: "inject", pod: reading.pod, namespace };
    // The API server sends the pod before the update: only ephemeral containers absent from it are new.
    const before = readPod(request.oldObject);
    if (!before.ok) return { type: "invalid", message: `request.oldObject is not a valid Pod: ${before.problem}` };
    return { type: "ephemeral", pod: reading.pod, namespace, existing: ephemeralContainerNames(before.pod) };
}

/**
 * The AdmissionReview answering `uid`: allowed (maybe with a patch) or denied with a status.
 * The base64 patch is spliced in as text: it needs no escaping, and re-serialising a string of
 * several kilobytes would cost as much as the decision.
 */
export function reviewResponse(apiVersion: ReviewVersion, uid: string, decision: InjectionDecision, message: string): string {
    const response: Record<string, unknown> = { uid, allowed: decision.allowed };
    let patch = "";
    if (decision.allowed) {
        if (decision.patch.length > 0) {
            response.patchType = "JSONPatch";
            patch = Buffer.from(serializePatch(decision.patch)).toString("base64");
        }
        if (decision.warnings.length > 0) response.warnings = decision.warnings;
        response.status = { code: 200, message };
    } else {
        response.status = { status: "Failure", code: decision.code, reason: statusReason(decision.code), message: decision.message };
    }
    const text = JSON.stringify({ apiVersion, kind: "AdmissionReview", response });
    return patch ? `${text.slice(0, -2)},"patch":"${patch}"}}` : text;
}

/** metav1.StatusReason for a denial code. */
function statusReason(code: number): string {
    switch (code) {
        case 400:
            return "BadRequest";
        case 403:
            return "Forbidden";
        case 404:
            return "NotFound";
        case 409:
            return "Conflict";
        case 503:
            return "ServiceUnavailable";
        default:
            return "InternalError";
    }
}
