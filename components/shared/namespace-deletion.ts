/**
 * Deleting a Namespace while another team's API is down.
 *
 * The namespace controller deletes a namespace's content for every resource discovery lists, and
 * finalizes the namespace only when that pass had no error; a group version whose discovery fails
 * (an aggregated APIService without a ready backend) is such an error, recorded as the condition
 * `NamespaceDeletionDiscoveryFailure` and retried with backoff, so the namespace stays Terminating
 * until the APIService is Available again or removed (kubernetes v1.36.3
 * `pkg/controller/namespace/deletion/namespaced_resources_deleter.go`, `deleteAllContent` and
 * `Delete`). The Kubernetes provider waits 10 minutes for a deleted object to go
 * (pulumi-kubernetes v4.25.0 `provider/pkg/await/await.go`, `Deletion`). The stack's own
 * Namespaces wait `NAMESPACE_DELETE_TIMEOUT` instead: its objects in them are deleted before the
 * Namespace (they depend on it), so a healthy deletion takes seconds; past that, the delete fails
 * naming the Namespace, the Namespace stays in the state, and the next run deletes it again.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ObjectLister } from "./object-presence";

/** How long a delete of a Namespace the stack owns waits for the namespace controller (a custom timeout: kept in the state, so `destroy` uses it too). */
export const NAMESPACE_DELETE_TIMEOUT = "60s";

/** The resource options of a Namespace the stack owns: its bounded delete. */
export const namespaceDeleteOptions: pulumi.CustomResourceOptions = { customTimeouts: { delete: NAMESPACE_DELETE_TIMEOUT } };

/** An APIService whose `Available` condition is not `True`. */
export interface UnavailableApiService {
    readonly name: string;
    readonly reason: string;
    readonly message: string;
}

/**
 * The APIServices of an APIServiceList whose `Available` condition is not `True`, by name. One
 * without the condition (not yet checked by the aggregator, or written without status, as in an
 * offline render's `--cluster`) is not known to be down and is left out.
 */
export function unavailableApiServices(list: unknown): UnavailableApiService[] {
    const items = (list as { items?: unknown } | null)?.items;
    if (!Array.isArray(items)) return [];
    const unavailable: UnavailableApiService[] = [];
    for (const item of items as { metadata?: { name?: unknown }; status?: { conditions?: unknown } }[]) {
        const name = item?.metadata?.name;
        if (typeof name !== "string") continue;
        const conditions = Array.isArray(item.status?.conditions) ? (item.status.conditions as Record<string, unknown>[]) : [];
        const available = conditions.find((c) => c?.type === "Available");
        if (!available || available.status === "True") continue;
        unavailable.push({
            name,
            reason: typeof available.reason === "string" ? available.reason : String(available.status),
            message: typeof available.message === "string" ? available.message : "",
        });
    }
    return unavailable.sort((a, b) => a.name.localeCompare(b.name));
}

/** The warning while `unavailable` APIServices exist, naming the `namespaces` the stack owns now; undefined when none is unavailable. */
export function namespaceDeletionWarning(unavailable: readonly UnavailableApiService[], namespaces: readonly string[]): string | undefined {
    if (unavailable.length === 0) return undefined;
    // A namespace removed from config is no longer in it: the warning stands whatever the stack owns now.
    const owned = namespaces.length > 0 ? `this stack's ${[...namespaces].sort().join(", ")}; ` : "";
    const services = unavailable.map((s) => `${s.name} (${s.reason}: ${s.message})`).join(", ");
    return (
        `APIService ${services} is not Available: a Namespace deleted now (${owned}any removed from config; all on pulumi destroy) ` +
        `stays Terminating until it is Available again or deleted, because the ` +
        `namespace controller finalizes a namespace only when discovery of every API group succeeds ` +
        `(condition NamespaceDeletionDiscoveryFailure; kubernetes pkg/controller/namespace/deletion). The stack's Namespace ` +
        `deletes wait ${NAMESPACE_DELETE_TIMEOUT}, then fail naming the Namespace; it stays in the state, and the next run ` +
        `deletes it again once the APIService is repaired.`
    );
}

/**
 * Warns when an APIService is not Available. `list` is the
 * pre-flight's lister (the API server the provider talks to, nothing entering the state; the
 * offline render answers from `--cluster`). An identity that may not list APIServices (a
 * least-privilege runner) gets a warning that the check was not done, never a failure.
 */
export async function warnOfUnavailableApiServices(list: ObjectLister, namespaces: readonly string[]): Promise<void> {
    const items = await list({ apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", plural: "apiservices" }).catch(
        (error: Error) => {
            pulumi.log.warn(
                `not checked whether an APIService is unavailable (which would keep a deleted Namespace Terminating): ${error.message}`,
            );
            return "unknown" as const;
        },
    );
    if (items === "unknown") return;
    const warning = namespaceDeletionWarning(unavailableApiServices({ items }), namespaces);
    if (warning) pulumi.log.warn(warning);
}
