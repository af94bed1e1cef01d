/**
 * Whether the cluster verify is about to ask is the stack's: the kube context the stack's config
 * names (`cluster.kubeContext`) against the one verify would use, then the cluster's identity:
 * the uids of the cluster-scoped objects the stack created (its Namespaces and CRDs), as the state
 * recorded them, against the live ones. A cluster that is not the stack's is refused before any
 * check runs, naming both. Pure.
 */
import type { StackConfig } from "../../components/config/schema";
import { objectKey, type StateObject } from "./declared";

/** The context verify must use for the stack's config, or a refusal naming both contexts. */
export function contextFor(
    stack: string,
    cluster: StackConfig["cluster"],
    requested: string | undefined,
    current: string | undefined,
): string | undefined {
    if (cluster.renderYamlToDirectory) {
        throw new Error(
            `stack ${stack} renders YAML to ${cluster.renderYamlToDirectory} (cluster-platform:cluster.renderYamlToDirectory): it has no cluster to verify`,
        );
    }
    const named = cluster.kubeContext;
    if (named !== undefined) {
        const used = requested ?? current;
        if (used !== named) {
            throw new Error(
                `stack ${stack} names kube context "${named}" (cluster-platform:cluster.kubeContext) but verify would use "${used ?? "(none)"}" (${requested ? "--context" : "the kubeconfig's current-context"}): refusing to verify another cluster`,
            );
        }
        return named;
    }
    return requested;
}

/** The stack's cluster-scoped objects whose uid identifies the cluster (a re-created cluster gives new ones). */
export function identityObjects(objects: readonly StateObject[]): StateObject[] {
    return objects.filter((o) => o.owned && o.uid && !o.namespace && (o.kind === "Namespace" || o.kind === "CustomResourceDefinition"));
}

/**
 * Refuses when none of the identity objects has, live, the uid the state recorded: that cluster
 * is not the one the stack updated (or everything the stack made there was deleted).
 */
export function checkIdentity(
    stack: string,
    context: string,
    recorded: readonly StateObject[],
    live: ReadonlyMap<string, string | undefined>,
): void {
    if (recorded.length === 0) return;
    if (recorded.some((o) => live.get(objectKey(o)) === o.uid)) return;
    const first = recorded[0];
    throw new Error(
        `the cluster of kube context "${context}" is not stack ${stack}'s: ${objectKey(first)} has uid ${first.uid} in the stack's state and ${live.get(objectKey(first)) ?? "does not exist"} in that cluster (and no other of its ${recorded.length} Namespaces/CRDs matches); refusing`,
    );
}
