/**
 * `pulumi destroy` of a test's stack, checked against the stack's own state: every Kubernetes
 * object the state says the stack owns is gone afterwards, except exactly those the test lists as
 * kept by design, which must be the objects the state marks `retainOnDelete` (kept CRDs, adopted
 * roles; docs/operations.md, "Objects the stack does not own"). A failed destroy fails the test
 * (or the file, from an afterAll), so nothing a file leaves behind leaks into the next one.
 */
import { isDeepStrictEqual } from "node:util";
import { kubectlRun, type KubeObject } from "./kubectl";
import { describe as explain, type TestStack } from "./stack";

/** A Kubernetes object a stack's state records, as `Kind/name` or `Kind/namespace/name`. */
export interface OwnedObject {
    readonly apiVersion: string;
    readonly kind: string;
    readonly namespace?: string;
    readonly name: string;
    /** `retainOnDelete` in the state: destroy leaves it on the cluster. */
    readonly retained: boolean;
}

export const objectRef = (o: { kind: string; namespace?: string; name: string }): string =>
    [o.kind, ...(o.namespace ? [o.namespace] : []), o.name].join("/");

interface StateResource {
    type: string;
    custom?: boolean;
    external?: boolean;
    retainOnDelete?: boolean;
    outputs?: KubeObject;
}

/**
 * The objects a state owns: its Kubernetes custom resources with an object in their outputs; not
 * the Patch kinds (they own fields of another's object, relinquished on delete), not reads
 * (`external`), not providers.
 */
export function ownedObjects(state: string): OwnedObject[] {
    const resources = (JSON.parse(state) as { deployment: { resources?: StateResource[] } }).deployment.resources ?? [];
    return resources
        .filter((r) => r.custom && r.type.startsWith("kubernetes:") && !r.type.endsWith("Patch") && !r.external)
        .filter((r) => typeof r.outputs?.kind === "string" && typeof r.outputs?.metadata?.name === "string")
        .map((r) => ({
            apiVersion: r.outputs.apiVersion,
            kind: r.outputs.kind,
            namespace: r.outputs.metadata.namespace || undefined,
            name: r.outputs.metadata.name,
            retained: r.retainOnDelete === true,
        }));
}

/** Which of `objects` exist on the cluster: one list per kind (a kind whose CRD is gone has none). */
export function existingObjects(objects: readonly OwnedObject[]): OwnedObject[] {
    const byKind = new Map<string, OwnedObject[]>();
    for (const o of objects) {
        const resource = o.apiVersion.includes("/") ? `${o.kind}.${o.apiVersion.split("/")[0]}` : o.kind;
        byKind.set(resource, [...(byKind.get(resource) ?? []), o]);
    }
    const present: OwnedObject[] = [];
    for (const [resource, wanted] of byKind) {
        const listed = kubectlRun(["get", resource, "--all-namespaces", "--ignore-not-found", "-o", "json"]);
        if (listed.status !== 0) {
            if (/doesn't have a resource type|the server could not find the requested resource/.test(listed.stderr)) {
                continue;
            }
            throw new Error(`kubectl get ${resource} failed: ${listed.stderr.trim()}`);
        }
        const live = new Set(
            ((listed.stdout.trim() ? JSON.parse(listed.stdout).items : []) as KubeObject[]).map((item) =>
                objectRef({ kind: item.kind, namespace: item.metadata.namespace, name: item.metadata.name }),
            ),
        );
        present.push(...wanted.filter((o) => live.has(objectRef(o))));
    }
    return present;
}

/**
 * Destroys the stack and checks what remains of what its state owned: exactly `kept` (refs as
 * `objectRef` writes them), which must also be exactly what the state retains. A stack whose last
 * `up` failed part-way holds whichever retained objects were created before the failure; for it,
 * `"retained by its state"` takes the state's own list. Throws naming every difference; a failed
 * destroy throws with the CLI's output.
 */
export function destroyStack(stack: TestStack, kept: readonly string[] | "retained by its state" = []): void {
    const owned = ownedObjects(stack.exportState());
    const result = stack.destroy();
    if (result.status !== 0) {
        throw new Error(`pulumi destroy of stack ${stack.name} failed: ${explain(result)}`);
    }
    const retained = owned
        .filter((o) => o.retained)
        .map(objectRef)
        .sort();
    const expected = kept === "retained by its state" ? retained : [...kept].sort();
    const remaining = existingObjects(owned).map(objectRef).sort();
    if (!isDeepStrictEqual({ retained, remaining }, { retained: expected, remaining: expected })) {
        const missing = (from: string[], what: string[]) => from.filter((r) => !what.includes(r));
        throw new Error(
            [
                `after destroying stack ${stack.name} (${owned.length} objects in its state):`,
                `  left on the cluster though not kept by design: ${JSON.stringify(missing(remaining, expected))}`,
                `  kept by design but gone: ${JSON.stringify(missing(expected, remaining))}`,
                `  retained by the state but not listed as kept: ${JSON.stringify(missing(retained, expected))}`,
                `  listed as kept but not retained by the state: ${JSON.stringify(missing(expected, retained))}`,
            ].join("\n"),
        );
    }
}
