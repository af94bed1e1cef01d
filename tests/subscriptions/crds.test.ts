import Ajv, { ErrorObject } from "ajv";
import fc from "fast-check";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { bundleCrd, clusterBundleCrd, CrdManifest } from "../../components/subscriptions/crds";
import { consoleYamlSampleManifests } from "../../components/subscriptions/samples";
import { isDns1123Subdomain } from "../../components/shared/k8s-names";
import { validateManifests } from "../../scripts/render/validate-k8s";

/** Validates objects against the CRD's own openAPIV3Schema, as the API server's schema check does. */
function validatorOf(crd: CrdManifest): (object: unknown) => string[] {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(crd.spec.versions[0].schema.openAPIV3Schema);
    return (object) => (validate(object) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath} ${e.message}`));
}

const validateClusterBundle = validatorOf(clusterBundleCrd());
const validateBundle = validatorOf(bundleCrd());

/** The seed's "Bundle API" ClusterBundle, placeholders filled in. */
const seedClusterBundle = () => ({
    kind: "ClusterBundle",
    apiVersion: "subscription.openshift.io/v1alpha1",
    metadata: { name: "cluster", labels: { "subscription.openshift.io/always-inject": "true" } },
    spec: {
        aggregateToClusterRoles: ["admin", "edit"],
        entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
        yumRepositories: [{ name: "satellite-repos", namespace: "openshift-config" }],
    },
    status: {
        conditions: [{ type: "Invalid", status: "False" }],
        clusterRole: "cluster-subscription-bundle",
        shares: [{ name: "cluster-subscription-entitlement" }, { name: "cluster-subscription-yumRepository" }],
    },
});

/** The seed's "Bundle API" Bundle, placeholders filled in. */
const seedBundle = () => ({
    kind: "Bundle",
    apiVersion: "subscription.openshift.io/v1alpha1",
    metadata: { name: "local", namespace: "team-a", labels: { "subscription.openshift.io/always-inject": "true" } },
    spec: {
        entitlements: [{ name: "local-entitlement", namespace: "team-a" }],
        yumRepositories: [{ name: "local-repo", namespace: "team-a" }],
    },
    status: { conditions: [{ type: "Invalid", status: "False" }] },
});

describe("the Bundle and ClusterBundle CRDs", () => {
    test("GIVEN the two CRDs THEN they are v1alpha1 in subscription.openshift.io, one namespaced and one cluster-scoped, with a status subresource", () => {
        const shape = (crd: CrdManifest) => ({
            name: crd.metadata.name,
            group: crd.spec.group,
            scope: crd.spec.scope,
            names: crd.spec.names,
            versions: crd.spec.versions.map((v) => ({ name: v.name, served: v.served, storage: v.storage, subresources: v.subresources })),
        });
        expect([shape(bundleCrd()), shape(clusterBundleCrd())]).toEqual([
            {
                name: "bundles.subscription.openshift.io",
                group: "subscription.openshift.io",
                scope: "Namespaced",
                names: { kind: "Bundle", listKind: "BundleList", plural: "bundles", singular: "bundle", categories: ["subscriptions"] },
                versions: [{ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } }],
            },
            {
                name: "clusterbundles.subscription.openshift.io",
                group: "subscription.openshift.io",
                scope: "Cluster",
                names: {
                    kind: "ClusterBundle",
                    listKind: "ClusterBundleList",
                    plural: "clusterbundles",
                    singular: "clusterbundle",
                    categories: ["subscriptions"],
                },
                versions: [{ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } }],
            },
        ]);
    });

    test("GIVEN the CRDs THEN their printer columns show always-inject, Invalid, the ClusterRole, entitlements (wide) and age", () => {
        const columns = (crd: CrdManifest) =>
            crd.spec.versions[0].additionalPrinterColumns.map((c) => [c.name, c.jsonPath, c.priority ?? 0]);
        expect(columns(clusterBundleCrd())).toEqual([
            ["Always-Inject", ".metadata.labels.subscription\\.openshift\\.io/always-inject", 0],
            ["Invalid", '.status.conditions[?(@.type=="Invalid")].status', 0],
            ["Cluster-Role", ".status.clusterRole", 0],
            ["Entitlements", ".spec.entitlements[*].name", 1],
            ["Age", ".metadata.creationTimestamp", 0],
        ]);
        expect(columns(bundleCrd()).map(([name]) => name)).toEqual(["Always-Inject", "Invalid", "Entitlements", "Age"]);
    });

    test("GIVEN the schemas THEN every list is a list-map or set keyed as the API means it (server-side apply merges by these keys)", () => {
        const clusterSpec = clusterBundleCrd().spec.versions[0].schema.openAPIV3Schema as {
            properties: { spec: { properties: Record<string, Record<string, unknown>> } };
        };
        const bundleSpec = bundleCrd().spec.versions[0].schema.openAPIV3Schema as {
            properties: { spec: { properties: Record<string, Record<string, unknown>> } };
        };
        const listing = (props: Record<string, Record<string, unknown>>) =>
            Object.fromEntries(Object.entries(props).map(([k, v]) => [k, [v["x-kubernetes-list-type"], v["x-kubernetes-list-map-keys"]]]));
        expect(listing(clusterSpec.properties.spec.properties)).toEqual({
            aggregateToClusterRoles: ["set", undefined],
            entitlements: ["map", ["namespace", "name"]],
            yumRepositories: ["map", ["namespace", "name"]],
        });
        expect(listing(bundleSpec.properties.spec.properties)).toEqual({
            entitlements: ["map", ["name"]],
            yumRepositories: ["map", ["name"]],
        });
    });

    test("GIVEN the seed's example ClusterBundle and Bundle (Bundle API) WHEN validated against the CRDs' own schemas THEN both are accepted", () => {
        expect(validateClusterBundle(seedClusterBundle())).toEqual([]);
        expect(validateBundle(seedBundle())).toEqual([]);
    });

    test("GIVEN the two console samples WHEN their YAML is validated against the CRDs THEN both are accepted and target v1alpha1", () => {
        const samples = consoleYamlSampleManifests();
        expect(samples.map((s) => [s.metadata.name, s.spec.targetResource])).toEqual([
            ["subscription-cluster-bundle-example", { apiVersion: "subscription.openshift.io/v1alpha1", kind: "ClusterBundle" }],
            ["subscription-namespaced-bundle-example", { apiVersion: "subscription.openshift.io/v1alpha1", kind: "Bundle" }],
        ]);
        const [clusterSample, bundleSample] = samples.map((s) => parse(s.spec.yaml));
        expect(clusterSample).toEqual({
            apiVersion: "subscription.openshift.io/v1alpha1",
            kind: "ClusterBundle",
            metadata: { name: "cluster" },
            spec: {
                aggregateToClusterRoles: ["edit", "admin"],
                entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config-managed" }],
            },
        });
        expect(validateClusterBundle(clusterSample)).toEqual([]);
        expect(validateBundle(bundleSample)).toEqual([]);
    });

    const withSpec = (spec: Record<string, unknown>) => ({ ...seedClusterBundle(), spec: { ...seedClusterBundle().spec, ...spec } });

    test.each([
        ["no spec", { ...seedClusterBundle(), spec: undefined }, [" must have required property 'spec'"]],
        ["no entitlements", withSpec({ entitlements: undefined }), ["/spec must have required property 'entitlements'"]],
        ["an empty entitlements list", withSpec({ entitlements: [] }), ["/spec/entitlements must NOT have fewer than 1 items"]],
        [
            "an entitlement without namespace",
            withSpec({ entitlements: [{ name: "e" }] }),
            ["/spec/entitlements/0 must have required property 'namespace'"],
        ],
        [
            "an entitlement name that is not DNS-1123",
            withSpec({ entitlements: [{ name: "Etc_Pki", namespace: "x" }] }),
            ['/spec/entitlements/0/name must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"'],
        ],
        [
            "a namespace with a dot",
            withSpec({ yumRepositories: [{ name: "r", namespace: "a.b" }] }),
            ['/spec/yumRepositories/0/namespace must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"'],
        ],
        ["a role that is a number", withSpec({ aggregateToClusterRoles: [7] }), ["/spec/aggregateToClusterRoles/0 must be string"]],
        [
            "a condition status outside True/False/Unknown",
            { ...seedClusterBundle(), status: { conditions: [{ type: "Invalid", status: "Maybe" }] } },
            ["/status/conditions/0/status must be equal to one of the allowed values"],
        ],
        [
            "a condition without type",
            { ...seedClusterBundle(), status: { conditions: [{ status: "True" }] } },
            ["/status/conditions/0 must have required property 'type'"],
        ],
        [
            "a share without name",
            { ...seedClusterBundle(), status: { shares: [{ kind: "SharedSecret" }] } },
            ["/status/shares/0 must have required property 'name'"],
        ],
        [
            "a condition time that is not a date-time",
            { ...seedClusterBundle(), status: { conditions: [{ type: "Invalid", status: "True", lastTransitionTime: "yesterday" }] } },
            ['/status/conditions/0/lastTransitionTime must match format "date-time"'],
        ],
    ])("GIVEN a ClusterBundle with %s WHEN validated THEN the schema rejects it", (_case, object, errors) => {
        expect(validateClusterBundle(object)).toEqual(errors);
    });

    test.each([
        [
            "an empty entitlements list",
            { ...seedBundle(), spec: { entitlements: [] } },
            ["/spec/entitlements must NOT have fewer than 1 items"],
        ],
        [
            "an entitlement that is a string",
            { ...seedBundle(), spec: { entitlements: ["etc-pki-entitlement"] } },
            ["/spec/entitlements/0 must be object"],
        ],
    ])("GIVEN a Bundle with %s WHEN validated THEN the schema rejects it", (_case, object, errors) => {
        expect(validateBundle(object)).toEqual(errors);
    });

    test("GIVEN a Bundle with a ClusterBundle-only field WHEN rendered THEN the render reports what the API server would prune", () => {
        const bundle = { ...seedBundle(), spec: { ...seedBundle().spec, aggregateToClusterRoles: ["edit"] } };
        expect(validateManifests([{ ...bundleCrd() }, bundle]).problems).toEqual([
            {
                object: "Bundle team-a/local",
                message: "spec.aggregateToClusterRoles: is not in the schema (the API server would prune it)",
            },
        ]);
    });

    test("GIVEN the schemas THEN they are structural: every node has a type, nothing is a $ref, and objects list their properties", () => {
        const unstructured: string[] = [];
        const walk = (node: Record<string, unknown>, at: string) => {
            if (typeof node.type !== "string" || "$ref" in node || "additionalProperties" in node) {
                unstructured.push(at);
            }
            for (const [key, child] of Object.entries((node.properties ?? {}) as Record<string, Record<string, unknown>>)) {
                walk(child, `${at}.${key}`);
            }
            if (node.items) {
                walk(node.items as Record<string, unknown>, `${at}[]`);
            }
            if (node.type === "object" && node.properties === undefined && at !== "$.metadata") {
                unstructured.push(`${at} (object without properties)`);
            }
        };
        for (const crd of [bundleCrd(), clusterBundleCrd()]) {
            walk(crd.spec.versions[0].schema.openAPIV3Schema, "$");
        }
        expect(unstructured).toEqual([]);
    });

    test("GIVEN any string WHEN judged as an entitlement name by the CRD and by the config rules THEN both agree", () => {
        const nameLike = fc.stringMatching(/^[a-zA-Z0-9._-]{0,20}$/);
        fc.assert(
            fc.property(nameLike, (name) => {
                const crdAccepts =
                    validateClusterBundle({ ...seedClusterBundle(), spec: { entitlements: [{ name, namespace: "ns" }] } }).length === 0;
                expect(crdAccepts).toBe(isDns1123Subdomain(name));
            }),
            { numRuns: 500 },
        );
    });
});
