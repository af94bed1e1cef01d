/**
 * RBAC walk-arounds by class (issue 36, point 1) and the correct RBAC that must pass (point 6),
 * through the whole k8s-rbac pack, its analyzer process as the CLI starts it. Each class is
 * generated (fast-check, from the one seed): the names a class narrows to come from what the
 * cluster's roles allow (a role that can escalate, an SCC role, the group bound to
 * cluster-admin), spelled in both RBAC APIs, as lists, patches and legacy kinds. What makes a case
 * a walk-around is written here from Kubernetes' rules (the file named in each test), not asked
 * of the evaluator; the evaluator's answers are held to the API server's by the
 * SubjectAccessReview differential, tests/real/rbac-authorizer.real.ts.
 */
import fc from "fast-check";
import { analyzeAll, EngineResource } from "../../scripts/policy/analyzer";
import { PACKS_START, sharedPacks } from "../helpers/policy-packs";
import { resource } from "./support";

// The packs start once per jest registry (tests/helpers/policy-packs.ts); on a loaded machine that takes minutes.
beforeAll(() => sharedPacks(), PACKS_START);

const RBAC = "kubernetes:rbac.authorization.k8s.io/v1";
const LEGACY = "kubernetes:authorization.openshift.io/v1";

/** `policy: violation` lines of the resources through the whole k8s-rbac pack (Analyze each, then AnalyzeStack). */
async function judged(resources: EngineResource[], config: Record<string, Record<string, unknown>> = {}): Promise<string[]> {
    const pack = (await sharedPacks())["k8s-rbac"];
    return (await analyzeAll(pack, resources, config)).diagnostics.map((d) => `${d.policyName}: ${d.violation}`);
}
const refused = async (...resources: EngineResource[]) => expect(await judged(resources)).not.toEqual([]);
const passes = async (...resources: EngineResource[]) => expect(await judged(resources)).toEqual([]);

const api = fc.constantFrom(RBAC, LEGACY);
const clusterRole = (type: string, name: string, { labels, ...body }: Record<string, unknown>) =>
    resource(`${type}:ClusterRole`, name, { metadata: { name, ...(labels ? { labels } : {}) }, ...body });
const role = (namespace: string, name: string, rules: unknown[]) =>
    resource(`${RBAC}:Role`, name, { metadata: { name, namespace }, rules });
const otherVerbs = fc.subarray(["get", "list", "watch"]);
/** Each case is an analyzer round trip: 30 runs (fast-check's default is 100) keep a class to seconds. */
const check = <T extends unknown[]>(property: fc.IAsyncProperty<T>) => fc.assert(property, { numRuns: 30 });

describe("RBAC walk-arounds, by class: each generated case is refused", () => {
    test("GIVEN bind narrowed by resourceNames to a ClusterRole that is itself powerful (it can escalate, or use the privileged SCC, or is cluster-admin, admin or edit) WHEN judged THEN refused (pkg/registry/rbac/escalation_check.go BindingAuthorized checks bind on the role's name)", async () => {
        await check(
            fc.asyncProperty(
                fc.constantFrom(
                    "system:controller:clusterrole-aggregation-controller",
                    "system:openshift:scc:privileged",
                    "cluster-admin",
                    "admin",
                    "edit",
                    "system:kube-controller-manager",
                ),
                fc.constantFrom("rbac.authorization.k8s.io", "authorization.openshift.io"),
                otherVerbs,
                api,
                (name, group, verbs, type) =>
                    refused(
                        clusterRole(type, "binder", {
                            rules: [{ apiGroups: [group], resources: ["clusterroles"], verbs: [...verbs, "bind"], resourceNames: [name] }],
                        }),
                    ),
            ),
        );
    });

    test("GIVEN impersonate narrowed to a powerful group or user (system:cluster-admins and system:admin are bound to cluster-admin on OpenShift, system:masters bypasses RBAC) or to a controller's service account WHEN judged THEN refused", async () => {
        const target = fc.constantFrom(
            { resources: ["groups"], names: ["system:cluster-admins"] },
            { resources: ["groups"], names: ["system:masters"] },
            { resources: ["users"], names: ["system:admin"] },
            { resources: ["users"], names: ["system:kube-controller-manager"] },
            { resources: ["serviceaccounts"], names: ["clusterrole-aggregation-controller"] },
        );
        await check(
            fc.asyncProperty(target, api, (t, type) =>
                refused(
                    clusterRole(type, "impersonator", {
                        rules: [{ apiGroups: [""], resources: t.resources, verbs: ["impersonate"], resourceNames: t.names }],
                    }),
                ),
            ),
        );
    });

    test('GIVEN list or watch on Secrets narrowed to resourceNames [""] WHEN judged THEN refused: a collection\'s name is "" (evaluation_helpers.go ResourceNameMatches), so it reads every Secret', async () => {
        await check(
            fc.asyncProperty(fc.subarray(["list", "watch"], { minLength: 1 }), fc.constantFrom([""], ["", "pull-secret"]), (verbs, names) =>
                refused(clusterRole(RBAC, "lister", { rules: [{ apiGroups: [""], resources: ["secrets"], verbs, resourceNames: names }] })),
            ),
        );
    });

    test("GIVEN nonResourceURLs that end in * as a prefix of every URL WHEN judged THEN refused (NonResourceURLMatches: a trailing * is a prefix)", async () => {
        await check(
            fc.asyncProperty(fc.constantFrom("/*", "*", "/**", "/c*"), fc.subarray(["get", "post", "*"], { minLength: 1 }), (url, verbs) =>
                refused(clusterRole(RBAC, "urls", { rules: [{ nonResourceURLs: [url], verbs }] })),
            ),
        );
    });

    test("GIVEN a ClusterRoleBindingPatch of cluster-admin adding a broad group without a roleRef, or a patch of a role the cluster binds to everyone adding a power WHEN judged THEN refused (server-side apply keeps the live roleRef; the role's holders are everyone)", async () => {
        await check(
            fc.asyncProperty(fc.constantFrom("system:authenticated", "system:unauthenticated", "system:serviceaccounts"), (group) =>
                refused(
                    resource(`${RBAC}:ClusterRoleBindingPatch`, "cluster-admin", {
                        metadata: { name: "cluster-admin" },
                        subjects: [{ kind: "Group", name: group }],
                    }),
                ),
            ),
        );
        await check(
            fc.asyncProperty(
                fc.constantFrom("system:basic-user", "system:discovery", "system:public-info-viewer"),
                fc.constantFrom(
                    { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
                    { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
                    { apiGroups: ["admissionregistration.k8s.io"], resources: ["validatingwebhookconfigurations"], verbs: ["patch"] },
                ),
                (name, rule) => refused(resource(`${RBAC}:ClusterRolePatch`, name, { metadata: { name }, rules: [rule] })),
            ),
        );
    });

    test("GIVEN legacy authorization.openshift.io bindings of cluster-admin to everyone, in each spelling openshift-apiserver converts (userNames, groupNames, SystemUser/SystemGroup subjects) WHEN judged THEN refused", async () => {
        const legacy = fc.constantFrom<Record<string, unknown>>(
            { groupNames: ["system:authenticated"] },
            { userNames: ["system:serviceaccount:ops:robot"], groupNames: [] },
            { subjects: [{ kind: "SystemGroup", name: "system:authenticated" }] },
            { subjects: [{ kind: "SystemUser", name: "system:anonymous" }] },
        );
        await check(
            fc.asyncProperty(legacy, fc.constantFrom("ClusterRoleBinding", "RoleBinding"), (body, kind) =>
                refused(
                    resource(`${LEGACY}:${kind}`, "legacy", {
                        metadata: { name: "legacy", ...(kind === "RoleBinding" ? { namespace: "team-a" } : {}) },
                        roleRef: { name: "cluster-admin" },
                        ...body,
                    }),
                ),
            ),
        );
    });

    test("GIVEN powers the set names beyond Secrets and escalation (ephemeral containers, admission webhook and policy writes, nodes/proxy, CSR approval for the kube-apiserver-client signer, use of a privileged SCC, CRD and APIService writes) WHEN judged THEN refused", async () => {
        const power = fc.constantFrom(
            [{ apiGroups: [""], resources: ["pods/ephemeralcontainers"], verbs: ["patch"] }],
            [{ apiGroups: ["admissionregistration.k8s.io"], resources: ["mutatingwebhookconfigurations"], verbs: ["update"] }],
            [{ apiGroups: ["admissionregistration.k8s.io"], resources: ["validatingadmissionpolicies"], verbs: ["create"] }],
            [{ apiGroups: [""], resources: ["nodes/proxy"], verbs: ["get"] }],
            [{ apiGroups: [""], resources: ["*/proxy"], verbs: ["create"] }],
            [
                { apiGroups: ["certificates.k8s.io"], resources: ["certificatesigningrequests/approval"], verbs: ["update"] },
                {
                    apiGroups: ["certificates.k8s.io"],
                    resources: ["signers"],
                    verbs: ["approve"],
                    resourceNames: ["kubernetes.io/kube-apiserver-client"],
                },
            ],
            [
                {
                    apiGroups: ["security.openshift.io"],
                    resources: ["securitycontextconstraints"],
                    verbs: ["use"],
                    resourceNames: ["privileged"],
                },
            ],
            [
                {
                    apiGroups: ["security.openshift.io"],
                    resources: ["securitycontextconstraints"],
                    verbs: ["use"],
                    resourceNames: ["hostnetwork-v2"],
                },
            ],
            [{ apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["patch"] }],
            [{ apiGroups: ["apiregistration.k8s.io"], resources: ["apiservices"], verbs: ["create"] }],
        );
        await check(fc.asyncProperty(power, api, (rules, type) => refused(clusterRole(type, "powers", { rules }))));
    });

    test("GIVEN a privileged SCC's use granted inside a Role's own namespace WHEN judged THEN refused: its pods run privileged on the node, whatever the namespace", async () => {
        await refused(
            role("team-a", "builder", [
                {
                    apiGroups: ["security.openshift.io"],
                    resources: ["securitycontextconstraints"],
                    verbs: ["use"],
                    resourceNames: ["privileged"],
                },
            ]),
        );
    });

    test("GIVEN namespaced powers in a Role of kube-system, whose service accounts are the controllers' WHEN judged THEN refused: reading their tokens or running as them is theirs", async () => {
        await check(
            fc.asyncProperty(
                fc.constantFrom(
                    { apiGroups: [""], resources: ["secrets"], verbs: ["list"] },
                    { apiGroups: [""], resources: ["serviceaccounts/token"], verbs: ["create"] },
                    { apiGroups: [""], resources: ["pods/exec"], verbs: ["create"] },
                ),
                (rule) => refused(role("kube-system", "reader", [rule])),
            ),
        );
    });

    test("GIVEN an aggregationRule with no rules of its own selecting roles the cluster holds (its bootstrap policy, OLM's generated roles, edit's inputs) WHEN judged THEN refused: it takes their rules", async () => {
        const selector = fc.constantFrom<Record<string, unknown>>(
            { matchLabels: { "kubernetes.io/bootstrapping": "rbac-defaults" } },
            { matchLabels: { "olm.owner.kind": "ClusterServiceVersion" } },
            { matchLabels: { "olm.owner": "any-operator.v1.0.0" } },
            { matchExpressions: [{ key: "olm.owner.namespace", operator: "Exists" }] },
            { matchLabels: { "rbac.authorization.k8s.io/aggregate-to-edit": "true" } },
            { matchLabels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" } },
            {},
        );
        await check(
            fc.asyncProperty(selector, api, (s, type) =>
                refused(clusterRole(type, "agg", { rules: [], aggregationRule: { clusterRoleSelectors: [s] } })),
            ),
        );
    });

    test("GIVEN a ClusterRole labelled into view with a power view does not hold WHEN judged THEN refused: every holder of view gains it", async () => {
        await refused(
            clusterRole(RBAC, "into-view", {
                labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" },
                rules: [{ apiGroups: [""], resources: ["pods/portforward"], verbs: ["create"] }],
            }),
        );
    });

    test("GIVEN a ClusterRoleList, a RoleBinding of the privileged SCC's role and a ClusterRoleBinding of admin to a user WHEN judged THEN each is refused", async () => {
        await refused(
            resource(`${RBAC}:ClusterRoleList`, "roles", {
                items: [{ metadata: { name: "hidden" }, rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["watch"] }] }],
            }),
        );
        await refused(
            resource(`${RBAC}:RoleBinding`, "scc", {
                metadata: { name: "scc", namespace: "team-a" },
                roleRef: { kind: "ClusterRole", name: "system:openshift:scc:privileged" },
                subjects: [{ kind: "ServiceAccount", name: "builder", namespace: "team-a" }],
            }),
        );
        await refused(
            resource(`${RBAC}:ClusterRoleBinding`, "alice", {
                metadata: { name: "alice" },
                roleRef: { kind: "ClusterRole", name: "admin" },
                subjects: [{ kind: "User", name: "alice" }],
            }),
        );
    });
});

describe("correct RBAC passes (no false positives)", () => {
    test("GIVEN a Role whose Secret reads, exec and token minting stay inside its own namespace WHEN judged THEN nothing is reported", async () => {
        await check(
            fc.asyncProperty(
                fc.constantFrom("team-a", "ops", "openshift-operators"),
                fc.subarray(["secrets", "pods/exec", "pods/portforward", "serviceaccounts/token", "configmaps"], { minLength: 1 }),
                (namespace, resources) =>
                    passes(role(namespace, "operator", [{ apiGroups: [""], resources, verbs: ["get", "list", "watch", "create"] }])),
            ),
        );
    });

    test("GIVEN bind or impersonate narrowed to roles and subjects that are not powerful, and get on named Secrets WHEN judged THEN nothing is reported", async () => {
        const narrow = fc.constantFrom(
            {
                apiGroups: ["rbac.authorization.k8s.io"],
                resources: ["clusterroles"],
                verbs: ["bind"],
                resourceNames: ["view", "widgets-viewer"],
            },
            { apiGroups: [""], resources: ["serviceaccounts"], verbs: ["impersonate"], resourceNames: ["builder"] },
            { apiGroups: [""], resources: ["users"], verbs: ["impersonate"], resourceNames: ["ci-bot"] },
            { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["pull-secret"] },
            { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: [""] },
            {
                apiGroups: ["security.openshift.io"],
                resources: ["securitycontextconstraints"],
                verbs: ["use"],
                resourceNames: ["restricted-v2"],
            },
        );
        await check(fc.asyncProperty(narrow, api, (rule, type) => passes(clusterRole(type, "narrow", { rules: [rule] }))));
    });

    test("GIVEN an aggregationRule selecting only labels of the stack's own narrow roles, and a role labelled into admin that grants only its own API WHEN judged THEN nothing is reported", async () => {
        await passes(
            clusterRole(RBAC, "team-aggregate", {
                rules: [],
                aggregationRule: { clusterRoleSelectors: [{ matchLabels: { "example.com/aggregate-to-team": "true" } }] },
            }),
            clusterRole(RBAC, "widgets-edit", {
                labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true", "example.com/aggregate-to-team": "true" },
                rules: [{ apiGroups: ["widgets.example.com"], resources: ["widgets"], verbs: ["*"] }],
            }),
        );
    });

    test("GIVEN a RoleBinding of admin or edit to a team in its namespace, and the serving-certificate bindings an operator install declares WHEN judged THEN nothing is reported", async () => {
        await passes(
            resource(`${RBAC}:RoleBinding`, "team-admin", {
                metadata: { name: "team-admin", namespace: "team-a" },
                roleRef: { kind: "ClusterRole", name: "admin" },
                subjects: [{ kind: "Group", name: "team-a-admins" }],
            }),
            resource(`${RBAC}:ClusterRoleBinding`, "auth-delegator", {
                metadata: { name: "auth-delegator" },
                roleRef: { kind: "ClusterRole", name: "system:auth-delegator" },
                subjects: [{ kind: "ServiceAccount", name: "operator", namespace: "ops" }],
            }),
            resource(`${RBAC}:RoleBinding`, "auth-reader", {
                metadata: { name: "auth-reader", namespace: "kube-system" },
                roleRef: { kind: "Role", name: "extension-apiserver-authentication-reader" },
                subjects: [{ kind: "ServiceAccount", name: "operator", namespace: "ops" }],
            }),
        );
    });

    test("GIVEN an operator's generated ClusterRole that reads Secrets WHEN its operator's exemption accepts read-secrets THEN it passes; a power the exemption does not list is still refused", async () => {
        const generated = (rules: unknown[]) =>
            clusterRole(RBAC, "cert-manager.v1-x", {
                labels: { "cluster-platform.io/operator": "cert-manager", "cluster-platform.io/generated-by": "csv.clusterPermissions" },
                rules,
            });
        const config = {
            "k8s-no-broad-grants": {
                operators: ["cert-manager"],
                operatorExemptions: [
                    { operator: "cert-manager", powers: ["read-secrets"], reason: "issues certificates into Secrets of every namespace" },
                ],
            },
        };
        expect(await judged([generated([{ apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] }])], config)).toEqual(
            [],
        );
        expect(
            (
                await judged(
                    [generated([{ apiGroups: [""], resources: ["secrets", "pods/exec"], verbs: ["get", "list", "create"] }])],
                    config,
                )
            ).map((l) => /\[([a-z-]+)\]/.exec(l)?.[1]),
        ).toEqual(["exec-pods"]);
    });
});
