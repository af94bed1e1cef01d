/**
 * The objects of a bundle folder other than the CSV and its CRDs, installed as OLM's ExecutePlan
 * installs them (operator-lifecycle-manager pkg/controller/operators/catalog/operator.go, read for
 * these expectations: the kind decides the type, namespaced kinds go into the operator's
 * namespace, every object gets `olm.managed: "true"`, a cluster-scoped supported kind also OLM's
 * owner labels; supportedresources.go lists the other kinds; not_found.go words a missing API), and
 * the pre-flight's refusals: kinds OLM cannot install, objects OLM cannot decode, APIs the cluster
 * lacks, and Deployments whose pods reference an object nobody provides. Rendered under mocks:
 * OLM's catalog operator cannot run here, and `npm run test:catalog` plus the real tier's catalog
 * sample (tests/real/catalog.real.ts) cover the population.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { manifestNamed, MINIMAL, renderConfig, resourceNamed } from "../helpers/render";
import { temporaryDirectory } from "../helpers/temporary";

const NAMESPACE = "ops";

function bundleFolder(deploymentSpec: Record<string, unknown>, objects: Record<string, unknown>[] | Record<string, string>): string {
    const root = temporaryDirectory("bundle-objects-");
    const csv = {
        apiVersion: "operators.coreos.com/v1alpha1",
        kind: "ClusterServiceVersion",
        metadata: { name: "op.v1.0.0" },
        spec: {
            installModes: [{ type: "AllNamespaces", supported: true }],
            install: {
                strategy: "deployment",
                spec: {
                    permissions: [{ serviceAccountName: "op-sa", rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }] }],
                    deployments: [
                        {
                            name: "op-controller",
                            spec: {
                                selector: { matchLabels: { app: "op" } },
                                template: {
                                    metadata: { labels: { app: "op" } },
                                    spec: {
                                        serviceAccountName: "op-sa",
                                        containers: [{ name: "manager", image: "example.io/op:1" }],
                                        ...deploymentSpec,
                                    },
                                },
                            },
                        },
                    ],
                },
            },
        },
    };
    fs.writeFileSync(path.join(root, "op.clusterserviceversion.yaml"), stringify(csv));
    const files = Array.isArray(objects) ? Object.fromEntries(objects.map((o, i) => [`object-${i}.yaml`, stringify(o)])) : objects;
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(root, file), text);
    return path.join(root, "op.clusterserviceversion.yaml");
}

const cluster = [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: NAMESPACE } },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kube-root-ca.crt", namespace: NAMESPACE } },
];

const render = (csv: string, options: Parameters<typeof renderConfig>[1] = {}) =>
    renderConfig({ ...MINIMAL, operators: [{ name: "op", csv, namespace: NAMESPACE, targetNamespaces: [] }] }, { cluster, ...options });

const OBJECTS = [
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "manager-config" }, data: { "controller.yaml": "leaderElection: true\n" } },
    { apiVersion: "v1", kind: "Secret", metadata: { name: "op-token" }, type: "Opaque", data: { token: "c2VjcmV0LXRva2Vu" } },
    {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "op-metrics" },
        spec: { selector: { app: "op" }, ports: [{ port: 8443, name: "https" }] },
    },
    {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "op-external", annotations: { "example.io/team": "platform" } },
        spec: { type: "LoadBalancer", selector: { app: "op" }, ports: [{ port: 8083 }] },
    },
    {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "op-sa", annotations: { "example.io/team": "platform" } },
        imagePullSecrets: [{ name: "op-pull" }],
    },
    {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "op-pull" },
        type: "kubernetes.io/dockerconfigjson",
        data: { ".dockerconfigjson": "e30=" },
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: "op-leader" },
        rules: [{ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "update"] }],
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "op-leader" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "op-leader" },
        subjects: [{ kind: "ServiceAccount", name: "op-sa", namespace: NAMESPACE }],
    },
    {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "op-metrics-reader" },
        rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
    },
    {
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: "op-monitor" },
        spec: { selector: { matchLabels: { app: "op" } }, endpoints: [{ port: "https" }] },
    },
    { apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", metadata: { name: "op-critical" }, value: 1000 },
];

describe("bundle objects installed as OLM's ExecutePlan installs them", () => {
    test("GIVEN a bundle with core, RBAC and supported objects WHEN rendered THEN each is declared with OLM's labels, namespaced ones in the operator's namespace, and the Deployment waits for them", async () => {
        const csv = bundleFolder({ volumes: [{ name: "config", configMap: { name: "manager-config" } }] }, OBJECTS);
        const result = await render(csv);
        expect(result.errors).toEqual([]);
        expect(result.warnings.filter((w) => w.includes("bundle"))).toEqual([]);
        const labels = (kind: string, name: string) =>
            (manifestNamed(result, kind, name).metadata as { labels: Record<string, string> }).labels;
        for (const [kind, name] of [
            ["ConfigMap", "manager-config"],
            ["Service", "op-metrics"],
            ["Role", "op-leader"],
            ["RoleBinding", "op-leader"],
            ["ServiceMonitor", "op-monitor"],
        ]) {
            expect({
                kind,
                namespace: (manifestNamed(result, kind, name).metadata as { namespace?: string }).namespace,
                managed: labels(kind, name)["olm.managed"],
            }).toEqual({ kind, namespace: NAMESPACE, managed: "true" });
        }
        // Cluster-scoped: no namespace; a supported kind also carries OLM's owner labels (ownerutil.AddOwnerLabels), a ClusterRole only olm.managed.
        expect(manifestNamed(result, "PriorityClass", "op-critical").metadata).toEqual({
            name: "op-critical",
            labels: expect.objectContaining({
                "olm.managed": "true",
                "olm.owner": "op.v1.0.0",
                "olm.owner.kind": "ClusterServiceVersion",
                "olm.owner.namespace": NAMESPACE,
            }),
        });
        expect(labels("ClusterRole", "op-metrics-reader")).not.toHaveProperty("olm.owner");
        expect(manifestNamed(result, "ClusterRole", "op-metrics-reader").rules).toEqual([
            { nonResourceURLs: ["/metrics"], verbs: ["get"] },
        ]);
        // Created as ExecutePlan creates it, without the provider's readiness await (a LoadBalancer Service
        // would wait for a cloud's address); the bundle's own annotations are kept beside it.
        expect(manifestNamed(result, "Service", "op-metrics").metadata).toEqual({
            name: "op-metrics",
            namespace: NAMESPACE,
            labels: expect.objectContaining({ "olm.managed": "true" }),
            annotations: { "pulumi.com/skipAwait": "true" },
        });
        expect(manifestNamed(result, "Service", "op-external").metadata).toMatchObject({
            annotations: { "example.io/team": "platform", "pulumi.com/skipAwait": "true" },
        });
        // The CSV's ServiceAccount is the bundle's object (OLM creates the bundle's first; its own step changes nothing).
        const serviceAccount = resourceNamed(result, "kubernetes:core/v1:ServiceAccount", "op-sa-op-sa");
        expect(serviceAccount.inputs).toMatchObject({
            metadata: { name: "op-sa", namespace: NAMESPACE, annotations: { "example.io/team": "platform" } },
            imagePullSecrets: [{ name: "op-pull" }],
        });
        expect(result.resources.filter((r) => r.type === "kubernetes:core/v1:ServiceAccount").map((r) => r.name)).toEqual(["op-sa-op-sa"]);
        // Bundle Secrets enter the state as Pulumi secrets only.
        expect(resourceNamed(result, "kubernetes:core/v1:Secret", "op-bundle-secret-op-token").inputs.data).toEqual("[secret]");
        expect(JSON.stringify(result)).not.toContain("c2VjcmV0LXRva2Vu");
        const deployment = resourceNamed(result, "kubernetes:apps/v1:Deployment", "op-deployment-op-controller");
        expect(deployment.options.dependsOn).toEqual(
            expect.arrayContaining([
                "op-bundle-configmap-manager-config",
                "op-bundle-secret-op-pull",
                "op-bundle-service-op-metrics",
                "op-bundle-role-op-leader",
            ]),
        );
    });

    test("GIVEN objects OLM cannot install or decode WHEN planned THEN every problem at once, each naming the bundle file, the field and the rule, before anything is registered", async () => {
        const csv = bundleFolder(
            {},
            {
                "a-deployment.yaml": stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "extra" }, spec: {} }),
                // YAML 1.1, as OLM's Go tooling reads it: `on` is a boolean, so the ConfigMap does not decode.
                "b-configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  debug: on\n",
                "c-secret.yaml": stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "bad" }, data: { key: "not base64!" } }),
                "d-service.yaml": stringify({
                    apiVersion: "ecs.services.k8s.aws/v1alpha1",
                    kind: "Service",
                    metadata: { name: "example" },
                    spec: {},
                }),
                "e-role.yaml": stringify({ apiVersion: "v1", kind: "Role", metadata: {} }),
            },
        );
        const result = await render(csv);
        expect(result.resources).toEqual([]);
        const lines = result.errors.join("\n");
        expect(lines).toContain(
            'bundle file "a-deployment.yaml" (Deployment "extra"): kind "Deployment" is not one OLM installs from a bundle: its InstallPlan fails on it (UnsupportedResource;',
        );
        expect(lines).toContain('bundle file "b-configmap.yaml" (ConfigMap "flags") data.debug: true is not a string');
        expect(lines).toContain('bundle file "c-secret.yaml" (Secret "bad") data.key: a value of 11 characters is not base64');
        expect(lines).toContain(
            'bundle file "d-service.yaml" (Service "example") spec.ports: is required: OLM creates every object of kind Service as a core Service (apiVersion "ecs.services.k8s.aws/v1alpha1" notwithstanding)',
        );
        expect(lines).toContain('bundle file "e-role.yaml" (Role "") metadata.name: is missing');
        expect(lines).not.toContain("not base64!");
    });

    test("GIVEN a Deployment whose pods read a ConfigMap and a Secret nobody provides WHEN rendered THEN refused naming the Deployment, the reference and the missing object; present in the cluster, optional or in a volume no container mounts (the kubelet skips it), accepted", async () => {
        const spec = {
            volumes: [
                { name: "config", configMap: { name: "manager-config" } },
                { name: "maybe", secret: { secretName: "extra", optional: true } },
                { name: "unmounted", configMap: { name: "never-read" } },
            ],
            containers: [
                {
                    name: "manager",
                    image: "example.io/op:1",
                    envFrom: [{ secretRef: { name: "op-credentials" } }],
                    volumeMounts: [
                        { name: "config", mountPath: "/config" },
                        { name: "maybe", mountPath: "/extra" },
                    ],
                },
            ],
        };
        const refused = await render(bundleFolder(spec, []));
        expect(refused.resources).toEqual([]);
        expect(refused.errors.join("\n")).toContain(
            `ConfigMap "${NAMESPACE}/manager-config" does not exist in the cluster: deployment "op-controller" of operator "op" needs it (`,
        );
        expect(refused.errors.join("\n")).toContain("spec.install.spec.deployments[0].spec.template.spec.volumes[0].configMap.name)");
        expect(refused.errors.join("\n")).toContain(`Secret "${NAMESPACE}/op-credentials" does not exist in the cluster`);
        expect(refused.errors.join("\n")).toContain("OLM would install the bundle all the same");
        expect(refused.errors.join("\n")).not.toContain("extra");
        expect(refused.errors.join("\n")).not.toContain("never-read");
        const present = await render(bundleFolder(spec, []), {
            cluster: [
                ...cluster,
                { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "manager-config", namespace: NAMESPACE } },
                { apiVersion: "v1", kind: "Secret", metadata: { name: "op-credentials", namespace: NAMESPACE } },
            ],
        });
        expect(present.errors).toEqual([]);
    });

    test("GIVEN a ServiceMonitor and a cluster that does not serve monitoring.coreos.com/v1 WHEN rendered THEN refused with OLM's InstallPlan message", async () => {
        const result = await render(
            bundleFolder(
                {},
                OBJECTS.filter((o) => o.kind === "ServiceMonitor"),
            ),
            { servedKinds: {} },
        );
        expect(result.resources).toEqual([]);
        expect(result.errors.join("\n")).toContain(
            'bundle file "object-0.yaml": api-server resource not found installing ServiceMonitor op-monitor: GroupVersionKind monitoring.coreos.com/v1, Kind=ServiceMonitor not found on the cluster (OLM\'s InstallPlan fails the same way',
        );
    });

    test('GIVEN a bundle Service whose targetPort is 0 or "" and a Secret and ConfigMap with empty maps WHEN rendered THEN each is declared as the API server stores it, so the next preview shows no change', async () => {
        // The stored forms are the API server's (the real tier's catalog sample: ndb-operator 1.10.0's
        // webhook Service and tagger 2.1.17's mirror-registry-config Secret showed in every preview
        // until declared this way; kubernetes pkg/apis/core/v1/defaults.go SetDefaults_Service).
        const csv = bundleFolder({}, [
            {
                apiVersion: "v1",
                kind: "Service",
                metadata: { name: "op-webhook" },
                spec: {
                    selector: { app: "op" },
                    ports: [
                        { name: "a", port: 9443, targetPort: 0 },
                        { name: "b", port: 8443, targetPort: "" },
                        { name: "c", port: 8080, targetPort: "http" },
                        { name: "d", port: 8081 },
                    ],
                },
            },
            { apiVersion: "v1", kind: "Secret", metadata: { name: "op-empty" }, data: {}, stringData: {} },
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "op-empty" }, data: null, binaryData: {} },
            // OLM decodes by kind into the core type, whatever the group (ecr-secret-operator 0.6.0 ships these).
            { apiVersion: "ecr.example.com/v1alpha1", kind: "Secret", metadata: { name: "op-odd" }, type: "Opaque", spec: { region: "x" } },
            { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "op-none" }, rules: [] },
        ]);
        const result = await render(csv);
        expect(result.errors).toEqual([]);
        expect((manifestNamed(result, "Service", "op-webhook").spec as { ports: unknown[] }).ports).toEqual([
            { name: "a", port: 9443, targetPort: 9443 },
            { name: "b", port: 8443, targetPort: 8443 },
            { name: "c", port: 8080, targetPort: "http" },
            { name: "d", port: 8081 },
        ]);
        expect(Object.keys(manifestNamed(result, "Secret", "op-empty")).sort()).toEqual(["apiVersion", "kind", "metadata"]);
        expect(Object.keys(manifestNamed(result, "ConfigMap", "op-empty")).sort()).toEqual(["apiVersion", "kind", "metadata"]);
        expect(Object.keys(manifestNamed(result, "Secret", "op-odd")).sort()).toEqual(["apiVersion", "kind", "metadata", "type"]);
        expect(manifestNamed(result, "Secret", "op-odd").apiVersion).toBe("v1");
        expect(Object.keys(manifestNamed(result, "ClusterRole", "op-none")).sort()).toEqual(["apiVersion", "kind", "metadata"]);
    });

    test("GIVEN a bundle file with a repeated key and a file Go cannot decode WHEN rendered THEN the last key wins, and the file is left out with a warning, as opm does", async () => {
        const csv = bundleFolder(
            {},
            {
                "a-configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  name: settings\ndata:\n  mode: 'fast'\n",
                "b-notes.md": "Notes: [unclosed\n",
            },
        );
        const result = await render(csv);
        expect(result.errors).toEqual([]);
        expect(manifestNamed(result, "ConfigMap", "settings").data).toEqual({ mode: "fast" });
        expect(result.warnings.join("\n")).toContain('"b-notes.md": not a Kubernetes object as OLM\'s Go tooling decodes it');
    });
});
