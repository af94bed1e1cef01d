/**
 * Structural rules for an admission webhook's description, checked before anything is
 * registered (consumers run them in their pre-flight; the component runs them again as a
 * safety net). The API server's own rules for admissionregistration.k8s.io/v1 objects, so a
 * mistake is reported at preview with the webhook's name rather than as a failed update.
 * Policy rules about what a webhook may intercept belong to the consumer (operator installs).
 * Pure: no Pulumi imports.
 */
import { isDns1123Label, isDns1123Subdomain } from "../shared/k8s-names";
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { WebhookBackend, WebhookDefinition } from "./contract";
import { webhookServiceName } from "./build";

export const MIN_WEBHOOK_TIMEOUT_SECONDS = 1;
/**
 * The one webhook-timeout limit of the platform: the operator pre-flight (a CSV's
 * `webhookdefinitions[].timeoutSeconds`), the subscription webhook's config and the k8s-rbac
 * pack's `k8s-webhook-timeout` all apply `webhookTimeoutProblem` with it. It is the API's own
 * maximum (admissionregistration.k8s.io/v1 `timeoutSeconds`: "between 1 and 30 seconds",
 * kubernetes/api admissionregistration/v1/types.go), because real operators ship 30 s webhooks
 * (cert-manager 1.16.1's CSV): a lower limit in the pack would block a stack the pre-flight
 * accepted. An admin who wants a tighter bound sets the pack's `maxTimeoutSeconds`.
 */
export const MAX_WEBHOOK_TIMEOUT_SECONDS = 30;
/**
 * What is wrong with a webhook's `sideEffects` (admissionregistration.k8s.io/v1 accepts only
 * None and NoneOnDryRun, and requires one), without the field's name; undefined when it is
 * accepted. The pre-flight, this module's structural check and the k8s-rbac pack all use it.
 */
export function webhookSideEffectsProblem(sideEffects: unknown): string | undefined {
    if ((V1_SIDE_EFFECTS as readonly unknown[]).includes(sideEffects)) {
        return undefined;
    }
    const what = sideEffects === undefined ? "is unset" : `is ${describeValue(sideEffects)}`;
    return `${what}; it must be ${V1_SIDE_EFFECTS.join(" or ")} (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything`;
}

/** What admissionregistration.k8s.io/v1 uses when timeoutSeconds is unset. */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

/**
 * What is wrong with a webhook's `timeoutSeconds` under the limit `max` (unset means the API's
 * default of 10 s), without the field's name; undefined when it is within.
 */
export function webhookTimeoutProblem(timeoutSeconds: unknown, max: number = MAX_WEBHOOK_TIMEOUT_SECONDS): string | undefined {
    if (timeoutSeconds === undefined) {
        return DEFAULT_WEBHOOK_TIMEOUT_SECONDS <= max
            ? undefined
            : `is unset, so the API server waits its default ${DEFAULT_WEBHOOK_TIMEOUT_SECONDS} s; set it to at most ${max}`;
    }
    if (
        typeof timeoutSeconds !== "number" ||
        !Number.isInteger(timeoutSeconds) ||
        timeoutSeconds < MIN_WEBHOOK_TIMEOUT_SECONDS ||
        timeoutSeconds > max
    ) {
        return `${describeValue(timeoutSeconds)} must be an integer from ${MIN_WEBHOOK_TIMEOUT_SECONDS} to ${max}, so a slow webhook cannot stall every request it intercepts`;
    }
    return undefined;
}
/** admissionregistration.k8s.io/v1 accepts only these (Some and Unknown were v1beta1). */
export const V1_SIDE_EFFECTS = ["None", "NoneOnDryRun"] as const;
/** AdmissionReview versions API servers send. */
export const ADMISSION_REVIEW_VERSIONS = ["v1", "v1beta1"] as const;

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export function isPort(value: unknown): boolean {
    return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** IANA_SVC_NAME: at most 15 lowercase letters, digits and '-', with a letter, no '--', not starting or ending with '-'. */
export function isPortName(value: unknown): boolean {
    return (
        typeof value === "string" &&
        value.length >= 1 &&
        value.length <= 15 &&
        /^[a-z0-9-]+$/.test(value) &&
        /[a-z]/.test(value) &&
        !value.startsWith("-") &&
        !value.endsWith("-") &&
        !value.includes("--")
    );
}

export interface WebhookDescription {
    backend: WebhookBackend;
    webhooks: ReadonlyArray<WebhookDefinition>;
    targetNamespaces: string[] | undefined;
    excludedNamespaces?: string[];
}

/** Every structural problem of a webhook description, with paths relative to it. */
export function admissionWebhookProblems(description: WebhookDescription): Problem[] {
    const problems: Problem[] = [];
    const { backend } = description;
    const serviceName = webhookServiceName(backend);
    if (!(serviceName.length <= 63 && DNS1035_LABEL.test(serviceName))) {
        problems.push({
            path: "backend.deploymentName",
            message: `${describeValue(backend.deploymentName)} makes the Service name ${describeValue(serviceName)}, which must be a DNS-1035 label: at most 63 lowercase letters, digits or '-', starting with a letter`,
        });
    }
    if (!isDns1123Label(backend.namespace)) {
        problems.push({
            path: "backend.namespace",
            message: `${describeValue(backend.namespace)} is not a namespace name (a DNS-1123 label)`,
        });
    }
    if (!isPort(backend.servicePort)) {
        problems.push({
            path: "backend.servicePort",
            message: `${describeValue(backend.servicePort)} is not a port: must be an integer from 1 to 65535`,
        });
    }
    if (!isPort(backend.targetPort) && !isPortName(backend.targetPort)) {
        problems.push({
            path: "backend.targetPort",
            message: `${describeValue(backend.targetPort)} is neither a port (an integer from 1 to 65535) nor a port name (at most 15 lowercase letters, digits or '-', with a letter)`,
        });
    }
    if (description.targetNamespaces !== undefined && description.targetNamespaces.length === 0) {
        problems.push({
            path: "targetNamespaces",
            message: "is empty, so the webhooks would see no namespace: pass undefined for all namespaces",
        });
    }
    if (description.webhooks.length === 0) {
        problems.push({ path: "webhooks", message: "is empty: a webhook backend needs at least one webhook" });
    }
    const seen = new Map<string, number>();
    description.webhooks.forEach((webhook, i) => {
        const at = (field: string) => formatPath(["webhooks", i, field]);
        const who = `webhook ${describeValue(webhook.name)}`;
        if (!isDns1123Subdomain(webhook.name) || webhook.name.split(".").length < 3) {
            problems.push({
                path: at("name"),
                message: `${who}: must be a fully qualified name (a DNS-1123 subdomain with at least three segments, such as "vpod.example.io")`,
            });
        }
        const key = `${webhook.type}/${webhook.name}`;
        const first = seen.get(key);
        if (first !== undefined) {
            problems.push({
                path: at("name"),
                message: `${who}: repeats the name of webhooks[${first}]; names must be unique in a ${webhook.type}`,
            });
        } else {
            seen.set(key, i);
        }
        const sideEffects = webhookSideEffectsProblem(webhook.sideEffects);
        if (sideEffects !== undefined) {
            problems.push({ path: at("sideEffects"), message: `${who}: ${sideEffects}` });
        }
        if (
            webhook.admissionReviewVersions.length === 0 ||
            !webhook.admissionReviewVersions.some((v) => (ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v))
        ) {
            problems.push({
                path: at("admissionReviewVersions"),
                message: `${who}: ${describeValue(webhook.admissionReviewVersions)} must include a version the API server sends (${ADMISSION_REVIEW_VERSIONS.join(", ")})`,
            });
        }
        const timeout = webhookTimeoutProblem(webhook.timeoutSeconds);
        if (timeout !== undefined) {
            problems.push({ path: at("timeoutSeconds"), message: `${who}: ${timeout}` });
        }
        if (webhook.type === "ValidatingAdmissionWebhook" && webhook.reinvocationPolicy !== undefined) {
            problems.push({
                path: at("reinvocationPolicy"),
                message: `${who}: only mutating webhooks are reinvoked; remove it from this validating webhook`,
            });
        }
        if (webhook.path !== undefined && !webhook.path.startsWith("/")) {
            problems.push({ path: at("path"), message: `${who}: ${describeValue(webhook.path)} must start with "/"` });
        }
    });
    return problems;
}
