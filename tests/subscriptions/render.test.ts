import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { plaintextKeyWarning } from "../../components/certificates/self-signed";
import { DRIVER_READ_NAME } from "../../components/subscriptions/bundle-resources";
import { ClusterState, KubeObject } from "../../scripts/render/cluster-state";
import { formatReport } from "../../components/shared/problems";
import type { RenderResult } from "../../scripts/render/render";
import { manifestNamed, manifestsNamed, renderConfig, renderFile, resourceNamed, resourcesOfType, ROOT } from "../helpers/render";

const EXAMPLE = "examples/openshift-aws.yaml";
const CLUSTER_FILE = path.join(ROOT, "tests/fixtures/certificates/openshift-aws.cluster.yaml");
/** The example's cluster objects, so tests can take some away. */
const clusterObjects = (): KubeObject[] => parseAllDocuments(fs.readFileSync(CLUSTER_FILE, "utf8")).map((d) => d.toJS() as KubeObject);
const PLATFORM_LABELS = {
    "app.kubernetes.io/managed-by": "cluster-platform",
    "app.kubernetes.io/part-of": "cluster-platform",
    "cluster-platform.io/capability": "subscriptions",
};

describe("subscription bundles in the rendered openshift-aws example", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderFile(EXAMPLE, { cluster: new ClusterState(clusterObjects()) });
    });

    test("GIVEN the example and its cluster objects WHEN rendered THEN it succeeds, the driver's CRDs are read and the shared objects only checked to exist", () => {
        expect(result.errors).toEqual([]);
        expect(result.reads.map((r) => [r.name, r.id, r.outcome])).toEqual(
            expect.arrayContaining([
                [DRIVER_READ_NAME, "csi.sharedresource.openshift.io", "found"],
                [
                    "shared-resource-csi-driver-sharedsecrets.sharedresource.openshift.io",
                    "sharedsecrets.sharedresource.openshift.io",
                    "found",
                ],
                [
                    "shared-resource-csi-driver-sharedconfigmaps.sharedresource.openshift.io",
                    "sharedconfigmaps.sharedresource.openshift.io",
                    "found",
                ],
            ]),
        );
        expect(
            result.reads
                .filter((r) => r.type === "kubernetes:core/v1:Secret" || r.type === "kubernetes:core/v1:ConfigMap")
                .map((r) => r.id),
        ).not.toContain("openshift-config/etc-pki-entitlement");
        expect(result.lookups).toEqual(
            expect.arrayContaining([
                { type: "kubernetes:core/v1:Secret", id: "openshift-config/etc-pki-entitlement", presence: "present" },
                { type: "kubernetes:core/v1:ConfigMap", id: "openshift-config/satellite-repos", presence: "present" },
            ]),
        );
    });

    test("GIVEN the example WHEN rendered THEN the ClusterBundle and the Bundle are declared as configured, the Bundle namespace-local", () => {
        expect(manifestNamed(result, "ClusterBundle", "cluster")).toEqual({
            apiVersion: "subscription.openshift.io/v1alpha1",
            kind: "ClusterBundle",
            metadata: { labels: PLATFORM_LABELS, name: "cluster" },
            spec: {
                aggregateToClusterRoles: ["admin", "edit"],
                entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
                yumRepositories: [{ name: "satellite-repos", namespace: "openshift-config" }],
            },
        });
        expect(manifestNamed(result, "Bundle", "subscription")).toEqual({
            apiVersion: "subscription.openshift.io/v1alpha1",
            kind: "Bundle",
            metadata: {
                labels: { ...PLATFORM_LABELS, "subscription.openshift.io/always-inject": "true" },
                name: "subscription",
                namespace: "team-a",
            },
            spec: { entitlements: [{ name: "etc-pki-entitlement", namespace: "team-a" }] },
        });
    });

    test("GIVEN the ClusterBundle WHEN rendered THEN one share per reference points at its copy in the source namespace, never at the original, and nothing is owned by the bundle", () => {
        expect(manifestNamed(result, "SharedSecret", "cluster-entitlement-etc-pki-entitlement-d0e25df8")).toEqual({
            apiVersion: "sharedresource.openshift.io/v1alpha1",
            kind: "SharedSecret",
            metadata: { labels: PLATFORM_LABELS, name: "cluster-entitlement-etc-pki-entitlement-d0e25df8" },
            spec: {
                description:
                    "Entitlement keys of ClusterBundle cluster: a copy of Secret openshift-config/etc-pki-entitlement (subscription injection)",
                secretRef: { name: "openshift-config.etc-pki-entitlement", namespace: "subscription-sources" },
            },
        });
        expect(manifestNamed(result, "SharedConfigMap", "cluster-yum-repo-satellite-repos-14d80ad7")).toEqual({
            apiVersion: "sharedresource.openshift.io/v1alpha1",
            kind: "SharedConfigMap",
            metadata: { labels: PLATFORM_LABELS, name: "cluster-yum-repo-satellite-repos-14d80ad7" },
            spec: {
                configMapRef: { name: "openshift-config.satellite-repos", namespace: "subscription-sources" },
                description:
                    "Yum repository definitions of ClusterBundle cluster: a copy of ConfigMap openshift-config/satellite-repos (subscription injection)",
            },
        });
        const owned = result.manifests.filter((m) => (m.object.metadata as { ownerReferences?: unknown }).ownerReferences !== undefined);
        expect(owned).toEqual([]);
    });

    test("GIVEN the ClusterBundle WHEN rendered THEN its ClusterRole grants get/list/watch on it and use on exactly its shares, aggregated to admin and edit", () => {
        expect(manifestNamed(result, "ClusterRole", "cluster-subscription-bundle")).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: {
                labels: {
                    ...PLATFORM_LABELS,
                    "rbac.authorization.k8s.io/aggregate-to-admin": "true",
                    "rbac.authorization.k8s.io/aggregate-to-edit": "true",
                },
                name: "cluster-subscription-bundle",
            },
            rules: [
                {
                    apiGroups: ["subscription.openshift.io"],
                    resourceNames: ["cluster"],
                    resources: ["clusterbundles"],
                    verbs: ["get", "list", "watch"],
                },
                {
                    apiGroups: ["sharedresource.openshift.io"],
                    resourceNames: ["cluster-entitlement-etc-pki-entitlement-d0e25df8"],
                    resources: ["sharedsecrets"],
                    verbs: ["use"],
                },
                {
                    apiGroups: ["sharedresource.openshift.io"],
                    resourceNames: ["cluster-yum-repo-satellite-repos-14d80ad7"],
                    resources: ["sharedconfigmaps"],
                    verbs: ["use"],
                },
            ],
        });
    });

    test("GIVEN the ClusterBundle WHEN rendered THEN one Role in the source namespace lets the driver's service account (Builds for OpenShift's by default) get exactly the copies and list and watch their kinds there (its refresh informers), and nothing in the originals' namespace", () => {
        const metadata = { name: "subscription-shared-resource-driver", namespace: "subscription-sources", labels: PLATFORM_LABELS };
        expect([
            ...manifestsNamed(result, "Role", "subscription-shared-resource-driver"),
            ...manifestsNamed(result, "RoleBinding", "subscription-shared-resource-driver"),
        ]).toEqual([
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "Role",
                metadata,
                rules: [
                    { apiGroups: [""], resources: ["secrets"], resourceNames: ["openshift-config.etc-pki-entitlement"], verbs: ["get"] },
                    { apiGroups: [""], resources: ["secrets"], verbs: ["list", "watch"] },
                    { apiGroups: [""], resources: ["configmaps"], resourceNames: ["openshift-config.satellite-repos"], verbs: ["get"] },
                    { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch"] },
                ],
            },
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "RoleBinding",
                metadata,
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "subscription-shared-resource-driver" },
                subjects: [{ kind: "ServiceAccount", name: "csi-driver-shared-resource", namespace: "openshift-builds" }],
            },
        ]);
        const inOriginals = result.manifests.filter(
            (m) =>
                ["Role", "RoleBinding"].includes(String(m.object.kind)) &&
                (m.object.metadata as { namespace?: string }).namespace === "openshift-config",
        );
        expect(inOriginals.map((m) => `${m.object.kind} ${(m.object.metadata as { name: string }).name}`)).toEqual([
            "Role subscription-source-sync",
            "RoleBinding subscription-source-sync",
        ]);
    });

    test("GIVEN the example WHEN rendered THEN nothing is created before the reads, bundles wait for their CRD and the policy admitting them, shares for their reads", () => {
        const reads = result.reads
            .map((r) => r.name)
            .filter((name) => name.startsWith("shared-resource-csi-driver-"))
            .sort();
        expect(reads).toHaveLength(3);
        const dependsOn = (type: string, name: string) => [...resourceNamed(result, type, name).options.dependsOn].sort();
        expect(
            dependsOn("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "clusterbundles.subscription.openshift.io"),
        ).toEqual(reads);
        expect(dependsOn("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", "bundles.subscription.openshift.io")).toEqual(
            reads,
        );
        expect(dependsOn("kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle", "clusterbundle-cluster")).toEqual(
            [
                "clusterbundles.subscription.openshift.io",
                "subscription-injection-managed-clusterbundles",
                "subscription-injection-managed-clusterbundles",
                ...reads,
            ].sort(),
        );
        expect(
            dependsOn(
                "kubernetes:sharedresource.openshift.io/v1alpha1:SharedSecret",
                "share-cluster-entitlement-etc-pki-entitlement-d0e25df8",
            ),
        ).toEqual(reads);
        expect(dependsOn("kubernetes:subscription.openshift.io/v1alpha1:Bundle", "bundle-team-a/subscription")).toEqual([
            "bundles.subscription.openshift.io",
        ]);
    });

    test("GIVEN the example WHEN rendered THEN namespace admins and editors may manage Bundles and viewers read them, through roles aggregated into admin, edit and view", () => {
        const aggregated = (role: string) => ({ ...PLATFORM_LABELS, [`rbac.authorization.k8s.io/aggregate-to-${role}`]: "true" });
        expect(manifestNamed(result, "ClusterRole", "subscription-bundles-edit")).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "subscription-bundles-edit", labels: { ...aggregated("admin"), ...aggregated("edit") } },
            rules: [
                {
                    apiGroups: ["subscription.openshift.io"],
                    resources: ["bundles"],
                    verbs: ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"],
                },
            ],
        });
        expect(manifestNamed(result, "ClusterRole", "subscription-bundles-view")).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "subscription-bundles-view", labels: aggregated("view") },
            rules: [{ apiGroups: ["subscription.openshift.io"], resources: ["bundles"], verbs: ["get", "list", "watch"] }],
        });
    });

    test("GIVEN OpenShift WHEN rendered THEN both console samples are declared, the ClusterBundle's sending admins to the config key", () => {
        expect(resourcesOfType(result, "kubernetes:console.openshift.io/v1:ConsoleYAMLSample").map((r) => r.name)).toEqual([
            "subscription-cluster-bundle-example",
            "subscription-namespaced-bundle-example",
        ]);
        const sample = manifestNamed(result, "ConsoleYAMLSample", "subscription-cluster-bundle-example") as {
            spec: { description: string };
        };
        expect(sample.spec.description).toContain(
            "ClusterBundles are declared in the cluster-platform stack's config (`cluster-platform:subscriptions.clusterBundles`), which also creates their shares, ClusterRole and driver access; creating one here is refused.",
        );
    });

    test("GIVEN the entitlement Secret in the cluster WHEN rendered THEN it is never read (its existence is checked by metadata only)", () => {
        expect(result.resources.filter((r) => r.type === "kubernetes:core/v1:Secret" && r.read !== undefined)).toEqual([]);
    });
});

describe("subscription bundles: pre-flight failures and modes", () => {
    test("GIVEN the cluster lacks the entitlement Secret WHEN rendered THEN it fails naming bundle, kind, namespace and name", async () => {
        const withoutSecret = clusterObjects().filter((o) => o.kind !== "Secret");
        const result = await renderFile(EXAMPLE, { cluster: new ClusterState(withoutSecret) });
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
            formatReport([
                {
                    path: "subscriptions.clusterBundles[0].entitlements[0]",
                    message:
                        'Secret "openshift-config/etc-pki-entitlement" does not exist in the cluster: ClusterBundle "cluster" shares it (SharedSecret cluster-entitlement-etc-pki-entitlement-d0e25df8); create it first',
                },
            ]),
        ]);
        expect(result.resources).toEqual([]);
    });

    test("GIVEN the driver was removed but its CRDs remain WHEN rendered THEN it fails on the CSIDriver read, whose name says how to enable the driver per OpenShift version", async () => {
        const withoutDriver = clusterObjects().filter((o) => o.kind !== "CSIDriver");
        const result = await renderFile(EXAMPLE, { cluster: new ClusterState(withoutDriver) });
        expect(result.errors).toEqual([
            "kubernetes:storage.k8s.io/v1:CSIDriver (shared-resource-csi-driver-csi.sharedresource.openshift.io (OpenShift 4.18+: install the Builds for OpenShift operator; 4.10-4.17: featureSet TechPreviewNoUpgrade, irreversible)): Preview failed: resource 'csi.sharedresource.openshift.io' does not exist",
        ]);
    });

    test("GIVEN the cluster lacks the Shared Resource CSI driver WHEN rendered THEN it fails naming the CSIDriver and its CRDs", async () => {
        const withoutDriver = clusterObjects().filter(
            (o) =>
                !(o.kind === "CustomResourceDefinition" && o.metadata.name.endsWith(".sharedresource.openshift.io")) &&
                o.kind !== "CSIDriver",
        );
        const result = await renderFile(EXAMPLE, { cluster: new ClusterState(withoutDriver) });
        expect(result.errors).toEqual([
            `kubernetes:storage.k8s.io/v1:CSIDriver (${DRIVER_READ_NAME}): Preview failed: resource 'csi.sharedresource.openshift.io' does not exist`,
            "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition (shared-resource-csi-driver-sharedsecrets.sharedresource.openshift.io): Preview failed: resource 'sharedsecrets.sharedresource.openshift.io' does not exist",
            "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition (shared-resource-csi-driver-sharedconfigmaps.sharedresource.openshift.io): Preview failed: resource 'sharedconfigmaps.sharedresource.openshift.io' does not exist",
        ]);
    });

    const bundlesConfig = (cluster: Record<string, unknown>) => ({
        cluster,
        subscriptions: {
            enabled: true,
            // A given image: these tests are about bundles, not the image build (whose preview
            // warns when dist/webhook was never built).
            webhook: { image: `quay.io/example/subscription-webhook@sha256:${"5".repeat(64)}` },
            clusterBundles: [{ name: "cluster", entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }] }],
        },
    });

    test("GIVEN the provider renders YAML to a directory WHEN rendered THEN no read is made, one warning says what was skipped and one that the webhook's key is written in plaintext", async () => {
        const result = await renderConfig(bundlesConfig({ name: "c", platform: "openshift", renderYamlToDirectory: "out/yaml" }));
        expect(result.errors).toEqual([]);
        expect(result.reads).toEqual([]);
        expect(result.warnings).toEqual([
            "skipped the pre-flight reads of the Shared Resource CSI driver (CSIDriver csi.sharedresource.openshift.io, CRDs sharedsecrets.sharedresource.openshift.io): the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch",
            plaintextKeyWarning("subscription-injection/subscription-injection-webhook-tls"),
        ]);
        expect(result.manifests.map((m) => `${m.object.kind}/${(m.object.metadata as { name: string }).name}`)).toEqual(
            expect.arrayContaining([
                "ClusterBundle/cluster",
                "SharedSecret/cluster-entitlement-etc-pki-entitlement-d0e25df8",
                "ClusterRole/cluster-subscription-bundle",
            ]),
        );
    });

    test("GIVEN the provider renders YAML to a directory WHEN rendered THEN no manifest carries an ownerReference (its owner's uid cannot be known, and the API server rejects one without)", async () => {
        const result = await renderConfig(bundlesConfig({ name: "c", platform: "openshift", renderYamlToDirectory: "out/yaml" }));
        expect(result.errors).toEqual([]);
        const owning = result.manifests
            .filter((m) => (m.object.metadata as { ownerReferences?: unknown }).ownerReferences !== undefined)
            .map((m) => m.file);
        expect(owning).toEqual([]);
        expect(
            (manifestNamed(result, "SharedSecret", "cluster-entitlement-etc-pki-entitlement-d0e25df8").metadata as Record<string, unknown>)
                .labels,
        ).toEqual(PLATFORM_LABELS);
    });

    test("GIVEN plain Kubernetes WHEN rendered THEN no console samples are declared", async () => {
        const result = await renderConfig(bundlesConfig({ name: "c", platform: "kubernetes", kubeContext: "test" }));
        expect(result.errors).toEqual([]);
        expect(resourcesOfType(result, "kubernetes:console.openshift.io/v1:ConsoleYAMLSample")).toEqual([]);
    });
});
