/**
 * How many pods each operator Deployment runs, and what that means for its fail-closed webhooks.
 *
 * OLM runs the CSV's `replicas` (apps/v1's default of 1 when absent) and its Subscription
 * `spec.config` has no replica field (operator-framework/api `pkg/operators/v1alpha1/
 * subscription_types.go`, `SubscriptionConfig`), so a bundle with one pod behind a webhook that
 * fails closed refuses every call that webhook intercepts while the pod restarts or moves. The
 * stack adds `operators[].config.replicas` for that case. A PodDisruptionBudget only helps with two
 * pods or more: `maxUnavailable: 1` over one pod lets a drain evict it, and a budget that allowed
 * no eviction would block every node drain instead; so a one-replica backend gets no budget, and
 * a warning naming the override.
 */
import { failsClosed, MIN_FAIL_CLOSED_REPLICAS, type WebhookEntryRef } from "../admission-webhook/rules";
import type { PodOverridesConfig } from "../config/schema";
import { describeValue } from "../shared/problems";
import type { StrategyDeployment } from "./csv";

/** The replicas a Deployment of the install runs: `operators[].config.replicas`, else the CSV's, else 1. */
export function effectiveReplicas(deployment: StrategyDeployment, overrides: PodOverridesConfig | undefined): number {
    return overrides?.replicas ?? deployment.spec.replicas ?? 1;
}

/** Whether a backend with these webhooks and replicas gets a PodDisruptionBudget (fail-closed webhooks, two pods or more). */
export function needsDisruptionBudget(webhooks: readonly Pick<WebhookEntryRef, "failurePolicy">[], replicas: number): boolean {
    return webhooks.some(failsClosed) && replicas >= MIN_FAIL_CLOSED_REPLICAS;
}

/**
 * The bundle's own PodDisruptionBudget over a Deployment's pods, by name: one named after the
 * Deployment (the name the stack's budget takes, webhookDisruptionBudget; two resources for one
 * object would fight) or one whose `matchLabels` all hold on the pod template (the eviction API
 * refuses a pod that two budgets select: kubernetes pkg/registry/core/pod/storage/eviction.go,
 * "This pod has more than one PodDisruptionBudget"). OLM creates the bundle's budget as it is
 * (catalog/supportedresources.go) and none of its own, so the stack then adds none.
 */
export function bundleDisruptionBudget(
    bundleObjects: readonly { kind: string; name: string; manifest: Readonly<Record<string, unknown>> }[],
    deployment: string,
    podLabels: Readonly<Record<string, string>>,
): string | undefined {
    return bundleObjects.find((o) => {
        if (o.kind !== "PodDisruptionBudget") return false;
        if (o.name === deployment) return true;
        const selector = (
            o.manifest.spec as { selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } } | undefined
        )?.selector;
        const matchLabels = Object.entries(selector?.matchLabels ?? {});
        return (
            matchLabels.length > 0 && (selector?.matchExpressions ?? []).length === 0 && matchLabels.every(([k, v]) => podLabels[k] === v)
        );
    })?.name;
}

/** The warning for a Deployment that serves fail-closed webhooks with fewer than two pods, or undefined. */
export function singlePodWarning(
    deployment: string,
    webhooks: readonly Pick<WebhookEntryRef, "name" | "failurePolicy">[],
    replicas: number,
    configPath: string,
): string | undefined {
    const closed = webhooks.filter(failsClosed).map((w) => w.name);
    if (closed.length === 0 || replicas >= MIN_FAIL_CLOSED_REPLICAS) {
        return undefined;
    }
    return `deployment ${describeValue(deployment)} runs ${replicas} replica behind webhooks that fail closed (${closed.join(", ")}): while its pod restarts or is evicted, every call they intercept is refused, and no PodDisruptionBudget is declared (with one pod it could only let the drain through or block it); set ${configPath}.replicas to ${MIN_FAIL_CLOSED_REPLICAS} or more`;
}
