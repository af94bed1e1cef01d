/**
 * The dangerous-request set: the requests no role should allow beyond its own namespace, each
 * power with the upstream source that names it, and what the known objects make powerful by name
 * (a role, user, group or service account is powerful when what it holds allows a request of the
 * set: derived, never listed). A role is judged by asking the evaluator (rbac-power.ts) whether its
 * rules allow any request of the set at the role's scope. Pure: no Pulumi imports.
 *
 * Sources: the Kubernetes RBAC good practices, "Kubernetes RBAC - privilege escalation risks"
 * (kubernetes.io/docs/concepts/security/rbac-good-practices/, cited by section below); OpenShift's
 * "Managing security context constraints" (docs.openshift.com, authentication/managing-security-context-constraints.html)
 * and the SCCs of openshift/cluster-kube-apiserver-operator bindata/bootkube/scc-manifests/;
 * kubernetes source files where named.
 *
 * Scope: a namespaced power (Secrets, exec, tokens) is dangerous when it reaches beyond the
 * role's own namespace (every namespace, or another one), or inside a namespace whose service
 * accounts are themselves powerful (kube-system's controllers: reading their tokens or running
 * as them is theirs). A Role's power stays in its namespace: it is judged there.
 */
import { RbacAuthorizer, RBAC_GROUPS } from "./rbac-power";
import { AuthorizationRequest, firstAllowing, isNonResourceRequest, PolicyRule, ResourceRequest } from "./rbac";

/** Names no object carries: a request for one is allowed only by a rule that does not narrow by name (or by namespace, group, resource, verb, URL). */
export const PROBE = {
    name: "cluster-platform-probe",
    namespace: "cluster-platform-probe",
    group: "probe.cluster-platform.io",
    resource: "cluster-platform-probes",
    verb: "cluster-platform-probe",
    path: "/cluster-platform-probe",
} as const;

const GOOD_PRACTICES = "kubernetes.io/docs/concepts/security/rbac-good-practices/";

export const DANGEROUS_POWERS = {
    everything: {
        title: 'every verb on every resource of every API group ("*")',
        source: `${GOOD_PRACTICES}#least-privilege ("Avoid providing wildcard permissions when possible, especially to all resources")`,
        overRbac: true,
    },
    escalate: {
        title: "escalate: write roles that grant what the writer does not hold",
        source: `${GOOD_PRACTICES}#escalate-verb; kubernetes pkg/registry/rbac/escalation_check.go EscalationAllowed`,
        overRbac: true,
    },
    bind: {
        title: "bind: bind roles more powerful than the binder (any role, or a named powerful one)",
        source: `${GOOD_PRACTICES}#bind-verb; kubernetes pkg/registry/rbac/escalation_check.go BindingAuthorized`,
        overRbac: true,
    },
    impersonate: {
        title: "impersonate: act as any user, group or service account, or as a named powerful one",
        source: `${GOOD_PRACTICES}#impersonate-verb; kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`,
        overRbac: true,
    },
    "read-secrets": {
        title: "read Secrets (get, list or watch)",
        source: `${GOOD_PRACTICES}#listing-secrets`,
        overRbac: false,
    },
    "exec-pods": {
        title: "run commands in pods (pods/exec, pods/attach, pods/portforward, pods/ephemeralcontainers)",
        source: `${GOOD_PRACTICES}#workload-creation; kubernetes pkg/registry/core/pod/rest/subresources.go (exec, attach, portforward), pkg/registry/core/pod/storage/storage.go (EphemeralContainersREST)`,
        overRbac: false,
    },
    "node-proxy": {
        title: "the kubelet API of every node (nodes/proxy: exec into any pod on it)",
        source: `${GOOD_PRACTICES}#access-to-proxy-subresource-of-nodes`,
        overRbac: false,
    },
    "mint-tokens": {
        title: "mint service account tokens (create serviceaccounts/token)",
        source: `${GOOD_PRACTICES}#token-request`,
        overRbac: false,
    },
    "admission-writes": {
        title: "write admission webhook configurations and admission policies (intercept or rewrite any object written)",
        source: `${GOOD_PRACTICES}#control-admission-webhooks`,
        overRbac: false,
    },
    "crd-writes": {
        title: "write CustomResourceDefinitions (change any custom API's schema, or send its objects to a conversion webhook of the writer's choosing)",
        source: "kubernetes staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/conversion/webhook_converter.go (every stored object of the kind goes to the CRD's conversion webhook)",
        overRbac: false,
    },
    "apiservice-writes": {
        title: "write APIServices (route an API group, with each caller's identity, to a service of the writer's choosing)",
        source: "kubernetes staging/src/k8s.io/kube-aggregator/pkg/apiserver/handler_proxy.go (proxies with the front-proxy client certificate and X-Remote-User/X-Remote-Group)",
        overRbac: false,
    },
    "csr-approval": {
        title: "approve client certificates for any user, system:masters included (certificatesigningrequests/approval and approve on the kube-apiserver-client signer)",
        source: `${GOOD_PRACTICES}#csrs-and-certificate-issuing; kubernetes plugin/pkg/admission/certificates/approval/admission.go`,
        overRbac: false,
    },
    "privileged-scc": {
        title: "use a privileged SecurityContextConstraints (root, host access or privileged containers: a node)",
        source: "docs.openshift.com authentication/managing-security-context-constraints.html; openshift/cluster-kube-apiserver-operator bindata/bootkube/scc-manifests/ (each SCC's fields)",
        overRbac: false,
    },
    "non-resource-urls": {
        title: 'every non-resource URL ("*" or "/*": logs, debug and metrics endpoints of the API server)',
        source: "kubernetes pkg/apis/rbac/v1/evaluation_helpers.go NonResourceURLMatches (a trailing * is a prefix)",
        overRbac: false,
    },
} as const;

export type PowerId = keyof typeof DANGEROUS_POWERS;
export const POWER_IDS = Object.keys(DANGEROUS_POWERS) as PowerId[];

/** One request of the set: the power it shows, and whether it is a namespaced power (dangerous beyond the role's namespace only). */
export interface DangerousRequest {
    power: PowerId;
    request: AuthorizationRequest;
    /** Requests that must be allowed as well for the power to be held (CSR approval needs two). */
    with?: AuthorizationRequest[];
    confined: boolean;
}

/** What the known objects make powerful by name: derived from what each allows (`powerfulIdentities`). */
export interface PowerfulIdentities {
    clusterRoles: ReadonlySet<string>;
    users: ReadonlySet<string>;
    groups: ReadonlySet<string>;
    /** `namespace/name`. */
    serviceAccounts: ReadonlySet<string>;
    /** Namespaces holding a powerful service account: a namespaced power there reaches it. */
    namespaces: ReadonlySet<string>;
    /** SecurityContextConstraints that admit what restricted-v2 refuses. */
    privilegedSccs: ReadonlySet<string>;
}

export const NO_POWERFUL: PowerfulIdentities = {
    clusterRoles: new Set(),
    users: new Set(),
    groups: new Set(),
    serviceAccounts: new Set(),
    namespaces: new Set(),
    privilegedSccs: new Set(),
};

/** The scope a role's power is judged at: a Role's namespace, or none (a ClusterRole: every namespace and the cluster). */
export interface Scope {
    namespace?: string;
    /** The role is held by everyone (a broad group): a namespaced power counts inside its namespace too. */
    everyone?: boolean;
}

const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"] as const;

function resource(verb: string, group: string, res: string, namespace: string, name = "", subresource?: string): ResourceRequest {
    return { verb, group, resource: res, namespace, name, ...(subresource ? { subresource } : {}) };
}

/** Requests that write every object of a cluster-scoped resource (create has no name; the others name one). */
function writes(power: PowerId, group: string, resources: readonly string[]): DangerousRequest[] {
    return resources.flatMap((res) =>
        WRITE_VERBS.map((verb) => ({
            power,
            request: resource(verb, group, res, "", verb === "create" || verb === "deletecollection" ? "" : PROBE.name),
            confined: false,
        })),
    );
}

/**
 * The dangerous requests to ask at `scope`. Namespaced requests are asked in every namespace
 * ("") and in another one for a ClusterRole, in its own namespace for a Role; cluster-scoped
 * ones only where a role can reach them (a ClusterRole).
 */
export function dangerousRequests(scope: Scope, powerful: PowerfulIdentities): DangerousRequest[] {
    // Asked for every role judged: built once per scope while the powerful names stay the same.
    const size =
        powerful.clusterRoles.size +
        powerful.users.size +
        powerful.groups.size +
        powerful.serviceAccounts.size +
        powerful.privilegedSccs.size;
    let cache = requestCache.get(powerful);
    if (!cache || cache.size !== size) {
        cache = { size, byScope: new Map() };
        requestCache.set(powerful, cache);
    }
    const key = scope.namespace ?? "\u0000";
    let requests = cache.byScope.get(key);
    if (!requests) {
        requests = buildRequests(scope, powerful);
        cache.byScope.set(key, requests);
    }
    return requests;
}

const requestCache = new WeakMap<PowerfulIdentities, { size: number; byScope: Map<string, DangerousRequest[]> }>();

function buildRequests(scope: Scope, powerful: PowerfulIdentities): DangerousRequest[] {
    const cluster = scope.namespace === undefined;
    const namespaces = cluster ? ["", PROBE.namespace] : [scope.namespace as string];
    const out: DangerousRequest[] = [];
    const namespaced = (power: PowerId, make: (namespace: string) => ResourceRequest[], confined = true) => {
        for (const namespace of namespaces) {
            out.push(...make(namespace).map((request) => ({ power, request, confined })));
        }
    };
    if (cluster) {
        out.push({ power: "everything", request: resource(PROBE.verb, PROBE.group, PROBE.resource, "", PROBE.name), confined: false });
    }
    for (const group of RBAC_GROUPS) {
        if (cluster) {
            out.push({ power: "escalate", request: resource("escalate", group, "clusterroles", "", PROBE.name), confined: false });
        }
        namespaced("escalate", (ns) => [resource("escalate", group, "roles", ns, PROBE.name)]);
    }
    for (const group of RBAC_GROUPS) {
        // A ClusterRoleBinding is authorized at namespace "" (every namespace), a RoleBinding in its own (escalation_check.go BindingAuthorized).
        for (const name of [PROBE.name, ...powerful.clusterRoles]) {
            if (cluster) {
                out.push({ power: "bind", request: resource("bind", group, "clusterroles", "", name), confined: false });
            }
            namespaced("bind", (ns) => (ns === "" ? [] : [resource("bind", group, "clusterroles", ns, name)]));
        }
        namespaced("bind", (ns) => [resource("bind", group, "roles", ns, PROBE.name)]);
    }
    if (cluster) {
        for (const name of [PROBE.name, ...powerful.users]) {
            out.push({ power: "impersonate", request: resource("impersonate", "", "users", "", name), confined: false });
        }
        for (const name of [PROBE.name, ...powerful.groups]) {
            out.push({ power: "impersonate", request: resource("impersonate", "", "groups", "", name), confined: false });
        }
    }
    namespaced("impersonate", (ns) => [resource("impersonate", "", "serviceaccounts", ns, PROBE.name)]);
    namespaced("read-secrets", (ns) => [
        resource("get", "", "secrets", ns, PROBE.name),
        resource("list", "", "secrets", ns),
        resource("watch", "", "secrets", ns),
    ]);
    namespaced("exec-pods", (ns) => [
        ...["exec", "attach", "portforward"].map((sub) => resource("create", "", "pods", ns, PROBE.name, sub)),
        ...["update", "patch"].map((verb) => resource(verb, "", "pods", ns, PROBE.name, "ephemeralcontainers")),
    ]);
    namespaced("mint-tokens", (ns) => [resource("create", "", "serviceaccounts", ns, PROBE.name, "token")]);
    for (const sa of powerful.serviceAccounts) {
        const [ns, name] = sa.split("/");
        if (cluster || scope.namespace === ns) {
            for (const inNs of cluster ? ["", ns] : [ns]) {
                out.push({ power: "impersonate", request: resource("impersonate", "", "serviceaccounts", inNs, name), confined: false });
                out.push({
                    power: "mint-tokens",
                    request: resource("create", "", "serviceaccounts", inNs, name, "token"),
                    confined: false,
                });
            }
        }
    }
    if (cluster) {
        out.push(
            ...["get", "create"].map((verb) => ({
                power: "node-proxy" as const,
                request: resource(verb, "", "nodes", "", PROBE.name, "proxy"),
                confined: false,
            })),
            ...writes("admission-writes", "admissionregistration.k8s.io", [
                "mutatingwebhookconfigurations",
                "validatingwebhookconfigurations",
                "mutatingadmissionpolicies",
                "mutatingadmissionpolicybindings",
                "validatingadmissionpolicies",
                "validatingadmissionpolicybindings",
            ]),
            ...writes("crd-writes", "apiextensions.k8s.io", ["customresourcedefinitions"]),
            ...writes("apiservice-writes", "apiregistration.k8s.io", ["apiservices"]),
        );
        // The approval admission plugin asks for `approve` on the signer by name, then on `<domain>/*` (approval/admission.go).
        for (const signer of ["kubernetes.io/kube-apiserver-client", "kubernetes.io/*"]) {
            out.push({
                power: "csr-approval",
                request: resource("update", "certificates.k8s.io", "certificatesigningrequests", "", PROBE.name, "approval"),
                with: [resource("approve", "certificates.k8s.io", "signers", "", signer)],
                confined: false,
            });
        }
        // Non-resource requests carry the HTTP method as their verb (k8s.io/apiserver pkg/endpoints/request/requestinfo.go).
        for (const verb of ["get", "post", "put", "patch", "delete"]) {
            out.push({ power: "non-resource-urls", request: { verb, path: PROBE.path }, confined: false });
        }
    }
    // SCC admission asks for `use` in the pod's namespace and cluster-wide; either lets its pods run with the SCC.
    namespaced(
        "privileged-scc",
        (ns) =>
            [PROBE.name, ...powerful.privilegedSccs].map((name) =>
                resource("use", "security.openshift.io", "securitycontextconstraints", ns, name),
            ),
        false,
    );
    return out;
}

/** Whether a request of the set counts at `scope` (a namespaced power inside a Role's own, unpowerful namespace does not). */
function counts(entry: DangerousRequest, scope: Scope, powerful: PowerfulIdentities): boolean {
    if (!entry.confined || scope.namespace === undefined || scope.everyone || isNonResourceRequest(entry.request)) {
        return true;
    }
    return entry.request.namespace !== scope.namespace || powerful.namespaces.has(scope.namespace);
}

/** One power a rule set holds, with the first request of the set that shows it and the index of the rule that allows it. */
export interface PowerFinding {
    power: PowerId;
    request: AuthorizationRequest;
    /** Index (in the rules given) of a rule that allows the request. */
    rule: number;
}

/** The powers `rules` hold at `scope`, one finding per power, in DANGEROUS_POWERS order. */
export function powersOf(rules: readonly Partial<PolicyRule>[], scope: Scope, powerful: PowerfulIdentities): PowerFinding[] {
    return powersOfRequests(rules, scope, powerful, dangerousRequests(scope, powerful));
}

function powersOfRequests(
    rules: readonly Partial<PolicyRule>[],
    scope: Scope,
    powerful: PowerfulIdentities,
    requests: readonly DangerousRequest[],
): PowerFinding[] {
    const found = new Map<PowerId, PowerFinding>();
    const allowedBy = firstAllowing(rules);
    for (const entry of requests) {
        if (found.has(entry.power) || !counts(entry, scope, powerful)) {
            continue;
        }
        const index = allowedBy(entry.request);
        if (index >= 0 && (entry.with ?? []).every((other) => allowedBy(other) >= 0)) {
            found.set(entry.power, { power: entry.power, request: entry.request, rule: index });
        }
    }
    return POWER_IDS.flatMap((p) => (found.has(p) ? [found.get(p) as PowerFinding] : []));
}

/**
 * The powers `after` holds at `scope` that are not in `held`, where `after` is a rule set that held
 * exactly `held` before `added` joined it (an aggregated role taking a new role's rules): the
 * same findings as `powersOf(after)` minus `held`, asked of the added rules alone where one
 * request shows a power, since a request the old rules allowed would have put its power in
 * `held`. A power shown by several requests together (CSR approval) is asked of all of `after`.
 */
export function gainedPowers(
    held: ReadonlySet<PowerId>,
    added: readonly Partial<PolicyRule>[],
    after: readonly Partial<PolicyRule>[],
    scope: Scope,
    powerful: PowerfulIdentities,
): PowerFinding[] {
    const found = new Map<PowerId, PowerFinding>();
    if (added.length === 0) {
        return [];
    }
    // The whole set is asked only for a power found, or one shown by several requests together.
    let inAfter: ((request: AuthorizationRequest) => number) | undefined;
    const allowedByAfter = (request: AuthorizationRequest) => (inAfter ??= firstAllowing(after))(request);
    const allowedByAdded = firstAllowing(added);
    for (const entry of dangerousRequests(scope, powerful)) {
        if (held.has(entry.power) || found.has(entry.power) || !counts(entry, scope, powerful)) {
            continue;
        }
        if (entry.with !== undefined) {
            const index = allowedByAfter(entry.request);
            if (index >= 0 && entry.with.every((other) => allowedByAfter(other) >= 0)) {
                found.set(entry.power, { power: entry.power, request: entry.request, rule: index });
            }
            continue;
        }
        if (allowedByAdded(entry.request) >= 0) {
            found.set(entry.power, { power: entry.power, request: entry.request, rule: allowedByAfter(entry.request) });
        }
    }
    return POWER_IDS.flatMap((p) => (found.has(p) ? [found.get(p) as PowerFinding] : []));
}

/** `create pods/exec in namespace "ns" (group "")`, `get /healthz`: a request as messages show it. */
export function describeRequest(request: AuthorizationRequest): string {
    if (isNonResourceRequest(request)) {
        return `${request.verb} ${request.path}`;
    }
    const what = request.subresource ? `${request.resource}/${request.subresource}` : request.resource;
    const name = request.name === PROBE.name ? " (any name)" : request.name ? ` named ${JSON.stringify(request.name)}` : "";
    const where =
        request.namespace === undefined || request.namespace === ""
            ? " in every namespace or cluster-wide"
            : request.namespace === PROBE.namespace
              ? " in any namespace"
              : ` in namespace ${JSON.stringify(request.namespace)}`;
    const verb = request.verb === PROBE.verb ? "any verb" : request.verb;
    const group = request.group === PROBE.group ? "any API group" : `group ${JSON.stringify(request.group)}`;
    const resourceText = request.resource === PROBE.resource ? "any resource" : what;
    return `${verb} ${resourceText}${name} (${group})${where}`;
}

// ---------------------------------------------------------------- powerful by name, derived

/**
 * What the objects make powerful: ClusterRoles whose rules (aggregated) allow a request of the
 * set cluster-wide; the users, groups and service accounts such a role is bound to (a
 * RoleBinding counts when the role's power inside that namespace escapes it); the namespaces of
 * powerful service accounts; the privileged SCCs given. A fixed point: binding a powerful role
 * or impersonating a powerful user is itself a power of the set.
 */
export function powerfulIdentities(authorizer: RbacAuthorizer, privilegedSccs: readonly string[] = []): PowerfulIdentities {
    const powerful = {
        clusterRoles: new Set<string>(),
        users: new Set<string>(),
        groups: new Set<string>(["system:masters"]),
        serviceAccounts: new Set<string>(),
        namespaces: new Set<string>(),
        privilegedSccs: new Set(privilegedSccs),
    };
    // Requests of the set that name no powerful identity are asked once; those that do are asked
    // again, of what is not yet powerful, as the powerful names grow.
    const none: PowerfulIdentities = { ...NO_POWERFUL, privilegedSccs: powerful.privilegedSccs, namespaces: powerful.namespaces };
    const holds = (rules: readonly Partial<PolicyRule>[], scope: Scope, byName: boolean) =>
        byName
            ? powersOfRequests(rules, scope, powerful, namedRequests(scope, powerful)).length > 0
            : powersOf(rules, scope, none).length > 0;
    const roles = authorizer.objects.clusterRoles
        .filter((role) => role.openLabels === undefined)
        .map((role) => ({ role, rules: authorizer.clusterRoleRules(role.name) ?? [] }));
    const bindings = authorizer.objects.bindings.map((binding) => ({
        binding,
        rules: authorizer.roleRefRules(binding.roleRef, binding.namespace) ?? [],
        scope: (binding.kind === "ClusterRoleBinding" ? {} : { namespace: binding.namespace }) as Scope,
        powerful: false,
        // Namespaced requests inside the binding's namespace count once that namespace is powerful: asked again then.
        namespaceWasPowerful: false,
    }));
    const size = () =>
        powerful.clusterRoles.size + powerful.users.size + powerful.groups.size + powerful.serviceAccounts.size + powerful.namespaces.size;
    for (let round = 0, before = -1; before !== size(); round++) {
        before = size();
        const byName = round > 0;
        for (const { role, rules } of roles) {
            if (!powerful.clusterRoles.has(role.name) && holds(rules, {}, byName)) {
                powerful.clusterRoles.add(role.name);
            }
        }
        for (const entry of bindings) {
            if (entry.powerful) continue;
            const namespaceNowPowerful = entry.scope.namespace !== undefined && powerful.namespaces.has(entry.scope.namespace);
            const askStatic = !byName || (namespaceNowPowerful && !entry.namespaceWasPowerful);
            entry.namespaceWasPowerful = namespaceNowPowerful;
            if (!((askStatic && holds(entry.rules, entry.scope, false)) || (byName && holds(entry.rules, entry.scope, true)))) {
                continue;
            }
            entry.powerful = true;
            for (const subject of entry.binding.subjects) {
                if (subject.kind === "User") {
                    powerful.users.add(subject.name ?? "");
                } else if (subject.kind === "Group") {
                    powerful.groups.add(subject.name ?? "");
                } else if (subject.kind === "ServiceAccount") {
                    const namespace = subject.namespace || entry.binding.namespace;
                    if (namespace) {
                        powerful.serviceAccounts.add(`${namespace}/${subject.name}`);
                        powerful.namespaces.add(namespace);
                    }
                }
            }
        }
    }
    return powerful;
}

/** The requests of the set that name a powerful identity (bind a powerful role, impersonate or mint a token for a powerful subject). */
function namedRequests(scope: Scope, powerful: PowerfulIdentities): DangerousRequest[] {
    const size = powerful.clusterRoles.size + powerful.users.size + powerful.groups.size + powerful.serviceAccounts.size;
    const key = `${scope.namespace ?? ""}|${size}`;
    const hit = namedCache.get(powerful)?.get(key);
    if (hit) return hit;
    const named = new Set<string>([
        ...powerful.clusterRoles,
        ...powerful.users,
        ...powerful.groups,
        ...[...powerful.serviceAccounts].map((sa) => sa.split("/")[1]),
    ]);
    const requests = dangerousRequests(scope, powerful).filter(
        (entry) =>
            !isNonResourceRequest(entry.request) &&
            named.has(entry.request.name ?? "") &&
            ["bind", "impersonate", "mint-tokens"].includes(entry.power),
    );
    const map = namedCache.get(powerful) ?? new Map<string, DangerousRequest[]>();
    map.set(key, requests);
    namedCache.set(powerful, map);
    return requests;
}

const namedCache = new WeakMap<PowerfulIdentities, Map<string, DangerousRequest[]>>();
