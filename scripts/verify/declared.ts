/**
 * What a stack declares, read from the stack itself: its state (`pulumi stack export`: the objects
 * the last update wrote, with the uids the cluster gave them) and its config (`pulumi config
 * --json`, validated by the program's own config module). Nothing is guessed from the cluster:
 * verify checks what the stack says is there. Pure.
 */
import { sectionsFromPulumiConfig, validateStackConfig } from "../../components/config/load";
import type { StackConfig } from "../../components/config/schema";
import { formatReport } from "../../components/shared/problems";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- state and live objects are plain JSON
export type Json = any;

/** A Kubernetes object the stack's state holds (its last written outputs). */
export interface StateObject {
    readonly apiVersion: string;
    readonly kind: string;
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    /** A Pulumi read (`get`) of an object the stack does not own, or a server-side apply patch of one. */
    readonly owned: boolean;
    readonly object: Json;
}

export interface ClusterBundleGrant {
    readonly bundle: string;
    /** The ClusterRole granting `get` on the ClusterBundle and `use` on its shares. */
    readonly role: string;
    /** Roles it aggregates to (its `aggregate-to-<role>` labels). */
    readonly aggregatesTo: readonly string[];
    readonly shares: readonly { readonly resource: "sharedsecrets" | "sharedconfigmaps"; readonly name: string }[];
}

export interface Declared {
    readonly stack: string;
    readonly config: StackConfig;
    readonly objects: readonly StateObject[];
    readonly clusterBundles: readonly string[];
    readonly bundles: readonly { readonly namespace: string; readonly name: string }[];
    readonly grants: readonly ClusterBundleGrant[];
}

/** `Kind namespace/name` or `Kind name`. */
export function objectKey(o: { kind: string; name: string; namespace?: string }): string {
    return `${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}`;
}

/** The Kubernetes objects of a `pulumi stack export` document. */
export function stateObjects(exported: Json): StateObject[] {
    const resources = (exported?.deployment?.resources ?? []) as Json[];
    return resources.flatMap((r) => {
        const o = r.outputs;
        if (typeof r.type !== "string" || !r.type.startsWith("kubernetes:") || !o?.kind || !o?.metadata?.name) return [];
        if (r.delete === true) return [];
        return [
            {
                apiVersion: String(o.apiVersion),
                kind: String(o.kind),
                name: String(o.metadata.name),
                ...(o.metadata.namespace ? { namespace: String(o.metadata.namespace) } : {}),
                ...(o.metadata.uid ? { uid: String(o.metadata.uid) } : {}),
                owned: r.external !== true && !r.type.endsWith("Patch"),
                object: o,
            },
        ];
    });
}

const group = (apiVersion: string) => (apiVersion.includes("/") ? apiVersion.split("/")[0] : "");

/** Per ClusterRole of the stack that grants `get` on one ClusterBundle: that bundle, its shares and aggregation. */
export function clusterBundleGrants(objects: readonly StateObject[]): ClusterBundleGrant[] {
    return objects
        .filter((o) => o.owned && o.kind === "ClusterRole")
        .flatMap((o) => {
            const rules = (o.object.rules ?? []) as Json[];
            const bundles = rules
                .filter((r) => (r.resources ?? []).includes("clusterbundles") && (r.apiGroups ?? []).includes("subscription.openshift.io"))
                .flatMap((r) => (r.resourceNames ?? []) as string[]);
            if (bundles.length !== 1) return [];
            const shares = rules
                .filter((r) => (r.verbs ?? []).includes("use") && (r.apiGroups ?? []).includes("sharedresource.openshift.io"))
                .flatMap((r) =>
                    ((r.resources ?? []) as string[])
                        .filter((res): res is "sharedsecrets" | "sharedconfigmaps" => res === "sharedsecrets" || res === "sharedconfigmaps")
                        .flatMap((resource) => ((r.resourceNames ?? []) as string[]).map((name) => ({ resource, name }))),
                );
            const aggregatesTo = Object.keys(o.object.metadata?.labels ?? {})
                .filter((l) => l.startsWith("rbac.authorization.k8s.io/aggregate-to-"))
                .map((l) => l.slice("rbac.authorization.k8s.io/aggregate-to-".length))
                .sort();
            return [{ bundle: bundles[0], role: o.name, aggregatesTo, shares }];
        })
        .sort((a, b) => a.bundle.localeCompare(b.bundle));
}

/** The flat `pulumi config --json` map (secrets have no value there and are left out) as the config module takes it. */
export function configValues(configJson: Record<string, { value?: string; secret?: boolean }>): Record<string, string> {
    return Object.fromEntries(
        Object.entries(configJson).flatMap(([k, v]) => (typeof v?.value === "string" && !v.secret ? [[k, v.value]] : [])),
    );
}

/**
 * The stack's declaration, or the config module's problems (each naming the key, the value and
 * the rule), all at once.
 */
export function declared(stack: string, exported: Json, configJson: Record<string, { value?: string; secret?: boolean }>): Declared {
    const result = validateStackConfig(sectionsFromPulumiConfig(configValues(configJson)));
    if (!result.ok) {
        throw new Error(`stack ${stack}: ${formatReport(result.problems)}`);
    }
    const objects = stateObjects(exported);
    if (objects.length === 0) {
        throw new Error(
            `stack ${stack} holds no Kubernetes objects in its state: run pulumi up first (verify checks what an update wrote)`,
        );
    }
    const subscriptions = (o: StateObject) => o.owned && group(o.apiVersion) === "subscription.openshift.io";
    return {
        stack,
        config: result.config,
        objects,
        clusterBundles: objects
            .filter((o) => subscriptions(o) && o.kind === "ClusterBundle")
            .map((o) => o.name)
            .sort(),
        bundles: objects
            .filter((o) => subscriptions(o) && o.kind === "Bundle")
            .map((o) => ({ namespace: o.namespace ?? "", name: o.name }))
            .sort((a, b) => objectKey({ kind: "", ...a }).localeCompare(objectKey({ kind: "", ...b }))),
        grants: clusterBundleGrants(objects),
    };
}
