/**
 * The evaluator's pieces the real API server cannot show here: OpenShift's legacy kinds (no
 * openshift-apiserver runs in the real tier), OLM's generated roles as a family, and what the
 * well-known objects make powerful. Each expectation is read from the upstream file the test
 * names. What the real API server decides (rule matching, which bindings apply, aggregation,
 * server-side-apply patches) is held to its SubjectAccessReview answers by the differential,
 * tests/real/rbac-authorizer.real.ts.
 */
import fc from "fast-check";
import { normalizeLegacyBinding, normalizeLegacyRules } from "../../components/shared/rbac-openshift";
import {
    mergeObjects,
    patchedBinding,
    patchedRole,
    RbacAuthorizer,
    rulesNotIn,
    selectorSelectsRole,
} from "../../components/shared/rbac-power";
import { OLM_GENERATED_ROLES, PRIVILEGED_SCCS, wellKnown } from "../../components/shared/rbac-well-known";
import { gainedPowers, powersOf } from "../../components/shared/rbac-dangerous";

describe("OpenShift's legacy RBAC kinds as openshift-apiserver stores them (pkg/authorization/apis/authorization)", () => {
    test("GIVEN legacy rules WHEN normalised THEN the old allow-all means every group, resources without groups mean the core group, attributeRestrictions drop the rule and a mixed rule splits in two (v1/defaults.go, rbacconversion/conversion.go)", () => {
        expect(
            normalizeLegacyRules([
                { verbs: ["*"], resources: ["*"] },
                { verbs: ["get"], resources: ["secrets"] },
                { verbs: ["get"], resources: ["pods"], attributeRestrictions: { kind: "IsPersonalSubjectAccessReview" } },
                { verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"], nonResourceURLs: ["/healthz"] },
                { verbs: ["get"], nonResourceURLs: ["/version"] },
            ]),
        ).toEqual([
            { verbs: ["*"], apiGroups: ["*"], resources: ["*"], resourceNames: [], nonResourceURLs: [] },
            { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: [], nonResourceURLs: [] },
            { verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"], resourceNames: [] },
            { verbs: ["get"], nonResourceURLs: ["/healthz"] },
            { verbs: ["get"], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ["/version"] },
        ]);
    });

    test("GIVEN legacy bindings WHEN normalised THEN userNames/groupNames rebuild the subjects (a service account's user name becomes the ServiceAccount), System kinds become User and Group, and a roleRef's namespace picks Role over ClusterRole (v1/conversion.go, helpers.go BuildSubjects)", () => {
        expect(
            normalizeLegacyBinding(
                {
                    roleRef: { name: "admin" },
                    userNames: ["alice", "system:serviceaccount:ops:robot"],
                    groupNames: ["devs"],
                    subjects: [{ kind: "User", name: "ignored" }],
                },
                "team-a",
            ),
        ).toEqual({
            ok: true,
            roleRef: { kind: "ClusterRole", name: "admin" },
            subjects: [
                { kind: "User", name: "alice" },
                { kind: "ServiceAccount", namespace: "ops", name: "robot" },
                { kind: "Group", name: "devs" },
            ],
        });
        expect(
            normalizeLegacyBinding(
                {
                    roleRef: { name: "r", namespace: "team-a" },
                    subjects: [
                        { kind: "SystemGroup", name: "system:authenticated" },
                        { kind: "SystemUser", name: "system:admin" },
                    ],
                },
                "team-a",
            ),
        ).toEqual({
            ok: true,
            roleRef: { kind: "Role", name: "r" },
            subjects: [
                { kind: "Group", name: "system:authenticated" },
                { kind: "User", name: "system:admin" },
            ],
        });
    });

    test("GIVEN legacy bindings openshift-apiserver refuses WHEN normalised THEN the reason is given (conversion.go)", () => {
        expect(normalizeLegacyBinding({ roleRef: { name: "r", namespace: "x" } }, undefined)).toEqual({
            ok: false,
            reason: 'roleRef names namespace "x": a ClusterRoleBinding may only reference a ClusterRole',
        });
        expect(normalizeLegacyBinding({ roleRef: { name: "r", namespace: "x" } }, "team-a")).toEqual({
            ok: false,
            reason: 'roleRef names namespace "x", not the binding\'s "team-a"',
        });
        expect(normalizeLegacyBinding({ roleRef: { name: "r" }, subjects: [{ kind: "Node", name: "n" }] }, "team-a")).toEqual({
            ok: false,
            reason: 'subject kind "Node" is not one openshift-apiserver converts',
        });
    });
});

describe("what the well-known objects make powerful, derived from what they allow", () => {
    const { powerful } = wellKnown();

    test("GIVEN Kubernetes' and OpenShift's bootstrap policies WHEN powerful names are derived THEN roles that can escalate, bind, read Secrets or use a privileged SCC are, and the subjects bound to them", () => {
        // bootstrappolicy controller_policy.go: the aggregation controller escalates clusterroles; the scc manifests: use on privileged.
        expect(
            [
                "cluster-admin",
                "admin",
                "edit",
                "system:controller:clusterrole-aggregation-controller",
                "system:openshift:scc:privileged",
                "system:openshift:scc:anyuid",
                "sudoer",
            ].filter((r) => !powerful.clusterRoles.has(r)),
        ).toEqual([]);
        // OpenShift's cluster-admins binding (bootstrap_cluster_role_bindings.yaml) and the privileged group.
        expect(["system:cluster-admins", "system:masters"].filter((g) => !powerful.groups.has(g))).toEqual([]);
        expect(powerful.users.has("system:admin")).toBe(true);
        expect(powerful.serviceAccounts.has("kube-system/clusterrole-aggregation-controller")).toBe(true);
        expect([...powerful.namespaces].sort()).toEqual(["kube-system", "openshift-infra"]);
    });

    test("GIVEN roles that read only, discover or use restricted SCCs WHEN powerful names are derived THEN they are not", () => {
        expect(
            ["view", "system:basic-user", "system:discovery", "system:openshift:scc:restricted-v2", "system:auth-delegator"].filter((r) =>
                powerful.clusterRoles.has(r),
            ),
        ).toEqual([]);
        expect(powerful.groups.has("system:authenticated")).toBe(false);
    });

    test("GIVEN the SCC manifests WHEN privileged SCCs are derived THEN those admitting root, host access or privileged containers are, restricted and nonroot ones are not", () => {
        expect([...PRIVILEGED_SCCS.keys()].sort()).toEqual([
            "anyuid",
            "hostaccess",
            "hostmount-anyuid",
            "hostmount-anyuid-v2",
            "hostnetwork",
            "hostnetwork-v2",
            "privileged",
        ]);
    });
});

describe("OLM's generated roles as a family, and aggregation", () => {
    test("GIVEN selectors on OLM's owner labels WHEN matched against the family THEN any value of them matches; a label OLM does not set does not", () => {
        expect(selectorSelectsRole({ matchLabels: { "olm.owner": "whatever.v1" } }, OLM_GENERATED_ROLES)).toBe(true);
        expect(selectorSelectsRole({ matchLabels: { "olm.owner.kind": "ClusterServiceVersion" } }, OLM_GENERATED_ROLES)).toBe(true);
        expect(
            selectorSelectsRole({ matchExpressions: [{ key: "operators.coreos.com/etcd.ops", operator: "Exists" }] }, OLM_GENERATED_ROLES),
        ).toBe(true);
        expect(selectorSelectsRole({ matchLabels: { "olm.owner.kind": "Subscription" } }, OLM_GENERATED_ROLES)).toBe(false);
        expect(selectorSelectsRole({ matchLabels: { app: "x" } }, OLM_GENERATED_ROLES)).toBe(false);
    });

    test("GIVEN a chain of aggregated roles WHEN settled THEN each holds the union of what it selects, its own written rules replaced (clusterroleaggregation_controller.go syncClusterRole)", () => {
        const authorizer = new RbacAuthorizer({
            clusterRoles: [
                { name: "leaf", labels: { tier: "leaf" }, rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] },
                {
                    name: "middle",
                    labels: { tier: "middle" },
                    rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
                    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { tier: "leaf" } }] },
                },
                { name: "top", labels: {}, rules: [], aggregationRule: { clusterRoleSelectors: [{ matchLabels: { tier: "middle" } }] } },
            ],
            roles: [],
            bindings: [],
        });
        expect(authorizer.clusterRoleRules("middle")).toEqual([{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]);
        expect(authorizer.clusterRoleRules("top")).toEqual([{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]);
        expect(powersOf(authorizer.clusterRoleRules("top") ?? [], {}, wellKnown().powerful)).toEqual([]);
    });

    test("GIVEN an aggregated role whose selectors match only roles without rules WHEN settled THEN it keeps the rules it was written with, and a role aggregating it gets them (clusterroleaggregation_controller.go applyClusterRoles: an apply of no rules leaves them)", () => {
        const written = [{ apiGroups: [""], resources: ["secrets"], verbs: ["list"], resourceNames: [""] }];
        const authorizer = new RbacAuthorizer({
            clusterRoles: [
                { name: "empty", labels: { tier: "leaf" }, rules: [] },
                {
                    name: "middle",
                    labels: { tier: "middle" },
                    rules: written,
                    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { tier: "leaf" } }] },
                },
                { name: "top", labels: {}, rules: [], aggregationRule: { clusterRoleSelectors: [{ matchLabels: { tier: "middle" } }] } },
            ],
            roles: [],
            bindings: [
                {
                    kind: "ClusterRoleBinding",
                    name: "b",
                    roleRef: { kind: "ClusterRole", name: "top" },
                    subjects: [{ kind: "User", name: "u" }],
                },
            ],
        });
        expect(authorizer.clusterRoleRules("middle")).toEqual(written);
        expect(authorizer.clusterRoleRules("top")).toEqual(written);
        expect(
            authorizer.allows({ name: "u", groups: [] }, { verb: "list", group: "", resource: "secrets", namespace: "", name: "" }),
        ).toBe(true);
    });
});

describe("server-side-apply patches of RBAC objects (k8s.io/api rbac/v1 types.go: the lists are atomic)", () => {
    const live = { name: "r", labels: { a: "1" }, rules: [{ apiGroups: [""], resources: ["pods"], verbs: ["get"] }] };

    test("GIVEN a patch that sets rules and a label WHEN applied THEN the rules are replaced and the labels merged; one that sets neither leaves the rules", () => {
        expect(patchedRole(live, { rules: [], labels: { b: "2" } })).toEqual({ name: "r", labels: { a: "1", b: "2" }, rules: [] });
        expect(patchedRole(live, { labels: { a: "3" } })).toEqual({ ...live, labels: { a: "3" } });
    });

    test("GIVEN a binding patch without a roleRef WHEN applied THEN the live roleRef stays and the subjects are replaced", () => {
        const binding = {
            kind: "ClusterRoleBinding" as const,
            name: "b",
            roleRef: { kind: "ClusterRole", name: "cluster-admin" },
            subjects: [{ kind: "Group", name: "system:masters" }],
        };
        expect(patchedBinding(binding, { subjects: [{ kind: "Group", name: "system:authenticated" }] })).toEqual({
            ...binding,
            subjects: [{ kind: "Group", name: "system:authenticated" }],
        });
    });
});

describe("the evaluator's shortcuts answer as the whole computation does", () => {
    // Labels the well-known aggregated roles select by (their selectors' own matchLabels), plus one nobody selects.
    const selectedLabels = [
        ...new Map(
            wellKnown()
                .authorizer.objects.clusterRoles.flatMap((r) => r.aggregationRule?.clusterRoleSelectors ?? [])
                .flatMap((s) => Object.entries(s.matchLabels ?? {}))
                .map(([key, value]) => [`${key}=${value}`, [key, value] as const]),
        ).values(),
        ["team", "x"] as const,
    ];
    const label = fc.constantFrom(...selectedLabels);
    const rule = fc.record({
        apiGroups: fc.subarray(["", "*", "apps", "rbac.authorization.k8s.io", "certificates.k8s.io"], { minLength: 1 }),
        resources: fc.subarray(
            ["*", "secrets", "pods/exec", "clusterroles", "signers", "certificatesigningrequests/approval", "configmaps"],
            {
                minLength: 1,
            },
        ),
        verbs: fc.subarray(["*", "get", "list", "create", "update", "bind", "escalate", "approve"], { minLength: 1 }),
    });
    const role = (name: string) =>
        fc.record({
            name: fc.constant(name),
            labels: fc.array(label, { maxLength: 2 }).map((pairs) => Object.fromEntries(pairs)),
            rules: fc.array(rule, { maxLength: 3 }),
            aggregation: fc.option(fc.array(label, { minLength: 1, maxLength: 2 }), { nil: undefined }),
        });
    const roles = fc.tuple(role("stack-a"), role("stack-b")).map((generated) =>
        generated.map(({ aggregation, ...r }) =>
            aggregation === undefined
                ? r
                : {
                      ...r,
                      aggregationRule: { clusterRoleSelectors: aggregation.map(([key, value]) => ({ matchLabels: { [key]: value } })) },
                  },
        ),
    );

    test("GIVEN generated roles added to the well-known set WHEN withClusterRoles reuses the well-known answers THEN every ClusterRole's aggregated rules and selection equal those of an authorizer built over all of them", () => {
        const base = wellKnown().authorizer;
        fc.assert(
            fc.property(roles, (added) => {
                const reused = RbacAuthorizer.withClusterRoles(base, added);
                const whole = new RbacAuthorizer(mergeObjects(base.objects, { clusterRoles: added, roles: [], bindings: [] }));
                for (const { name } of whole.objects.clusterRoles) {
                    expect(reused.clusterRoleRules(name)).toEqual(whole.clusterRoleRules(name));
                    expect(reused.aggregatedFrom(name).map((r) => r.name)).toEqual(whole.aggregatedFrom(name).map((r) => r.name));
                }
            }),
            { numRuns: 40 },
        );
    });

    test("GIVEN a rule set and rules added to it WHEN gainedPowers asks only the added rules THEN it finds exactly the powers powersOf finds in the whole set beyond those held before", () => {
        const powerful = wellKnown().powerful;
        fc.assert(
            fc.property(fc.array(rule, { maxLength: 4 }), fc.array(rule, { maxLength: 3 }), (before, extra) => {
                const after = [...before, ...extra];
                const held = new Set(powersOf(before, {}, powerful).map((f) => f.power));
                expect(gainedPowers(held, rulesNotIn(after, before), after, {}, powerful)).toEqual(
                    powersOf(after, {}, powerful).filter((f) => !held.has(f.power)),
                );
            }),
            { numRuns: 200 },
        );
    });
});
