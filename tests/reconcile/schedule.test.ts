/**
 * The reconcile schedule rule (components/reconcile/rules.ts) and the RBAC derivation
 * (components/reconcile/rbac.ts), directly.
 */
import fc from "fast-check";
import {
    derivedResyncSeconds,
    longestResyncSeconds,
    PKO_MIN_RESYNC_SECONDS,
    runsInWindow,
    scheduleProblem,
} from "../../components/reconcile/rules";
import { kindUseOfToken, reconcileRules, resourceOfKind } from "../../components/reconcile/rbac";
import { Plurals, resourcesOfCrd } from "../../components/shared/api-resources";

describe("the reconcile schedule", () => {
    test("GIVEN any renewal window WHEN the period is derived THEN the rule accepts it, at PKO's floor or above and at most daily", () => {
        fc.assert(
            fc.property(fc.integer({ min: 1, max: 36500 }), (days) => {
                const seconds = derivedResyncSeconds(days);
                expect(scheduleProblem(seconds, days)).toBeUndefined();
                expect(seconds).toBeGreaterThanOrEqual(PKO_MIN_RESYNC_SECONDS);
                expect(seconds).toBeLessThanOrEqual(86400);
            }),
        );
    });

    test("GIVEN any period and window WHEN judged THEN it is accepted exactly when at least three runs fit, and the longest accepted period is the bound", () => {
        fc.assert(
            fc.property(fc.integer({ min: 60, max: 400 * 86400 }), fc.integer({ min: 1, max: 3650 }), (seconds, days) => {
                expect(scheduleProblem(seconds, days) === undefined).toBe(runsInWindow(seconds, days) >= 3);
                expect(scheduleProblem(longestResyncSeconds(days), days)).toBeUndefined();
                expect(scheduleProblem(longestResyncSeconds(days) + 1, days)).toBeDefined();
            }),
        );
    });

    test("GIVEN the default 30-day window WHEN derived THEN the stack runs daily, 30 times inside the window", () => {
        expect(derivedResyncSeconds(30)).toBe(86400);
        expect(runsInWindow(86400, 30)).toBe(30);
        expect(derivedResyncSeconds(1)).toBe(7200);
    });
});

describe("the least RBAC", () => {
    // Expected plurals: the API server's discovery as the real tier serves it (kubectl api-resources), and the CRD declared below.
    test.each([
        ["apps/v1", "Deployment", "deployments"],
        ["networking.k8s.io/v1", "Ingress", "ingresses"],
        ["v1", "Endpoints", "endpoints"],
        ["networking.k8s.io/v1", "NetworkPolicy", "networkpolicies"],
        ["storage.k8s.io/v1", "StorageClass", "storageclasses"],
        ["operators.coreos.com/v1alpha1", "ClusterServiceVersion", "clusterserviceversions"],
        ["pulumi.com/v1", "Stack", "stacks"],
        ["gateway.example.io/v1", "Gateway", "gatewayz"],
    ])(
        "GIVEN the kind %s %s WHEN turned into a resource THEN it is %s, from discovery or the stack's CRD, never the kind's spelling",
        (apiVersion, kind, resource) => {
            const crd = resourcesOfCrd({
                kind: "CustomResourceDefinition",
                spec: {
                    group: "gateway.example.io",
                    scope: "Namespaced",
                    names: { kind: "Gateway", plural: "gatewayz" },
                    versions: [{ name: "v1" }],
                },
            });
            expect(resourceOfKind(apiVersion, kind, new Plurals(crd))).toBe(resource);
        },
    );

    test("GIVEN a kind neither a CRD of the stack nor discovery knows WHEN rules are derived THEN the run stops naming it: no plural is guessed", () => {
        expect(() => reconcileRules([{ apiVersion: "example.io/v1", kind: "Widget", use: "declared" }])).toThrow(
            "the resource of kind Widget (example.io/v1) is not known: neither a CustomResourceDefinition the stack declares nor the API server's discovery (components/shared/api-resources.table.json) names it, and the reconcile role does not guess plurals",
        );
    });

    test.each([
        ["kubernetes:apps/v1:Deployment", false, { apiVersion: "apps/v1", kind: "Deployment", use: "declared" }],
        ["kubernetes:core/v1:ConfigMapPatch", false, { apiVersion: "v1", kind: "ConfigMap", use: "patch" }],
        ["kubernetes:core/v1:Secret", true, { apiVersion: "v1", kind: "Secret", use: "read" }],
        ["kubernetes:cert-manager.io/v1:Certificate", false, { apiVersion: "cert-manager.io/v1", kind: "Certificate", use: "declared" }],
        ["kubernetes:yaml/v2:ConfigGroup", false, undefined],
        ["pulumi:providers:kubernetes", false, undefined],
        ["tls:index/privateKey:PrivateKey", false, undefined],
    ])("GIVEN the type token %s (read: %s) WHEN read THEN the kind and use are %j", (token, read, expected) => {
        expect(kindUseOfToken(token, read)).toEqual(expected);
    });

    test("GIVEN a Deployment, a patched ConfigMap, a read Secret and a ClusterRole WHEN rules are derived THEN each gets only its verbs, plus what awaiting and granting RBAC need", () => {
        expect(
            reconcileRules([
                { apiVersion: "apps/v1", kind: "Deployment", use: "declared" },
                { apiVersion: "v1", kind: "ConfigMap", use: "patch" },
                { apiVersion: "v1", kind: "Secret", use: "read" },
                { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", use: "declared" },
            ]),
        ).toEqual([
            { apiGroups: [""], resources: ["secrets"], verbs: ["get"] },
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "patch", "watch"] },
            // Events for every awaited kind (await.go), Pods and PVCs for the Deployment (deployment.go).
            { apiGroups: [""], resources: ["events", "persistentvolumeclaims", "pods"], verbs: ["get", "list", "watch"] },
            { apiGroups: ["apps"], resources: ["deployments"], verbs: ["create", "delete", "get", "list", "patch", "update", "watch"] },
            { apiGroups: ["apps"], resources: ["replicasets"], verbs: ["get", "list", "watch"] },
            {
                apiGroups: ["rbac.authorization.k8s.io"],
                resources: ["clusterroles"],
                verbs: ["bind", "create", "delete", "escalate", "get", "list", "patch", "update", "watch"],
            },
        ]);
    });

    test("GIVEN any set of uses in any order WHEN rules are derived THEN the rules are the same, ordered by group and then by verb list in code-unit order", () => {
        const pool = [
            { apiVersion: "v1", kind: "Secret", use: "read" },
            { apiVersion: "v1", kind: "ConfigMap", use: "patch" },
            { apiVersion: "v1", kind: "Service", use: "declared" },
            { apiVersion: "apps/v1", kind: "Deployment", use: "declared" },
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", use: "declared" },
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", use: "patch" },
            { apiVersion: "storage.k8s.io/v1", kind: "StorageClass", use: "declared" },
            { apiVersion: "Example.io/v1", kind: "Widget", use: "read" },
            { apiVersion: "example.io/v1", kind: "Gadget", use: "declared" },
        ] as const;
        // The two made-up groups are served by CRDs the stack declares.
        const crd = (group: string, kind: string, plural: string) =>
            resourcesOfCrd({ kind: "CustomResourceDefinition", spec: { group, names: { kind, plural }, versions: [{ name: "v1" }] } });
        const plurals = new Plurals([...crd("Example.io", "Widget", "widgets"), ...crd("example.io", "Gadget", "gadgets")]);
        // Code-unit order, written out: "" < "Example.io" < "apps" < "example.io" < "rbac..." < "storage...".
        const before = (a: string, b: string) => a < b;
        fc.assert(
            fc.property(fc.shuffledSubarray([...pool], { minLength: 1 }), fc.infiniteStream(fc.nat()), (uses, seeds) => {
                const shuffled = [...uses]
                    .map((u) => ({ u, k: seeds.next().value }))
                    .sort((a, b) => a.k - b.k)
                    .map(({ u }) => u);
                const rules = reconcileRules(uses, plurals);
                expect(reconcileRules(shuffled, plurals)).toEqual(rules);
                for (let i = 1; i < rules.length; i++) {
                    const [a, b] = [rules[i - 1], rules[i]];
                    const [ga, gb] = [a.apiGroups![0], b.apiGroups![0]];
                    expect(before(ga, gb) || (ga === gb && before(a.verbs.join(","), b.verbs.join(",")))).toBe(true);
                }
            }),
        );
    });
});
