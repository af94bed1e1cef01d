/**
 * The RBAC evaluator (components/shared/rbac-power.ts) against the real API server, which is the
 * oracle (issue 36, point 2). A generated population of cases (fast-check, from the one seed;
 * 500 per run) is applied to the real tier's kube-apiserver: each case a subject of its
 * own (a user, a group member or a service account, some in system:authenticated) with
 * ClusterRoles, Roles, aggregationRules (over the case's roles and over the cluster's own:
 * `kubernetes.io/bootstrapping=rbac-defaults`, `aggregate-to-edit`), roles that join `view`,
 * ClusterRoleBindings and RoleBindings of its roles and of the cluster's, and server-side-apply
 * patches by a second field manager (rules replaced, subjects replaced). The real
 * kube-controller-manager's aggregation controller aggregates (the test watches the aggregated
 * ClusterRoles until they hold what the model expects, or a deadline). Then each case's subject
 * is asked, as SubjectAccessReviews, the requests of the dangerous-request set
 * (components/shared/rbac-dangerous.ts, at the cluster scope and in both namespaces) that a rule
 * the server holds for it could touch (`dangerousAsked`: string-level, looser than the
 * authorizer), a rotating sample of the rest, ordinary requests and requests each generated rule
 * names; the evaluator must answer each one as the API server does, 0 disagreements. Every request
 * of the set is asked of some subject in every run. Asking all of the set of every subject
 * (about 260 reviews a case, 130,000 a run) cost about 2 ms of API server CPU a review: over the
 * CI budget. The evaluator's input is what the test declared (patches merged by
 * `patchedRole`/`patchedBinding`) over the RBAC objects the cluster held before; never what the
 * server made of it.
 *
 * The population is reviewed in one batch; fc.assert then replays the same cases (fc.sample and
 * fc.assert draw the same values from the one seed), each judged by the batch's verdict, so a
 * disagreement is shrunk by fast-check, every shrunk case applied and reviewed alone.
 *
 * The checked-in Kubernetes well-known objects (components/shared/rbac-well-known.kubernetes.json)
 * are held to the cluster's bootstrap policy first, and the discovery part of the plurals table
 * (components/shared/api-resources.table.json) to the cluster's discovery.
 */
import * as https from "node:https";
import fc from "fast-check";
import type { LabelSelector } from "../../components/shared/label-selector";
import type { AuthorizationRequest, PolicyRule, RbacSubject } from "../../components/shared/rbac";
import { isNonResourceRequest } from "../../components/shared/rbac";
import { dangerousRequests, NO_POWERFUL, powerfulIdentities, PROBE } from "../../components/shared/rbac-dangerous";
import {
    BindingObject,
    ClusterRoleObject,
    mergeObjects,
    patchedBinding,
    patchedRole,
    RbacAuthorizer,
    RbacObjects,
    RoleObject,
    UserInfo,
    userOfSubject,
} from "../../components/shared/rbac-power";
import apiResources from "../../components/shared/api-resources.table.json";
import kubernetesWellKnown from "../../components/shared/rbac-well-known.kubernetes.json";
import { BOOTSTRAP_LABEL, discoveredResources, normalize } from "../../scripts/policy/well-known-rbac";
import { type AccessReviewSpec, ApiClient, askAccessReviews, inParallel } from "./helpers/api-client";
import { kubectl, KubeObject } from "./helpers/kubectl";
import { realEnv } from "./helpers/stack";

const RUN_LABEL = "rbac-diff.cluster-platform.io/run";
const NAMESPACES = ["rbac-diff-a", "rbac-diff-b"] as const;
const CASES = 500;
const RBAC_API = "rbac.authorization.k8s.io/v1";

// ---------------------------------------------------------------- the population

const VERBS = ["*", "get", "list", "watch", "create", "update", "patch", "delete", "escalate", "bind", "impersonate", "approve", "use"];
const GROUPS = [
    "",
    "*",
    "rbac.authorization.k8s.io",
    "apps",
    "certificates.k8s.io",
    "security.openshift.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
];
const RESOURCES = [
    "*",
    "secrets",
    "pods",
    "pods/exec",
    "pods/*",
    "*/exec",
    "*/proxy",
    "nodes/proxy",
    "serviceaccounts",
    "serviceaccounts/token",
    "*/token",
    "clusterroles",
    "roles",
    "users",
    "groups",
    "signers",
    "certificatesigningrequests/approval",
    "customresourcedefinitions",
    "mutatingwebhookconfigurations",
    "apiservices",
    "securitycontextconstraints",
    "configmaps",
    "deployments",
];
const NAMES = [
    [],
    [""],
    ["x"],
    ["cluster-admin"],
    ["privileged"],
    ["kubernetes.io/kube-apiserver-client"],
    ["kubernetes.io/*"],
    ["system:masters"],
    ["", "x"],
];
const URLS = ["*", "/*", "/healthz", "/api*", "/logs/*", "/cluster-platform-probe", "/version"];
/** Roles the cluster holds that a case may bind (one absent: a binding to it grants nothing). */
const CLUSTER_ROLES = [
    "view",
    "edit",
    "admin",
    "cluster-admin",
    "system:basic-user",
    "system:controller:clusterrole-aggregation-controller",
    "system:auth-delegator",
    "rbac-diff-absent",
];

const resourceRule = fc.record({
    apiGroups: fc.subarray(GROUPS, { minLength: 1, maxLength: 2 }),
    resources: fc.subarray(RESOURCES, { minLength: 1, maxLength: 3 }),
    verbs: fc.subarray(VERBS, { minLength: 1, maxLength: 3 }),
    resourceNames: fc.constantFrom(...NAMES),
});
const urlRule = fc.record({
    nonResourceURLs: fc.subarray(URLS, { minLength: 1, maxLength: 2 }),
    verbs: fc.subarray(["get", "post", "*"], { minLength: 1 }),
});
const clusterRule = fc.oneof({ weight: 5, arbitrary: resourceRule }, { weight: 1, arbitrary: urlRule });

type Rule = Partial<PolicyRule>;

/** A selector an aggregated case role uses: another of the case's roles, or the cluster's own roles. */
type SelectorChoice = { own: number } | { cluster: "bootstrap" | "edit" } | { ownExists: number };

interface GeneratedCase {
    subject: "user" | "group" | "serviceaccount";
    authenticated: boolean;
    clusterRoles: { rules: Rule[]; joinsView: boolean; selectors?: SelectorChoice[] }[];
    role?: { namespace: number; rules: Rule[] };
    bindings: { scope: "cluster" | number; roleRef: { case: "clusterRole"; index: number } | { case: "role" } | { cluster: string } }[];
    patch?: { clusterRole: number; rules: Rule[] } | { binding: number; keepSubject: boolean };
}

const caseArb: fc.Arbitrary<GeneratedCase> = fc
    .record({
        subject: fc.constantFrom<GeneratedCase["subject"]>("user", "group", "serviceaccount"),
        authenticated: fc.boolean(),
        clusterRoles: fc.array(
            fc.record({
                rules: fc.array(clusterRule, { maxLength: 3 }),
                // One role in four aggregates: enough of them each run, and few enough writes for the controller (20 per second).
                aggregated: fc.nat(3).map((n) => n === 3),
                selectorSeeds: fc.array(fc.nat(9), { minLength: 1, maxLength: 2 }),
            }),
            { maxLength: 3 },
        ),
        roleRules: fc.option(fc.tuple(fc.nat(1), fc.array(resourceRule, { maxLength: 3 })), { nil: undefined }),
        bindingSeeds: fc.array(fc.tuple(fc.nat(2), fc.nat(20)), { minLength: 1, maxLength: 3 }),
        joinsViewSeed: fc.nat(19),
        patchSeed: fc.option(fc.tuple(fc.boolean(), fc.nat(5), fc.array(clusterRule, { maxLength: 2 }), fc.boolean()), { nil: undefined }),
    })
    .map((g) => {
        const clusterRoles = g.clusterRoles.map((r, j) => {
            // Only a role that is not itself aggregated joins view (no cycle through the cluster's roles); one case in twenty.
            const joinsView = !r.aggregated && g.joinsViewSeed === 0 && j === 0;
            const selectors = r.aggregated
                ? r.selectorSeeds.map((seed): SelectorChoice => {
                      if (seed === 0) return { cluster: "bootstrap" };
                      if (seed === 1) return { cluster: "edit" };
                      // Only roles before this one: aggregation among a case's roles has no cycle.
                      if (j === 0) return { cluster: "edit" };
                      return seed % 2 === 0 ? { own: seed % j } : { ownExists: seed % j };
                  })
                : undefined;
            return { rules: r.rules, joinsView, ...(selectors ? { selectors } : {}) };
        });
        const role = g.roleRules ? { namespace: g.roleRules[0], rules: g.roleRules[1].filter((r) => "resources" in r) } : undefined;
        const bindings = g.bindingSeeds.map(([scopeSeed, refSeed]): GeneratedCase["bindings"][number] => {
            const scope: "cluster" | number = scopeSeed === 2 ? "cluster" : scopeSeed;
            if (refSeed < 8) return { scope, roleRef: { cluster: CLUSTER_ROLES[refSeed] } };
            if (role && refSeed < 11 && scope !== "cluster" && scope === role.namespace) return { scope, roleRef: { case: "role" } };
            if (clusterRoles.length > 0) return { scope, roleRef: { case: "clusterRole", index: refSeed % clusterRoles.length } };
            return { scope, roleRef: { cluster: CLUSTER_ROLES[refSeed % 8] } };
        });
        let patch: GeneratedCase["patch"];
        if (g.patchSeed) {
            const [onRole, index, rules, keepSubject] = g.patchSeed;
            const patchable = clusterRoles.map((r, j) => (r.selectors ? -1 : j)).filter((j) => j >= 0);
            patch =
                onRole && patchable.length > 0
                    ? { clusterRole: patchable[index % patchable.length], rules }
                    : { binding: index % bindings.length, keepSubject };
        }
        return {
            subject: g.subject,
            authenticated: g.authenticated,
            clusterRoles,
            ...(role ? { role } : {}),
            bindings,
            ...(patch ? { patch } : {}),
        };
    });

// ---------------------------------------------------------------- one case as objects

interface Materialized {
    user: UserInfo;
    /** What the test declares, as the API objects it applies. */
    objects: KubeObject[];
    /** The patches, applied by a second field manager. */
    patches: KubeObject[];
    /** What the evaluator is told: the declared objects with the patches merged. */
    model: RbacObjects;
    /** Requests to ask beyond the dangerous set: what each generated rule names. */
    ruleRequests: AuthorizationRequest[];
}

function compact(rule: Rule): Rule {
    return Object.fromEntries(Object.entries(rule).filter(([, v]) => Array.isArray(v) && v.length > 0)) as Rule;
}

function materialize(c: GeneratedCase, run: string, i: number): Materialized {
    const prefix = `rd-${run}-${i}`;
    const labels = { [RUN_LABEL]: run };
    const ownLabel = (j: number) => `rbac-diff.cluster-platform.io/${prefix}-${j}`;
    const serviceAccount: RbacSubject = { kind: "ServiceAccount", name: prefix, namespace: NAMESPACES[0] };
    const subject: RbacSubject =
        c.subject === "user"
            ? { kind: "User", name: prefix }
            : c.subject === "group"
              ? { kind: "Group", name: `${prefix}-team` }
              : serviceAccount;
    const base = userOfSubject(subject) as UserInfo;
    const user: UserInfo =
        c.subject === "group"
            ? { name: `${prefix}-member`, groups: [`${prefix}-team`, ...(c.authenticated ? ["system:authenticated"] : [])] }
            : c.subject === "user" && !c.authenticated
              ? { name: base.name, groups: [] }
              : base;
    const selectorOf = (choice: SelectorChoice): LabelSelector =>
        "own" in choice
            ? { matchLabels: { [ownLabel(choice.own)]: "x" } }
            : "ownExists" in choice
              ? { matchExpressions: [{ key: ownLabel(choice.ownExists), operator: "Exists" }] }
              : choice.cluster === "bootstrap"
                ? { matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } }
                : { matchLabels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } };
    const clusterRoles: ClusterRoleObject[] = c.clusterRoles.map((r, j) => ({
        name: `${prefix}-cr${j}`,
        labels: { ...labels, [ownLabel(j)]: "x", ...(r.joinsView ? { "rbac.authorization.k8s.io/aggregate-to-view": "true" } : {}) },
        rules: r.rules.map(compact),
        ...(r.selectors ? { aggregationRule: { clusterRoleSelectors: r.selectors.map(selectorOf) } } : {}),
    }));
    const roles: RoleObject[] = c.role
        ? [{ name: `${prefix}-r`, namespace: NAMESPACES[c.role.namespace], rules: c.role.rules.map(compact) }]
        : [];
    const bindings: BindingObject[] = c.bindings.map((b, k) => {
        const roleRef =
            "cluster" in b.roleRef
                ? { kind: "ClusterRole", name: b.roleRef.cluster }
                : b.roleRef.case === "role"
                  ? { kind: "Role", name: `${prefix}-r` }
                  : { kind: "ClusterRole", name: `${prefix}-cr${b.roleRef.index}` };
        return b.scope === "cluster"
            ? { kind: "ClusterRoleBinding", name: `${prefix}-crb${k}`, roleRef, subjects: [subject] }
            : { kind: "RoleBinding", name: `${prefix}-rb${k}`, namespace: NAMESPACES[b.scope], roleRef, subjects: [subject] };
    });
    const meta = (name: string, namespace?: string, extra: Record<string, string> = {}) => ({
        name,
        ...(namespace ? { namespace } : {}),
        labels: { ...labels, ...extra },
    });
    const objects: KubeObject[] = [
        ...(c.subject === "serviceaccount" ? [{ apiVersion: "v1", kind: "ServiceAccount", metadata: meta(prefix, NAMESPACES[0]) }] : []),
        ...clusterRoles.map((r) => ({
            apiVersion: RBAC_API,
            kind: "ClusterRole",
            metadata: { name: r.name, labels: r.labels },
            rules: r.rules,
            ...(r.aggregationRule ? { aggregationRule: r.aggregationRule } : {}),
        })),
        ...roles.map((r) => ({ apiVersion: RBAC_API, kind: "Role", metadata: meta(r.name, r.namespace), rules: r.rules })),
        ...bindings.map((b) => ({
            apiVersion: RBAC_API,
            kind: b.kind,
            metadata: meta(b.name, b.namespace),
            roleRef: { apiGroup: "rbac.authorization.k8s.io", ...b.roleRef },
            subjects: b.subjects.map((s) => (s.kind === "ServiceAccount" ? s : { apiGroup: "rbac.authorization.k8s.io", ...s })),
        })),
    ];
    const patches: KubeObject[] = [];
    const modelRoles = [...clusterRoles];
    const modelBindings = [...bindings];
    if (c.patch && "clusterRole" in c.patch) {
        const rules = c.patch.rules.map(compact);
        const target = clusterRoles[c.patch.clusterRole];
        patches.push({ apiVersion: RBAC_API, kind: "ClusterRole", metadata: { name: target.name }, rules });
        modelRoles[c.patch.clusterRole] = patchedRole(target, { rules });
    } else if (c.patch) {
        const target = bindings[c.patch.binding];
        const subjects = c.patch.keepSubject ? target.subjects : [{ kind: "User", name: `${prefix}-someone-else` }];
        patches.push({
            apiVersion: RBAC_API,
            kind: target.kind,
            metadata: { name: target.name, ...(target.namespace ? { namespace: target.namespace } : {}) },
            subjects: subjects.map((s) => (s.kind === "ServiceAccount" ? s : { apiGroup: "rbac.authorization.k8s.io", ...s })),
        });
        modelBindings[c.patch.binding] = patchedBinding(target, { subjects });
    }
    const ruleRequests = [...modelRoles.flatMap((r) => r.rules), ...roles.flatMap((r) => r.rules)].flatMap((rule) =>
        requestsNamedBy(rule, roles[0]?.namespace),
    );
    return { user, objects, patches, model: { clusterRoles: modelRoles, roles, bindings: modelBindings }, ruleRequests };
}

/** A request each generated rule names (its first verb, group, resource and name), in every namespace and in the case's. */
function requestsNamedBy(rule: Rule, namespace: string | undefined): AuthorizationRequest[] {
    const verb = (rule.verbs ?? ["get"])[0] === "*" ? "get" : (rule.verbs ?? ["get"])[0];
    if ((rule.nonResourceURLs ?? []).length > 0) {
        const url = (rule.nonResourceURLs as string[])[0];
        return [{ verb, path: url === "*" ? "/anything" : url.replace(/\*+$/, "x") }];
    }
    const group = (rule.apiGroups ?? [""])[0] === "*" ? "apps" : (rule.apiGroups ?? [""])[0];
    const [resource, subresource] = ((rule.resources ?? ["pods"])[0] === "*" ? "pods" : (rule.resources ?? ["pods"])[0]).split("/");
    const name = (rule.resourceNames ?? [])[0] ?? "some-name";
    const base = {
        verb,
        group,
        resource: resource === "*" ? "pods" : resource,
        ...(subresource ? { subresource: subresource === "*" ? "status" : subresource } : {}),
        name,
    };
    return ["", ...(namespace ? [namespace] : []), NAMESPACES[1]].map((ns) => ({ ...base, namespace: ns }));
}

/** Requests every case is asked besides the dangerous set: ordinary ones, which the bootstrap policy answers for authenticated users. */
const ORDINARY: AuthorizationRequest[] = [
    { verb: "get", path: "/healthz" },
    { verb: "get", path: "/version" },
    { verb: "get", path: "/api" },
    { verb: "create", group: "authorization.k8s.io", resource: "selfsubjectaccessreviews", name: "" },
    ...NAMESPACES.flatMap((ns) => [
        { verb: "get", group: "", resource: "configmaps", namespace: ns, name: "c" },
        { verb: "list", group: "apps", resource: "deployments", namespace: ns, name: "" },
        { verb: "create", group: "", resource: "pods", namespace: ns, name: "" },
    ]),
    { verb: "list", group: "", resource: "pods", namespace: "", name: "" },
];

// ---------------------------------------------------------------- the API server

/** The API server (helpers/api-client.ts): a pool of SOCKETS connections, IN_FLIGHT requests queued on it at a time. */
const SOCKETS = 16;
const IN_FLIGHT = 32;

let client: ApiClient;

const PLURALS: Record<string, string> = {
    ClusterRole: "clusterroles",
    Role: "roles",
    ClusterRoleBinding: "clusterrolebindings",
    RoleBinding: "rolebindings",
    ServiceAccount: "serviceaccounts",
};

function collectionPath(apiVersion: string, kind: string, namespace?: string): string {
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    return `${base}${namespace ? `/namespaces/${namespace}` : ""}/${PLURALS[kind]}`;
}

/** Server-side apply of one object by `manager` (what `kubectl apply --server-side` sends), forced for the patches. */
async function apply(object: KubeObject, manager: string, force: boolean): Promise<void> {
    const { status, json } = await client.request(
        "PATCH",
        `${collectionPath(object.apiVersion, object.kind, object.metadata.namespace)}/${encodeURIComponent(object.metadata.name)}?fieldManager=${manager}${force ? "&force=true" : ""}`,
        object,
        "application/apply-patch+yaml",
    );
    if (status !== 200 && status !== 201) {
        throw new Error(
            `server-side apply of ${object.kind} ${object.metadata.name} failed: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`,
        );
    }
}

/** Deletes every object of a run: one deletecollection per kind and namespace. */
async function deleteRun(run: string): Promise<void> {
    const selector = `?labelSelector=${encodeURIComponent(`${RUN_LABEL}=${run}`)}`;
    const collections = [
        collectionPath(RBAC_API, "ClusterRole"),
        collectionPath(RBAC_API, "ClusterRoleBinding"),
        ...NAMESPACES.flatMap((ns) => [
            collectionPath(RBAC_API, "Role", ns),
            collectionPath(RBAC_API, "RoleBinding", ns),
            collectionPath("v1", "ServiceAccount", ns),
        ]),
    ];
    for (const collection of collections) {
        const { status, json } = await client.request("DELETE", `${collection}${selector}`);
        if (status !== 200) {
            throw new Error(`deleting ${collection}${selector} failed: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`);
        }
    }
}

/** The SubjectAccessReview spec that asks whether `user` may make `req`. */
function accessReviewSpec(user: UserInfo, req: AuthorizationRequest): AccessReviewSpec {
    return {
        user: user.name,
        groups: user.groups,
        ...(isNonResourceRequest(req)
            ? { nonResourceAttributes: { verb: req.verb, path: req.path } }
            : {
                  resourceAttributes: {
                      verb: req.verb,
                      group: req.group,
                      resource: req.resource,
                      ...(req.subresource ? { subresource: req.subresource } : {}),
                      ...(req.name ? { name: req.name } : {}),
                      ...(req.namespace ? { namespace: req.namespace } : {}),
                  },
              }),
    };
}

/** The cluster's RBAC objects (both role and both binding kinds, every namespace) that `selector` selects. */
function rbacObjectsSelected(selector: string): KubeObject[] {
    const kinds =
        "clusterroles.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io";
    return JSON.parse(kubectl(["get", kinds, "-A", "-l", selector, "-o", "json"])).items as KubeObject[];
}

/** The cluster's RBAC objects not made by this test, as the evaluator reads objects. */
function clusterObjects(): RbacObjects {
    const n = normalize(rbacObjectsSelected(`!${RUN_LABEL}`));
    return {
        clusterRoles: n.clusterRoles.map((r) => ({
            name: r.name,
            labels: r.labels ?? {},
            rules: r.rules,
            ...(r.aggregationRule ? { aggregationRule: r.aggregationRule } : {}),
        })),
        roles: n.roles,
        bindings: n.bindings,
    };
}

const ruleSetKey = (rules: readonly Rule[]) =>
    JSON.stringify(
        [
            ...new Set(
                rules.map((r) =>
                    JSON.stringify(
                        ["apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"].map((k) => r[k as keyof PolicyRule] ?? []),
                    ),
                ),
            ),
        ].sort(),
    );

/**
 * Waits, by watching ClusterRoles, until the aggregation controller has written what the model
 * expects of every aggregated role, or the deadline passes; returns the roles still pending, and the
 * aggregators with an empty union seen holding no rules (below). The
 * verdict is the reviews', not this wait's: a role the model gets wrong stays pending until the
 * deadline, and its reviews then disagree.
 */
async function aggregationSettled(authorizer: RbacAuthorizer, deadlineMs: number): Promise<{ pending: string[]; emptied: string[] }> {
    const expected = new Map(
        authorizer.objects.clusterRoles
            .filter((r) => r.aggregationRule)
            .map((r) => [r.name, ruleSetKey(authorizer.clusterRoleRules(r.name) ?? [])]),
    );
    // An aggregator whose selected roles hold no rules (a patch emptied them) keeps the rules it was
    // written with only if the controller never wrote its own: once it has applied a union, its later
    // apply without rules drops its ownership and server-side apply removes the field
    // (clusterroleaggregation_controller.go `applyClusterRoles`). Which one happened depends on whether
    // the controller synced before the patch landed, so both are settled states; the model keeps the
    // written rules, the larger power. Seen on the real tier: rd-r1-17-cr1 and rd-r1-113-cr1 waited out
    // the whole deadline holding no rules.
    const emptyUnion = new Set(
        authorizer.objects.clusterRoles
            .filter(
                (r) =>
                    r.aggregationRule &&
                    authorizer.aggregatedFrom(r.name).every((o) => (authorizer.clusterRoleRules(o.name) ?? []).length === 0),
            )
            .map((r) => r.name),
    );
    const deadline = Date.now() + deadlineMs;
    const pending = new Set(expected.keys());
    const emptied = new Set<string>();
    const observe = (o: KubeObject) => {
        const want = expected.get(o.metadata.name);
        const held = ruleSetKey(o.rules ?? []);
        if (emptyUnion.has(o.metadata.name) && held === ruleSetKey([]) && held !== want) emptied.add(o.metadata.name);
        else emptied.delete(o.metadata.name);
        if (want !== undefined && (held === want || (emptyUnion.has(o.metadata.name) && held === ruleSetKey([]))))
            pending.delete(o.metadata.name);
        else if (want !== undefined) pending.add(o.metadata.name);
    };
    const path = collectionPath(RBAC_API, "ClusterRole");
    while (pending.size > 0 && Date.now() < deadline) {
        const list = await client.request("GET", path);
        if (list.status !== 200) throw new Error(`listing ClusterRoles failed: HTTP ${list.status}`);
        (list.json.items as KubeObject[]).forEach(observe);
        if (pending.size === 0) break;
        const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
        // Watch from the list's version until every pending role is as expected, the server ends the watch at the deadline, or the connection breaks (then list again).
        await new Promise<void>((resolve) => {
            const req = https.request(
                {
                    agent: client.agent,
                    host: client.server.hostname,
                    port: client.server.port,
                    method: "GET",
                    path: `${path}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}&timeoutSeconds=${seconds}`,
                    headers: { accept: "application/json" },
                },
                (res) => {
                    let buffered = "";
                    res.setEncoding("utf8");
                    res.on("data", (chunk: string) => {
                        buffered += chunk;
                        for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
                            const event = JSON.parse(buffered.slice(0, nl)) as { type: string; object: KubeObject };
                            buffered = buffered.slice(nl + 1);
                            if (event.type === "ADDED" || event.type === "MODIFIED") observe(event.object);
                        }
                        if (pending.size === 0) req.destroy();
                    });
                    res.on("end", resolve);
                    res.on("close", resolve);
                    res.on("error", resolve);
                },
            );
            req.on("error", (error) => {
                if (pending.size > 0) client.transportRetries.push(`watch ClusterRoles: ${error.message}`);
                resolve();
            });
            req.end();
        });
    }
    if (pending.size > 0) {
        // Why the first few still differ, as rule sets: what the server holds beyond the model, and the reverse.
        const list = await client.request("GET", path);
        const items = (list.json.items as KubeObject[]) ?? [];
        for (const name of [...pending].slice(0, 3)) {
            const stored = new Set((JSON.parse(ruleSetKey(items.find((o) => o.metadata.name === name)?.rules ?? [])) as string[]) ?? []);
            const modeled = new Set(JSON.parse(expected.get(name) as string) as string[]);
            process.stdout.write(
                `rbac differential: ${name} not as modeled: server only ${JSON.stringify([...stored].filter((r) => !modeled.has(r)).slice(0, 5))}; ` +
                    `model only ${JSON.stringify([...modeled].filter((r) => !stored.has(r)).slice(0, 5))}\n`,
            );
        }
    }
    return { pending: [...pending], emptied: [...emptied] };
}

// ---------------------------------------------------------------- one check

/** A request on which the evaluator and the API server answer differently. */
interface Disagreement {
    request: AuthorizationRequest;
    server: boolean;
    evaluator: boolean;
}

interface Checked {
    /** Per case, its disagreements. */
    disagreements: Disagreement[][];
    reviews: number;
    summary: string;
    /** The fewest subjects any request of the dangerous set was asked of. */
    leastAsked: number;
}

/** The requests asked of every case: the dangerous set at every scope (for the cluster's powerful names and for none). */
function dangerousSet(base: RbacObjects): AuthorizationRequest[] {
    // The powerful names of the set are the cluster's own (as the pack's are the well-known objects'), not the cases'.
    const powerful = powerfulIdentities(new RbacAuthorizer(base));
    const scopes = [{}, ...NAMESPACES.map((namespace) => ({ namespace }))];
    return [
        ...new Map(
            scopes
                .flatMap((scope) => [...dangerousRequests(scope, powerful), ...dangerousRequests(scope, NO_POWERFUL)])
                .flatMap((d) => [d.request, ...(d.with ?? [])])
                .map((r) => [JSON.stringify(r), r]),
        ).values(),
    ];
}

/**
 * What the server holds that could give a subject a request, read back after aggregation and
 * matched loosely (strings, not the authorizer's semantics): which requests each case is asked.
 */
interface LiveRbac {
    /** Rules by role name, ClusterRoles and Roles of every namespace together. */
    rules: Map<string, Rule[]>;
    /** Per binding of either kind: the strings its subjects may stand for, and the role it names. */
    bindings: { names: Set<string>; role: string }[];
}

async function liveRbac(): Promise<LiveRbac> {
    const list = async (kind: string) => {
        const { status, json } = await client.request("GET", collectionPath(RBAC_API, kind));
        if (status !== 200) throw new Error(`listing ${kind} failed: HTTP ${status}`);
        return json.items as KubeObject[];
    };
    const [clusterRoles, roles, clusterRoleBindings, roleBindings] = await Promise.all(
        ["ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"].map(list),
    );
    const rules = new Map<string, Rule[]>();
    for (const r of [...clusterRoles, ...roles]) rules.set(r.metadata.name, [...(rules.get(r.metadata.name) ?? []), ...(r.rules ?? [])]);
    const bindings = [...clusterRoleBindings, ...roleBindings].map((b) => ({
        names: new Set<string>(
            (b.subjects ?? []).flatMap((s: RbacSubject) => [
                s.name ?? "",
                `system:serviceaccount:${s.namespace ?? b.metadata.namespace ?? ""}:${s.name}`,
            ]),
        ),
        role: b.roleRef.name as string,
    }));
    return { rules, bindings };
}

/** Every rule a binding naming the user or one of its groups (any kind, any scope) gives through the role it names (any kind, any namespace). */
function reachableRules(live: LiveRbac, user: UserInfo): Rule[] {
    const names = new Set([user.name, ...user.groups]);
    return live.bindings.filter((b) => [...b.names].some((n) => names.has(n))).flatMap((b) => live.rules.get(b.role) ?? []);
}

const wild = (values: readonly string[] | undefined) => (values ?? []).some((v) => v.includes("*"));

/**
 * Whether a rule could have anything to do with a request: its verb listed (or a `*`), and for
 * a resource request its group listed (or a `*`) and a resource entry that is the request's
 * resource, starts with it and a `/`, or holds a `*`; for a URL, any nonResourceURLs. Names,
 * subresources and scopes are ignored. Looser than `RuleAllows` on purpose: a request no
 * reachable rule touches can be allowed only if the server allowed something no rule it holds
 * mentions, and a sample of them is asked anyway.
 */
function touches(rule: Rule, req: AuthorizationRequest): boolean {
    if (!((rule.verbs ?? []).includes(req.verb) || wild(rule.verbs))) return false;
    if (isNonResourceRequest(req)) return (rule.nonResourceURLs ?? []).length > 0;
    return (
        ((rule.apiGroups ?? []).includes(req.group) || wild(rule.apiGroups)) &&
        (rule.resources ?? []).some((r) => r === req.resource || r.startsWith(`${req.resource}/`) || r.includes("*"))
    );
}

/** Whether a request names an object beyond the probe (a powerful role, user, group or service account by name). */
const byName = (req: AuthorizationRequest) => !isNonResourceRequest(req) && !!req.name && req.name !== PROBE.name;

/** Requests of the dangerous set not otherwise asked of a case that each case is asked anyway (rotating through the set). */
const UNTOUCHED_SAMPLE = 6;

/**
 * The requests of the dangerous set asked of case `i`: each one a reachable rule touches, except
 * that one naming an object (a powerful role, user, group or service account) is asked only when
 * a reachable rule lists that name (or a name with `*`) in its resourceNames, its twin for the
 * probe name being asked otherwise; and UNTOUCHED_SAMPLE of the rest, rotating with `i`.
 */
function dangerousAsked(dangerous: readonly AuthorizationRequest[], reachable: readonly Rule[], i: number): AuthorizationRequest[] {
    const listed = reachable.flatMap((r) => r.resourceNames ?? []);
    // A listed name with a `*` is taken as a prefix pattern (looser than the authorizer, which compares names exactly).
    const mayName = (name: string) => listed.some((l) => l === name || (l.includes("*") && name.startsWith(l.slice(0, l.indexOf("*")))));
    const asked: AuthorizationRequest[] = [];
    const rest: AuthorizationRequest[] = [];
    for (const req of dangerous) {
        const touched = reachable.some((rule) => touches(rule, req));
        const named = byName(req) && !mayName((req as { name: string }).name);
        (touched && !named ? asked : rest).push(req);
    }
    for (let k = 0; k < Math.min(UNTOUCHED_SAMPLE, rest.length); k++) {
        asked.push(rest[(i * UNTOUCHED_SAMPLE + k) % rest.length]);
    }
    return asked;
}

let runs = 0;

/** Applies `cases` together, lets the controller aggregate, asks the reviews and compares; deletes what it applied. */
async function check(cases: readonly GeneratedCase[]): Promise<Checked> {
    const run = `r${++runs}`;
    const started = Date.now();
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    const base = clusterObjects();
    const materialized = cases.map((c, i) => materialize(c, run, i));
    try {
        // Bindings may name roles that do not exist yet (RBAC does not check): one pass; the patches by a second manager after.
        await inParallel(
            materialized.flatMap((m) => m.objects),
            IN_FLIGHT,
            (o) => apply(o, "rbac-diff", false),
        );
        await inParallel(
            materialized.flatMap((m) => m.patches),
            IN_FLIGHT,
            (o) => apply(o, "rbac-diff-patch", true),
        );
        const applied = seconds();
        const declared = mergeObjects(base, ...materialized.map((m) => m.model));
        const authorizer = new RbacAuthorizer(declared);
        const { pending, emptied } = await aggregationSettled(authorizer, cases.length > 1 ? 180_000 : 30_000);
        // The same declared objects under the other history (aggregationSettled): the aggregators the
        // server emptied hold no rules. An answer the server gives under that history is no disagreement.
        const emptiedNames = new Set(emptied);
        const otherHistory =
            emptied.length > 0
                ? new RbacAuthorizer({
                      ...declared,
                      clusterRoles: declared.clusterRoles.map((r) => (emptiedNames.has(r.name) ? { ...r, rules: [] } : r)),
                  })
                : undefined;
        const settled = seconds();
        const dangerous = dangerousSet(base);
        const live = await liveRbac();
        const asks = materialized.flatMap((m, i) =>
            [
                ...new Map(
                    [...dangerousAsked(dangerous, reachableRules(live, m.user), i), ...ORDINARY, ...m.ruleRequests].map((r) => [
                        JSON.stringify(r),
                        r,
                    ]),
                ).values(),
            ].map((req) => ({ i, req })),
        );
        const askedOf = new Map<string, number>();
        asks.forEach(({ req }) => askedOf.set(JSON.stringify(req), (askedOf.get(JSON.stringify(req)) ?? 0) + 1));
        const leastAsked = Math.min(...dangerous.map((r) => askedOf.get(JSON.stringify(r)) ?? 0));
        process.stdout.write(
            `rbac differential: run ${run}: ${cases.length} cases applied in ${applied} s, aggregated by ${settled} s` +
                `${pending.length > 0 ? ` (not settled: ${pending.slice(0, 10).join(", ")})` : ""}; asking ${asks.length} SubjectAccessReviews\n`,
        );
        const { allowed: answers } = await askAccessReviews(
            client,
            asks.map(({ i, req }) => accessReviewSpec(materialized[i].user, req)),
            IN_FLIGHT,
        );
        const disagreements: Disagreement[][] = cases.map(() => []);
        let historyDependent = 0;
        asks.forEach(({ i, req }, k) => {
            const evaluator = authorizer.allows(materialized[i].user, req);
            if (evaluator === answers[k]) return;
            if (otherHistory?.allows(materialized[i].user, req) === answers[k]) historyDependent++;
            else disagreements[i].push({ request: req, server: answers[k], evaluator });
        });
        const summary =
            `run ${run}: ${cases.length} cases, ${materialized.reduce((n, m) => n + m.objects.length + m.patches.length, 0)} objects and patches applied in ${applied} s, ` +
            `aggregated by ${settled} s${pending.length > 0 ? ` (not settled: ${pending.slice(0, 10).join(", ")})` : ""}, ` +
            `${asks.length} SubjectAccessReviews answered by ${seconds()} s` +
            `${emptied.length > 0 ? ` (${emptied.length} aggregators emptied by the controller's history, ${historyDependent} answers decided by it)` : ""}; the dangerous set is ${dangerous.length} requests (probe name ${PROBE.name}), each asked of at least ${leastAsked} subjects`;
        return { disagreements, reviews: asks.length, summary, leastAsked };
    } finally {
        await deleteRun(run);
    }
}

beforeAll(async () => {
    client = await ApiClient.fromKubeconfig(realEnv("REAL_KUBECONFIG"), SOCKETS);
    kubectl(["apply", "--server-side", "--field-manager=rbac-diff", "-f", "-"], {
        input: JSON.stringify({
            apiVersion: "v1",
            kind: "List",
            items: NAMESPACES.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
        }),
    });
});

afterAll(() => {
    kubectl(["delete", "namespace", ...NAMESPACES, "--ignore-not-found", "--wait=false"]);
    kubectl([
        "delete",
        "clusterroles.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io",
        "-l",
        RUN_LABEL,
        "--ignore-not-found",
    ]);
    client?.destroy();
});

describe("the RBAC evaluator against the real authorizer", () => {
    test("GIVEN the real tier's API server WHEN its bootstrap RBAC policy is read THEN it is the checked-in Kubernetes well-known set", () => {
        const { source: _source, ...checkedIn } = kubernetesWellKnown as unknown as Record<string, unknown>;
        expect(normalize(rbacObjectsSelected(BOOTSTRAP_LABEL))).toEqual(checkedIn);
    });

    test("GIVEN the real tier's API server WHEN its discovery is read THEN every group the checked-in plurals table holds is served with exactly those kinds and plurals", () => {
        const checkedIn = (apiResources as unknown as { discovered: ReturnType<typeof discoveredResources> }).discovered;
        const groups = new Set(checkedIn.map((r) => r.group));
        // Other files of the suite install CRDs of their own on the same cluster: only the table's groups are compared.
        const live = discoveredResources((p) => JSON.parse(kubectl(["get", "--raw", p]))).filter((r) => groups.has(r.group));
        expect(checkedIn.length).toBeGreaterThan(0);
        expect(live).toEqual(checkedIn);
    });

    test(`GIVEN ${CASES} generated cases of roles, bindings, aggregation and patches applied to the real API server WHEN every request of the dangerous set and a sample of others is asked as a SubjectAccessReview THEN the evaluator answers each one as the API server does`, async () => {
        // The population: the values fc.assert generates from the one seed, applied and reviewed together (one cluster round trip).
        const population = fc.sample(caseArb, CASES);
        const batch = await check(population);
        const verdicts = new Map(population.map((c, i) => [JSON.stringify(c), batch.disagreements[i]]));
        let reviews = batch.reviews;
        let alone = 0;
        process.stdout.write(`rbac differential: ${batch.summary}\n`);
        // The same population through fc.assert: a case is judged by the batch's verdict; one the batch did not hold (a
        // shrunk case) is applied and reviewed alone. So a disagreement is shrunk, case by case, against the real server.
        try {
            await fc.assert(
                fc.asyncProperty(caseArb, async (c) => {
                    const key = JSON.stringify(c);
                    let found = verdicts.get(key);
                    if (found === undefined) {
                        const single = await check([c]);
                        reviews += single.reviews;
                        alone++;
                        found = single.disagreements[0];
                        verdicts.set(key, found);
                    }
                    expect(found).toEqual([]);
                }),
                { numRuns: CASES, interruptAfterTimeLimit: 300_000, markInterruptAsFailure: true },
            );
        } finally {
            const disagreements = batch.disagreements.reduce((n, d) => n + d.length, 0);
            process.stdout.write(
                `rbac differential: ${CASES} cases, ${reviews} SubjectAccessReviews, ${disagreements} disagreements` +
                    `${alone > 0 ? ` (${alone} cases reviewed alone while shrinking)` : ""}` +
                    `${client.transportRetries.length > 0 ? `; ${client.transportRetries.length} transport failures retried, first: ${client.transportRetries[0]}` : ""}\n`,
            );
        }
        // Every request of the dangerous set was asked of some subject in the run (the touched ones and the rotating sample).
        expect(batch.leastAsked).toBeGreaterThan(0);
    }, 900_000);
});
