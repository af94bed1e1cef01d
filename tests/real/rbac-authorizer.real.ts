/**
 * The RBAC evaluator (components/shared/rbac-power.ts) against the real API server, which is the
 * oracle (issue 36, point 2). A generated population of cases (fast-check, from the one seed;
 * at least 500 per run) is applied to the real tier's kube-apiserver: each case a subject of its
 * own (a user, a group member or a service account, some in system:authenticated) with
 * ClusterRoles, Roles, aggregationRules (over the case's roles and over the cluster's own:
 * `kubernetes.io/bootstrapping=rbac-defaults`, `aggregate-to-edit`), roles that join `view`,
 * ClusterRoleBindings and RoleBindings of its roles and of the cluster's, and server-side-apply
 * patches by a second field manager (rules replaced, subjects replaced). The real
 * kube-controller-manager's aggregation controller aggregates. Then every request of the
 * dangerous-request set (components/shared/rbac-dangerous.ts) at every scope, and a sample of
 * ordinary ones and of ones each generated rule names, is asked as a SubjectAccessReview for the
 * case's subject, and the evaluator must answer each one as the API server does. The evaluator's
 * input is what the test declared (patches merged by `patchedRole`/`patchedBinding`) over the
 * RBAC objects the cluster held before (read once); never what the server made of it.
 *
 * The checked-in Kubernetes well-known objects (components/shared/rbac-well-known.kubernetes.json)
 * are held to the cluster's bootstrap policy first, and the discovery part of the plurals table
 * (components/shared/api-resources.table.json) to the cluster's discovery.
 */
import * as http2 from "node:http2";
import { KubeConfig } from "@kubernetes/client-node";
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
                aggregated: fc.boolean(),
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

const config = new KubeConfig();
/** One HTTP/2 connection to the API server, every request a stream on it: tens of thousands of reviews in a minute or two. */
let session: http2.ClientHttp2Session;

async function request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
): Promise<{ status: number; json: KubeObject }> {
    const data = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
        const stream = session.request({
            ":method": method,
            ":path": path,
            accept: "application/json",
            ...(data ? { "content-type": contentType } : {}),
        });
        const chunks: Buffer[] = [];
        let status = 0;
        stream.on("response", (headers) => (status = Number(headers[":status"])));
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => resolve({ status, json: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") }));
        stream.on("error", reject);
        stream.end(data);
    });
}

/** Server-side apply of one object by `manager` (what `kubectl apply --server-side` sends), forced for the patches. */
async function apply(object: KubeObject, manager: string, force: boolean): Promise<void> {
    const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
    const plural = {
        ClusterRole: "clusterroles",
        Role: "roles",
        ClusterRoleBinding: "clusterrolebindings",
        RoleBinding: "rolebindings",
        ServiceAccount: "serviceaccounts",
    }[object.kind as string];
    const base = group === "" ? `/api/${version}` : `/apis/${group}/${version}`;
    const scope = object.metadata.namespace ? `/namespaces/${object.metadata.namespace}` : "";
    const { status, json } = await request(
        "PATCH",
        `${base}${scope}/${plural}/${encodeURIComponent(object.metadata.name)}?fieldManager=${manager}${force ? "&force=true" : ""}`,
        object,
        "application/apply-patch+yaml",
    );
    if (status !== 200 && status !== 201) {
        throw new Error(
            `server-side apply of ${object.kind} ${object.metadata.name} failed: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`,
        );
    }
}

/** What the API server answers a SubjectAccessReview of `user` for `req`. */
async function subjectAccessReview(user: UserInfo, req: AuthorizationRequest): Promise<boolean> {
    const spec = {
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
    const { status, json } = await request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec,
    });
    if (status !== 201) {
        throw new Error(`SubjectAccessReview failed: HTTP ${status}: ${JSON.stringify(json).slice(0, 300)}`);
    }
    return json.status?.allowed === true;
}

async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array(items.length);
    let next = 0;
    await Promise.all(
        Array.from({ length: limit }, async () => {
            for (let i = next++; i < items.length; i = next++) {
                out[i] = await work(items[i]);
            }
        }),
    );
    return out;
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

const sameRules = (a: readonly Rule[], b: readonly Rule[]) => {
    const key = (r: Rule) =>
        JSON.stringify(["apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"].map((k) => r[k as keyof PolicyRule] ?? []));
    const sa = new Set(a.map(key));
    const sb = new Set(b.map(key));
    return sa.size === sb.size && [...sa].every((k) => sb.has(k));
};

/** Waits until the aggregation controller has written what the model expects of every aggregated role (the verdict is the reviews', not this wait's). */
async function aggregationSettled(authorizer: RbacAuthorizer, deadlineMs: number): Promise<string[]> {
    const aggregated = authorizer.objects.clusterRoles.filter((r) => r.aggregationRule).map((r) => r.name);
    const deadline = Date.now() + deadlineMs;
    for (;;) {
        const live = new Map(
            (JSON.parse(kubectl(["get", "clusterroles.rbac.authorization.k8s.io", "-o", "json"])).items as KubeObject[]).map((o) => [
                o.metadata.name,
                (o.rules ?? []) as Rule[],
            ]),
        );
        const pending = aggregated.filter((name) => !sameRules(live.get(name) ?? [], authorizer.clusterRoleRules(name) ?? []));
        if (pending.length === 0 || Date.now() > deadline) return pending;
        await new Promise((resolve) => setTimeout(resolve, 500));
    }
}

let runs = 0;

beforeAll(async () => {
    config.loadFromFile(realEnv("REAL_KUBECONFIG"));
    const options: { ca?: unknown; cert?: unknown; key?: unknown } = {};
    await config.applyToHTTPSOptions(options as never);
    session = http2.connect(config.getCurrentCluster()?.server as string, {
        ca: options.ca as string,
        cert: options.cert as string,
        key: options.key as string,
    });
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
    session?.close();
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

    test(`GIVEN ${CASES} generated cases of roles, bindings, aggregation and patches applied to the real API server WHEN every dangerous request and a sample of others is asked as a SubjectAccessReview THEN the evaluator answers each one as the API server does`, async () => {
        await fc.assert(
            fc.asyncProperty(fc.array(caseArb, { minLength: CASES, maxLength: CASES }), async (cases) => {
                const run = `r${++runs}`;
                const started = Date.now();
                const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
                const base = clusterObjects();
                const materialized = cases.map((c, i) => materialize(c, run, i));
                try {
                    // Service accounts and roles before the bindings that name them; the patches by a second manager last.
                    const objects = materialized.flatMap((m) => m.objects);
                    for (const kinds of [
                        ["ServiceAccount", "ClusterRole", "Role"],
                        ["ClusterRoleBinding", "RoleBinding"],
                    ]) {
                        await inParallel(
                            objects.filter((o) => kinds.includes(o.kind)),
                            32,
                            (o) => apply(o, "rbac-diff", false),
                        );
                    }
                    await inParallel(
                        materialized.flatMap((m) => m.patches),
                        32,
                        (o) => apply(o, "rbac-diff-patch", true),
                    );
                    const applied = seconds();
                    const authorizer = new RbacAuthorizer(mergeObjects(base, ...materialized.map((m) => m.model)));
                    const pending = await aggregationSettled(authorizer, 120_000);
                    const settled = seconds();
                    // The powerful names of the set are the cluster's own (as the pack's are the well-known objects'), not the cases'.
                    const powerful = powerfulIdentities(new RbacAuthorizer(base));
                    const scopes = [{}, ...NAMESPACES.map((namespace) => ({ namespace }))];
                    const dangerous = [
                        ...new Map(
                            scopes
                                .flatMap((scope) => [...dangerousRequests(scope, powerful), ...dangerousRequests(scope, NO_POWERFUL)])
                                .flatMap((d) => [d.request, ...(d.with ?? [])])
                                .map((r) => [JSON.stringify(r), r]),
                        ).values(),
                    ];
                    const asks = materialized.flatMap((m, i) =>
                        [...new Map([...dangerous, ...ORDINARY, ...m.ruleRequests].map((r) => [JSON.stringify(r), r])).values()].map(
                            (req) => ({ i, req }),
                        ),
                    );
                    process.stdout.write(
                        `rbac differential: run ${run}: applied in ${applied} s, aggregated by ${settled} s; asking ${asks.length} SubjectAccessReviews\n`,
                    );
                    const answers = await inParallel(asks, 64, ({ i, req }) => subjectAccessReview(materialized[i].user, req));
                    const disagreements = asks
                        .map((ask, k) => ({ ...ask, server: answers[k], evaluator: authorizer.allows(materialized[ask.i].user, ask.req) }))
                        .filter((a) => a.server !== a.evaluator)
                        .map((a) => ({
                            case: a.i,
                            user: materialized[a.i].user,
                            request: a.req,
                            server: a.server,
                            evaluator: a.evaluator,
                        }));
                    process.stdout.write(
                        `rbac differential: run ${run} (applied in ${applied} s, aggregated by ${settled} s, reviewed by ${seconds()} s), ${cases.length} cases, ${materialized.reduce((n, m) => n + m.objects.length + m.patches.length, 0)} objects and patches, ${asks.length} SubjectAccessReviews (${dangerous.length} dangerous requests per subject, probe name ${PROBE.name}), ${disagreements.length} disagreements${pending.length > 0 ? `; aggregation not settled for ${pending.join(", ")}` : ""}\n`,
                    );
                    expect(disagreements.slice(0, 20)).toEqual([]);
                } finally {
                    kubectl([
                        "delete",
                        "clusterroles.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,serviceaccounts",
                        "-A",
                        "-l",
                        `${RUN_LABEL}=${run}`,
                        "--ignore-not-found",
                        "--wait=false",
                    ]);
                }
            }),
            // One population per run; on a failure, shrinking re-applies simpler cases until 25 minutes have passed in all.
            { numRuns: 1, interruptAfterTimeLimit: 1_500_000, markInterruptAsFailure: true },
        );
    }, 1_800_000);
});
