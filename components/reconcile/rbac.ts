/**
 * The least RBAC that runs this program from PKO's workspace, derived from what the program
 * declares: every Kubernetes object kind it registers (recorded by a stack transformation in
 * index.ts) with the verbs the Kubernetes provider uses on it. Pure.
 *
 * - Declared objects: get, list, watch (reads, refresh and await), create, update, patch
 *   (server-side apply), delete. `…Patch` resources: get, list, watch, patch (an SSA patch is
 *   released by a patch, never a delete). Reads (`.get`): get.
 * - Await logic of pulumi-kubernetes (provider/pkg/await, table and citations in
 *   await-watches.ts): get, list, watch on everything it watches for a kind the program creates,
 *   updates or deletes (Events for every kind; ReplicaSets, Pods and PersistentVolumeClaims for
 *   a Deployment...). A watch the role does not allow hangs the run instead of failing it.
 * - A program that declares Roles/ClusterRoles (operators' permissions, OLM's aggregate roles)
 *   may only grant what its identity holds, unless it may `escalate` and `bind`
 *   (kubernetes pkg/registry/rbac/escalation_check.go, "RBAC escalation prevention"). Those two
 *   verbs make this identity as strong as the roles it declares: inherent to installing operators.
 *
 * Resource names come from the source of truth, never from the kind's spelling (apimachinery's
 * own guesser is "unsafe": pkg/api/meta/restmapper.go UnsafeGuessKindToResource): the CRD
 * manifests the stack declares, then the API server's discovery (components/shared/api-resources.ts).
 * A kind neither knows stops the run, naming it: the role cannot grant what it cannot name.
 */
import { KNOWN_PLURALS, Plurals } from "../shared/api-resources";
import { compareText } from "../shared/order";
import type { PolicyRule } from "../shared/rbac";

export type { PolicyRule } from "../shared/rbac";
import { watchedFor } from "./await-watches";

export interface KindUse {
    /** `group/version` or `v1`. */
    apiVersion: string;
    kind: string;
    /** declared: created and owned; patch: a server-side-apply `…Patch`; read: `.get` only. */
    use: "declared" | "patch" | "read";
}

const VERBS = {
    declared: ["create", "delete", "get", "list", "patch", "update", "watch"],
    patch: ["get", "list", "patch", "watch"],
    read: ["get"],
} as const;

const READ_ONLY = ["get", "list", "watch"];

/** A kind's resource name, from the stack's CRDs and discovery; throws naming the kind when neither knows it. */
export function resourceOfKind(apiVersion: string, kind: string, plurals: Plurals = KNOWN_PLURALS): string {
    const plural = plurals.pluralOf(groupOf(apiVersion), kind);
    if (plural === undefined) {
        throw new Error(
            `the resource of kind ${kind} (${apiVersion}) is not known: neither a CustomResourceDefinition the stack declares nor the API server's discovery (components/shared/api-resources.table.json) names it, and the reconcile role does not guess plurals`,
        );
    }
    return plural;
}

export function groupOf(apiVersion: string): string {
    return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}

/** The ClusterRole rules for `uses`: one rule per (group, verb set), resources sorted, rules sorted. */
export function reconcileRules(uses: ReadonlyArray<KindUse>, plurals: Plurals = KNOWN_PLURALS): PolicyRule[] {
    const verbsOf = new Map<string, Set<string>>();
    const grant = (group: string, resource: string, verbs: ReadonlyArray<string>) => {
        const key = `${group}|${resource}`;
        const set = verbsOf.get(key) ?? new Set<string>();
        verbs.forEach((v) => set.add(v));
        verbsOf.set(key, set);
    };
    for (const use of uses) {
        const group = groupOf(use.apiVersion);
        grant(group, resourceOfKind(use.apiVersion, use.kind, plurals), VERBS[use.use]);
        if (use.use !== "read") {
            // Creates, updates (a patch too) and deletes await: what the provider watches then.
            for (const watched of watchedFor(group, use.kind)) {
                grant(watched.group, watched.resource, READ_ONLY);
            }
        }
        if (use.use === "declared") {
            if (group === "rbac.authorization.k8s.io" && (use.kind === "Role" || use.kind === "ClusterRole")) {
                grant(group, resourceOfKind(use.apiVersion, use.kind, plurals), ["bind", "escalate"]);
            }
        }
    }
    const byGroupAndVerbs = new Map<string, { group: string; verbs: string[]; resources: string[] }>();
    for (const [key, verbs] of verbsOf) {
        const [group, resource] = key.split("|");
        const sortedVerbs = [...verbs].sort(compareText);
        const ruleKey = `${group}|${sortedVerbs.join(",")}`;
        const rule = byGroupAndVerbs.get(ruleKey) ?? { group, verbs: sortedVerbs, resources: [] };
        rule.resources.push(resource);
        byGroupAndVerbs.set(ruleKey, rule);
    }
    // Rules by group, then by their verb lists: the order is a function of the set of uses alone.
    return [...byGroupAndVerbs.values()]
        .sort((a, b) => compareText(a.group, b.group) || compareText(a.verbs.join(","), b.verbs.join(",")))
        .map((rule) => ({ apiGroups: [rule.group], resources: [...rule.resources].sort(compareText), verbs: rule.verbs }));
}

/**
 * The kind a Pulumi Kubernetes type token names (`kubernetes:apps/v1:Deployment`,
 * `kubernetes:core/v1:ConfigMapPatch`, a CustomResource's `kubernetes:<apiVersion>:<kind>`),
 * and how the program uses it; undefined for what is not a Kubernetes object (providers,
 * components such as `kubernetes:yaml/v2:ConfigGroup`, other packages).
 */
export function kindUseOfToken(token: string, read: boolean): KindUse | undefined {
    const match = /^kubernetes:([^:]+):([A-Z][A-Za-z0-9]*)$/.exec(token);
    if (!match || match[1].startsWith("yaml") || match[1].startsWith("helm") || match[1] === "kustomize") {
        return undefined;
    }
    const [, groupVersion, typeName] = match;
    const apiVersion = groupVersion.startsWith("core/") ? groupVersion.slice("core/".length) : groupVersion;
    if (typeName.endsWith("List")) {
        return undefined;
    }
    if (typeName.endsWith("Patch")) {
        return { apiVersion, kind: typeName.slice(0, -"Patch".length), use: "patch" };
    }
    return { apiVersion, kind: typeName, use: read ? "read" : "declared" };
}
