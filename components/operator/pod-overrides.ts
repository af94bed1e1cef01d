/**
 * Per-operator pod overrides (`operators[].config`), the part of OLM's Subscription `spec.config`
 * this stack applies (operator-framework/api `pkg/operators/v1alpha1/subscription_types.go`,
 * `SubscriptionConfig`), with OLM's merge rules on every container of every Deployment of the
 * operator (operator-framework/operator-lifecycle-manager
 * `pkg/controller/operators/olm/overrides/inject/inject.go`):
 * - env: `mergeEnvVars`, by name, the override wins; a container's own names keep their place,
 *   new names follow in the override's order;
 * - tolerations: `mergeTolerations`, appended unless an identical toleration is there;
 * - resources: `InjectResourcesIntoDeployment`, the whole ResourceRequirements replaced;
 * - nodeSelector: `InjectNodeSelectorIntoDeployment`, the whole map replaced.
 * Pure; the rules of the values live in the config schema (components/config/schema.ts), with
 * Kubernetes' own value rules from components/shared/k8s-names.ts and this room's from ./rules.ts.
 */
import type { PodOverridesConfig } from "../config/schema";

export type EnvEntry = { name: string; [key: string]: unknown };
type Container = { name: string; env?: EnvEntry[]; [key: string]: unknown };
type PodSpec = { containers: Container[]; [key: string]: unknown };

/** OLM's proxy variables (pkg/lib/proxy/envvar.go): an override naming one drops the cluster's proxy variables (`proxy.IsOverridden`). */
export function overridesProxy(config: PodOverridesConfig | undefined, proxyNames: readonly string[]): boolean {
    return (config?.env ?? []).some((e) => proxyNames.includes(e.name));
}

/** The pod spec with the overrides applied by OLM's rules (see the module comment). */
export function withPodOverrides<S extends PodSpec>(spec: S, config: PodOverridesConfig | undefined): S {
    if (!config) {
        return spec;
    }
    let result: S = { ...spec };
    if (config.env && config.env.length > 0) {
        const overrides = config.env.map((e) => JSON.parse(JSON.stringify(e)) as EnvEntry);
        result = { ...result, containers: result.containers.map((c) => ({ ...c, env: mergedEnv(c.env ?? [], overrides) })) };
    }
    if (config.resources) {
        const resources = JSON.parse(JSON.stringify(config.resources)) as Record<string, unknown>;
        result = { ...result, containers: result.containers.map((c) => ({ ...c, resources })) };
    }
    if (config.nodeSelector) {
        result = { ...result, nodeSelector: { ...config.nodeSelector } };
    }
    if (config.tolerations && config.tolerations.length > 0) {
        const own = (Array.isArray(result.tolerations) ? result.tolerations : []) as Record<string, unknown>[];
        const added = config.tolerations.filter((t) => !own.some((o) => sameToleration(o, t)));
        result = { ...result, tolerations: [...own, ...added.map((t) => ({ ...t }))] };
    }
    return result;
}

/**
 * OLM's `mergeEnvVars` (pkg/controller/operators/olm/overrides/inject/inject.go), for the
 * Subscription config's env and the cluster proxy's variables alike: every name the container
 * has keeps its place with the added value where one is added (the last of a repeated name), then
 * the added names the container lacks follow in the order given.
 */
export function mergedEnv<E extends EnvEntry>(own: readonly E[], added: readonly E[]): E[] {
    const byName = new Map(added.map((e) => [e.name, e]));
    const kept = own.map((e) => byName.get(e.name) ?? e);
    const ownNames = new Set(own.map((e) => e.name));
    return [...kept, ...added.filter((e) => !ownNames.has(e.name))];
}

/**
 * Go's `reflect.DeepEqual` on two `corev1.Toleration`s: an absent string field is Go's zero value
 * `""`; `tolerationSeconds` is a pointer, so absent equals absent only.
 */
function sameToleration(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
    const text = (t: Record<string, unknown>, k: string) => (t[k] === undefined ? "" : t[k]);
    return ["key", "operator", "value", "effect"].every((k) => text(a, k) === text(b, k)) && a.tolerationSeconds === b.tolerationSeconds;
}
