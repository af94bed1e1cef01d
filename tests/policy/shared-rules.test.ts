import fc from "fast-check";
import { NAMESPACE_NAME_LABEL, selectorExcludesNamespace, selectorMatches } from "../../components/shared/label-selector";
import { restrictedProfileViolations } from "../../components/shared/pod-security";
import { carriedObjects } from "../../policy-packs/shared/k8s";
import {
    aggregatedInto,
    isServiceAccountSubject,
    looksLikePolicyRule,
    ruleGrants,
    ruleGrantsUnrestricted,
    ruleReachesResource,
} from "../../components/shared/rbac";

describe("RBAC rule matching (components/shared/rbac.ts), as the API server's authorizer", () => {
    test("GIVEN resource forms WHEN matched THEN `*`, exact names and `*/scale` match as the authorizer does, and `deployments/*` is a literal that matches no subresource (evaluation_helpers.go ResourceMatches)", () => {
        const grants = (resources: string[], resource: string) =>
            ruleGrants({ apiGroups: ["apps"], resources, verbs: ["get"] }, { group: "apps", resource, verb: "get" });
        expect(grants(["*"], "deployments/scale")).toBe(true);
        expect(grants(["deployments"], "deployments")).toBe(true);
        expect(grants(["deployments"], "deployments/scale")).toBe(false);
        expect(grants(["deployments/*"], "deployments/scale")).toBe(false);
        expect(grants(["*/scale"], "deployments/scale")).toBe(true);
        expect(grants(["*/scale"], "deployments")).toBe(false);
        expect(
            ruleGrants({ apiGroups: ["*"], resources: ["secrets"], verbs: ["*"] }, { group: "", resource: "secrets", verb: "delete" }),
        ).toBe(true);
        expect(
            ruleGrants({ apiGroups: ["apps"], resources: ["secrets"], verbs: ["*"] }, { group: "", resource: "secrets", verb: "get" }),
        ).toBe(false);
    });

    test("GIVEN resourceNames WHEN asked for unrestricted access THEN only rules without names grant it", () => {
        const request = { group: "sharedresource.openshift.io", resource: "sharedsecrets", verb: "use" };
        expect(
            ruleGrantsUnrestricted(
                {
                    apiGroups: ["sharedresource.openshift.io"],
                    resources: ["sharedsecrets"],
                    verbs: ["use"],
                    resourceNames: ["cluster-entitlement"],
                },
                request,
            ),
        ).toBe(false);
        expect(
            ruleGrantsUnrestricted({ apiGroups: ["sharedresource.openshift.io"], resources: ["sharedsecrets"], verbs: ["use"] }, request),
        ).toBe(true);
    });

    test("GIVEN any verbs WHEN a rule names secrets, a secrets subresource or * in the core group THEN it reaches secrets; other resources and groups do not", () => {
        fc.assert(
            fc.property(
                fc.subarray(["get", "list", "watch", "create", "*"], { minLength: 1 }),
                fc.constantFrom("secrets", "secrets/status", "*"),
                fc.constantFrom("", "*"),
                (verbs, resource, group) => {
                    expect(ruleReachesResource({ apiGroups: [group], resources: [resource], verbs }, "", "secrets")).toBe(true);
                    expect(ruleReachesResource({ apiGroups: [group], resources: ["configmaps", "*/scale"], verbs }, "", "secrets")).toBe(
                        false,
                    );
                    expect(ruleReachesResource({ apiGroups: ["apps"], resources: [resource], verbs }, "", "secrets")).toBe(false);
                },
            ),
        );
    });

    test("GIVEN subjects WHEN classified THEN service accounts, their user names and groups are service accounts; people are not", () => {
        expect(
            [
                { kind: "ServiceAccount", name: "a", namespace: "b" },
                { kind: "User", name: "system:serviceaccount:b:a" },
                { kind: "Group", name: "system:serviceaccounts" },
                { kind: "Group", name: "system:serviceaccounts:b" },
                { kind: "User", name: "alice" },
                { kind: "Group", name: "system:authenticated" },
            ].map(isServiceAccountSubject),
        ).toEqual([true, true, true, true, false, false]);
    });

    test('GIVEN aggregation labels WHEN read THEN only the roles asked about, set to "true", count', () => {
        const labels = {
            "rbac.authorization.k8s.io/aggregate-to-view": "true",
            "rbac.authorization.k8s.io/aggregate-to-admin": "true",
            "rbac.authorization.k8s.io/aggregate-to-edit": "false",
            "rbac.authorization.k8s.io/aggregate-to-monitoring": "true",
        };
        expect(aggregatedInto(labels)).toEqual(["admin", "view"]);
        expect(aggregatedInto(labels, ["admin", "edit", "view", "monitoring"])).toEqual(["admin", "view", "monitoring"]);
    });
});

describe("label selectors (components/shared/label-selector.ts)", () => {
    const namespace = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/);

    test("GIVEN a NotIn on the name label WHEN asked THEN it excludes exactly the listed namespaces, whatever labels they carry", () => {
        fc.assert(
            fc.property(
                fc.uniqueArray(namespace, { minLength: 1, maxLength: 5 }),
                namespace,
                fc.dictionary(fc.constantFrom("team", "env"), namespace),
                (excluded, other, labels) => {
                    const selector = {
                        matchLabels: { team: "a" },
                        matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: "NotIn", values: excluded }],
                    };
                    for (const name of excluded) {
                        expect(selectorExcludesNamespace(selector, name)).toBe(true);
                        expect(selectorMatches(selector, { ...labels, [NAMESPACE_NAME_LABEL]: name })).toBe(false);
                    }
                    expect(selectorExcludesNamespace(selector, other)).toBe(excluded.includes(other));
                },
            ),
        );
    });

    test("GIVEN selectors that rely on other labels WHEN asked THEN they do not exclude a namespace by name (anyone who may label it could opt it in)", () => {
        expect(selectorExcludesNamespace({ matchLabels: { "webhooks.cluster-platform.io/x": "true" } }, "kube-system")).toBe(false);
        expect(
            selectorExcludesNamespace(
                { matchExpressions: [{ key: "openshift.io/run-level", operator: "NotIn", values: ["0", "1"] }] },
                "kube-system",
            ),
        ).toBe(false);
        expect(selectorExcludesNamespace(undefined, "kube-system")).toBe(false);
        expect(selectorExcludesNamespace({ matchLabels: { [NAMESPACE_NAME_LABEL]: "team-a" } }, "kube-system")).toBe(true);
        expect(
            selectorExcludesNamespace({ matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: "In", values: ["team-a"] }] }, "team-a"),
        ).toBe(false);
    });

    test("GIVEN each operator WHEN matched THEN In, NotIn, Exists and DoesNotExist behave as apimachinery's", () => {
        const labels = { a: "1" };
        expect(selectorMatches({ matchExpressions: [{ key: "a", operator: "In", values: ["1", "2"] }] }, labels)).toBe(true);
        expect(selectorMatches({ matchExpressions: [{ key: "b", operator: "NotIn", values: ["1"] }] }, labels)).toBe(true);
        expect(selectorMatches({ matchExpressions: [{ key: "a", operator: "Exists" }] }, labels)).toBe(true);
        expect(selectorMatches({ matchExpressions: [{ key: "a", operator: "DoesNotExist" }] }, labels)).toBe(false);
        expect(selectorMatches({}, labels)).toBe(true);
        expect(selectorMatches({ matchExpressions: [{ key: "a", operator: "Gt", values: ["0"] }] }, labels)).toBe(false);
    });
});

describe("what carries RBAC (components/shared/rbac.ts looksLikePolicyRule)", () => {
    test("GIVEN objects WHEN asked whether they look like a PolicyRule THEN verbs with resources or nonResourceURLs do", () => {
        expect(
            [
                { verbs: ["get"], resources: ["pods"] },
                { verbs: ["get"], nonResourceURLs: ["/healthz"] },
                { verbs: ["get"] },
                { resources: ["pods"] },
                ["verbs"],
            ].map(looksLikePolicyRule),
        ).toEqual([true, true, false, false, false]);
    });
});

describe("the restricted profile on OpenShift (restricted-v2) and for patches", () => {
    const explicitBad = [
        { field: "privileged", container: { securityContext: { privileged: true } }, check: "Privileged Containers" },
        {
            field: "allowPrivilegeEscalation",
            container: { securityContext: { allowPrivilegeEscalation: true } },
            check: "Privilege Escalation",
        },
        { field: "runAsUser 0", container: { securityContext: { runAsUser: 0 } }, check: "Running as Non-root user" },
        { field: "added capability", container: { securityContext: { capabilities: { add: ["SYS_ADMIN"] } } }, check: "Capabilities" },
        { field: "unconfined seccomp", container: { securityContext: { seccompProfile: { type: "Unconfined" } } }, check: "Seccomp" },
        { field: "host port", container: { ports: [{ containerPort: 80, hostPort: 80 }] }, check: "Host Ports" },
    ];

    test("GIVEN any number of containers that set no securityContext WHEN judged for openshift or as a patch THEN they pass (the SCC assigns, a patch leaves it)", () => {
        fc.assert(
            fc.property(
                fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 }),
                fc.boolean(),
                (names, patch) => {
                    const spec = { containers: names.map((name) => ({ name, image: "x" })) };
                    expect(restrictedProfileViolations(spec, {}, patch ? { setFieldsOnly: true } : { platform: "openshift" })).toEqual([]);
                },
            ),
        );
    });

    test.each(explicitBad)(
        "GIVEN a container with $field WHEN judged for openshift THEN the $check control is still reported",
        ({ container, check }) => {
            expect(
                restrictedProfileViolations({ containers: [{ name: "c", ...container }] }, {}, { platform: "openshift" }).map(
                    (v) => v.check,
                ),
            ).toEqual([check]);
        },
    );
});

describe("the objects a resource carries (policy-packs/shared/k8s.ts carriedObjects)", () => {
    test("GIVEN a ClusterRoleList, a custom kind named …List without items, and a patch WHEN expanded THEN only the list yields its items, typed as their kind", () => {
        const item = { metadata: { name: "r" }, rules: [] };
        expect(
            carriedObjects({ type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleList", name: "roles", props: { items: [item] } }),
        ).toEqual([{ type: "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", name: "roles.items[0]", props: item }]);
        const allowList = { type: "kubernetes:example.io/v1:AllowList", name: "a", props: { spec: { entries: [] } } };
        expect(carriedObjects(allowList)).toEqual([allowList]);
        const patch = { type: "kubernetes:apps/v1:DeploymentPatch", name: "d", props: { spec: { replicas: 1 } } };
        expect(carriedObjects(patch)).toEqual([patch]);
    });
});
