import fc from "fast-check";
import { canonicalJson } from "../../components/shared/canonical-json";
import { base62, fnv64a, goJsonString, MAX_GENERATED_NAME_LENGTH, olmRbacName } from "../../components/operator/names";
import { clusterRoleNameFor, roleNameFor } from "../../components/operator/rbac";

describe("OLM-shaped generated names", () => {
    test("GIVEN the FNV-1a reference vectors WHEN hashed THEN the 64 bit values match the specification", () => {
        expect(fnv64a("")).toBe(0xcbf29ce484222325n);
        expect(fnv64a("a")).toBe(0xaf63dc4c8601ec8cn);
        expect(fnv64a("foobar")).toBe(0x85944171f73967e8n);
    });

    test("GIVEN objects with the same content in a different key order WHEN serialised canonically THEN the text is equal", () => {
        expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 2 }], c: undefined } })).toBe('{"a":{"d":[2,{"x":2,"y":1}]},"b":1}');
    });

    test("GIVEN any base and encoding WHEN a name is generated THEN it fits OLM's limit (plus OLM's dash), starts with a prefix of the base and is stable", () => {
        fc.assert(
            fc.property(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,120}$/), fc.string(), (base, encoded) => {
                const name = olmRbacName(base, encoded);
                expect(name.length).toBeLessThanOrEqual(MAX_GENERATED_NAME_LENGTH + 1);
                const cut = name.slice(0, name.lastIndexOf("-"));
                expect(base.startsWith(cut)).toBe(true);
                expect(olmRbacName(base, encoded)).toBe(name);
            }),
        );
    });
});

describe("OLM's current RBAC names (rbac.go generateName, hash.go DeepHashObject since Nov 2023)", () => {
    // Each expected name was computed by Go: encoding/json's Encoder on structs with the json tags
    // of rbacv1.PolicyRule and v1alpha1.StrategyDeploymentPermissions, crypto/sha256 Sum224 and
    // math/big Text(62), the calls OLM makes.
    const csv = "widget-operator.v1.0.0";
    const permission = {
        serviceAccountName: "widget-controller",
        rules: [
            { verbs: ["get", "list", "watch"], apiGroups: [""], resources: ["configmaps", "secrets"] },
            { verbs: ["create"], apiGroups: ["coordination.k8s.io"], resources: ["leases"], resourceNames: ["lock<&>"] },
        ],
    };

    test("GIVEN a permission with HTML characters in a resource name WHEN its Role is named THEN it is Go's name, base cut to fit 63", () => {
        expect(roleNameFor(csv, permission)).toBe("widget-operator.v1.0.0-w-bTXGT4PbwWwliajyUrnACwYZiGBIhD6QmbCv8J");
    });

    test("GIVEN a cluster permission with nonResourceURLs and an empty apiGroups list WHEN its ClusterRole is named THEN it is Go's name", () => {
        // Go's nil verbs (the Go oracle's second rule) encode as null: here an absent list.
        const cluster = {
            serviceAccountName: "widget-controller",
            rules: [
                { verbs: ["get"], nonResourceURLs: ["/metrics"] },
                { verbs: undefined as unknown as string[], apiGroups: ["apps"] },
            ],
        };
        expect(clusterRoleNameFor(csv, "widget-operator", cluster)).toBe("widget-operator.v1.0.0-1ULSxhCs0qgDgIoTU8F0FeRRrKBdQro9u2n7uZ");
    });

    test("GIVEN a permission without rules under a long CSV name WHEN named THEN the base is cut as OLM cuts it", () => {
        const name = roleNameFor("a-very-long-cluster-service-version-name.v12.345.6789", {
            serviceAccountName: "some-service-account",
            rules: [],
        });
        const hash = name.slice(name.lastIndexOf("-") + 1);
        expect(hash).toMatch(/^[0-9A-Za-z]{37,38}$/);
        expect(name).toBe(
            `${"a-very-long-cluster-service-version-name.v12.345.6789-some-service-account".slice(0, 63 - hash.length - 1)}-${hash}`,
        );
    });

    test("GIVEN strings Go escapes differently from JavaScript WHEN encoded THEN they are Go's bytes", () => {
        expect(goJsonString("a<b>&c\u2028\b\f\n")).toBe('"a\\u003cb\\u003e\\u0026c\\u2028\\u0008\\u000c\\n"');
    });

    test("GIVEN known byte strings WHEN written in base 62 THEN they are big.Int.Text(62)", () => {
        expect([
            base62(Uint8Array.from([0])),
            base62(Uint8Array.from([61])),
            base62(Uint8Array.from([62])),
            base62(Uint8Array.from([1, 0])),
        ]).toEqual(["0", "Z", "10", "48"]);
    });
});
