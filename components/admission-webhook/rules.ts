/**
 * What a rendered admission webhook configuration must look like to be safe on a shared
 * cluster, as pure checks shared by the components that declare webhooks and the k8s-rbac
 * policy pack: a short timeout, no side effects, the control plane and the webhook's own
 * namespace shut out by name, and, when the webhook fails closed, a backend that survives a
 * pod restart and a node drain. No Pulumi imports.
 */
import { LabelSelector, selectorExcludesNamespace, selectorMatches } from "../shared/label-selector";
import { V1_SIDE_EFFECTS } from "./structure";

/**
 * The longest admission timeout the platform accepts: the API server's default. Every request
 * the webhook intercepts can wait this long, so 30 s (the API's maximum) would stall pod creation
 * cluster-wide whenever the webhook is slow.
 */
export const SAFE_TIMEOUT_SECONDS = 10;
/** What admissionregistration.k8s.io/v1 uses when timeoutSeconds is unset. */
export const DEFAULT_TIMEOUT_SECONDS = 10;
/** Namespaces no webhook may intercept, besides its own: a webhook there can keep the control plane from healing. */
export const ALWAYS_EXCLUDED_NAMESPACES = ["kube-system"] as const;
/** Replicas a webhook that fails closed needs, so that one pod's restart does not block what it intercepts. */
export const MIN_FAIL_CLOSED_REPLICAS = 2;

/** `timeoutSeconds` over `max` (unset means the API's default of 10 s), or undefined when it is within. */
export function timeoutProblem(timeoutSeconds: unknown, max: number = SAFE_TIMEOUT_SECONDS): string | undefined {
    if (timeoutSeconds === undefined) {
        return DEFAULT_TIMEOUT_SECONDS <= max
            ? undefined
            : `timeoutSeconds is unset, so the API server waits its default ${DEFAULT_TIMEOUT_SECONDS} s; set it to at most ${max}`;
    }
    if (typeof timeoutSeconds !== "number" || !Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > max) {
        return `timeoutSeconds is ${JSON.stringify(timeoutSeconds)}; it must be an integer from 1 to ${max}, so a slow webhook cannot stall every request it intercepts`;
    }
    return undefined;
}

/** `sideEffects` other than None or NoneOnDryRun (including unset, which v1 refuses), or undefined. */
export function sideEffectsProblem(sideEffects: unknown): string | undefined {
    if ((V1_SIDE_EFFECTS as readonly unknown[]).includes(sideEffects)) {
        return undefined;
    }
    const what = sideEffects === undefined ? "is unset" : `is ${JSON.stringify(sideEffects)}`;
    return `sideEffects ${what}; it must be ${V1_SIDE_EFFECTS.join(" or ")}, so dry runs (pulumi preview, kubectl --dry-run=server) never change anything`;
}

/**
 * The namespaces of `ALWAYS_EXCLUDED_NAMESPACES`, `ownNamespace` and `alsoExcluded` that the
 * namespaceSelector does not shut out by name, in that order, without repeats.
 */
export function unexcludedNamespaces(
    selector: LabelSelector | undefined,
    ownNamespace: string | undefined,
    alsoExcluded: readonly string[] = [],
): string[] {
    const required = [...ALWAYS_EXCLUDED_NAMESPACES, ...(ownNamespace === undefined ? [] : [ownNamespace]), ...alsoExcluded];
    return [...new Set(required)].filter((namespace) => !selectorExcludesNamespace(selector, namespace));
}

// ---------------------------------------------------------------- fail-closed backends

/** The parts of a webhook entry the availability rule reads. */
export interface WebhookEntryRef {
    name: string;
    failurePolicy?: string;
    /** `clientConfig.service`; undefined when the webhook is called by URL. */
    service?: { namespace: string; name: string };
}

export interface WebhookConfigurationRef {
    kind: string;
    name: string;
    webhooks: readonly WebhookEntryRef[];
}

export interface ServiceRef {
    namespace: string;
    name: string;
    selector?: Readonly<Record<string, string>>;
}

export interface DeploymentRef {
    namespace: string;
    name: string;
    /** `spec.replicas`; undefined means 1; "unknown" (a preview) is judged once it is known. */
    replicas?: number | "unknown";
    /** The pod template's labels. */
    podLabels: Readonly<Record<string, string>>;
}

export interface DisruptionBudgetRef {
    namespace: string;
    name: string;
    selector?: LabelSelector;
}

export interface StackWorkloads {
    services: readonly ServiceRef[];
    deployments: readonly DeploymentRef[];
    disruptionBudgets: readonly DisruptionBudgetRef[];
}

/** admissionregistration.k8s.io/v1 fails closed when failurePolicy is unset. */
export function failsClosed(webhook: Pick<WebhookEntryRef, "failurePolicy">): boolean {
    return webhook.failurePolicy === undefined || webhook.failurePolicy === "Fail";
}

const key = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;

/** One problem, and the configuration whose webhook needs it fixed. */
export interface FailClosedProblem {
    configuration: WebhookConfigurationRef;
    message: string;
}

/**
 * For every webhook that fails closed and is served by a Service: the Deployment behind that
 * Service must run at least `minReplicas` pods and be covered by a PodDisruptionBudget, or a
 * single pod restart or node drain blocks every request the webhook intercepts. Each problem is
 * reported once per webhook.
 */
export function failClosedBackendProblems(
    configurations: readonly WebhookConfigurationRef[],
    workloads: StackWorkloads,
    minReplicas: number = MIN_FAIL_CLOSED_REPLICAS,
): FailClosedProblem[] {
    const services = new Map(workloads.services.map((s) => [key(s), s]));
    const problems: FailClosedProblem[] = [];
    for (const configuration of configurations) {
        const seen = new Set<string>();
        const add = (message: string) => {
            if (!seen.has(message)) {
                seen.add(message);
                problems.push({ configuration, message });
            }
        };
        for (const webhook of configuration.webhooks.filter((w) => failsClosed(w) && w.service)) {
            const ref = webhook.service as { namespace: string; name: string };
            const who = `${configuration.kind} ${JSON.stringify(configuration.name)} webhook ${JSON.stringify(webhook.name)} fails closed (failurePolicy Fail)`;
            const service = services.get(key(ref));
            if (!service) {
                add(`${who}: its Service ${JSON.stringify(key(ref))} is not declared in this stack, so the Deployment behind it cannot be checked for ${minReplicas} replicas and a PodDisruptionBudget`);
                continue;
            }
            if (!service.selector || Object.keys(service.selector).length === 0) {
                add(`${who}: its Service ${JSON.stringify(key(ref))} has no selector, so no Deployment of this stack backs it`);
                continue;
            }
            const backends = workloads.deployments.filter(
                (d) => d.namespace === service.namespace && selectorMatches({ matchLabels: service.selector }, d.podLabels),
            );
            if (backends.length === 0) {
                add(`${who}: no Deployment in namespace ${JSON.stringify(service.namespace)} runs the pods its Service ${JSON.stringify(key(ref))} selects`);
            }
            for (const deployment of backends) {
                const replicas = deployment.replicas ?? 1;
                if (replicas !== "unknown" && replicas < minReplicas) {
                    add(`${who}: its Deployment ${JSON.stringify(key(deployment))} runs ${replicas} replica${replicas === 1 ? "" : "s"}; at least ${minReplicas} are needed so that one pod's restart does not block every request the webhook intercepts`);
                }
                const budgets = workloads.disruptionBudgets.filter(
                    (b) => b.namespace === deployment.namespace && b.selector !== undefined && selectorMatches(b.selector, deployment.podLabels),
                );
                if (budgets.length === 0) {
                    add(`${who}: no PodDisruptionBudget in namespace ${JSON.stringify(deployment.namespace)} selects the pods of its Deployment ${JSON.stringify(key(deployment))}, so a node drain may evict them all at once`);
                }
            }
        }
    }
    return problems;
}
