/**
 * What OLM creates around an operator besides its Deployments, checked against OLM's own names and
 * values (operator-framework/operator-lifecycle-manager): the per-Service RBAC of a serving
 * certificate (`pkg/controller/install/certresources.go`), owned APIServices
 * (`pkg/controller/install/apiservice.go`, `pkg/controller/operators/olm/requirements.go`), and the
 * runtime environment (`pkg/controller/install/deployment.go`, `pkg/lib/proxy/`,
 * `pkg/controller/operators/operatorconditiongenerator_controller.go`).
 */
import { Capture } from "../helpers/capture";
import { renderConfig, resourceNamed } from "../helpers/render";
import {
    CSV_DIR,
    CSV_FILES,
    KubeObject,
    objectNamed,
    objectsOf,
    OPERATOR_CONDITION_CRD,
    readCsv,
    renderOperators,
    Yaml,
} from "../helpers/operators";

const PACKAGESERVER = "packageserver-0.16.1.clusterserviceversion.yaml";
const install = (file: string, extra: Record<string, unknown> = {}) => {
    const csv = readCsv(file);
    const all = (csv.spec.installModes as Yaml[]).some((m) => m.type === "AllNamespaces" && m.supported);
    return { name: "op", csv: `${CSV_DIR}/${file}`, namespace: "ops", targetNamespaces: all ? [] : ["ops"], ...extra };
};
const generatedBy = (o: KubeObject) => o.metadata.labels?.["cluster-platform.io/generated-by"];

describe("OLM's RBAC for every Service it fronts a deployment with", () => {
    const served = CSV_FILES.filter((file) => {
        const csv = readCsv(file);
        return (csv.spec.webhookdefinitions ?? []).length + (csv.spec.apiservicedefinitions?.owned ?? []).length > 0;
    });

    test.each(served)(
        "GIVEN %s WHEN rendered THEN each served deployment's ServiceAccount may read its serving Secret, delegate auth and read the client CA, under OLM's names",
        async (file) => {
            const csv = readCsv(file);
            const result = await renderOperators([install(file)]);
            expect(result.errors).toEqual([]);
            const backends = [
                ...new Set(
                    [...(csv.spec.webhookdefinitions ?? []), ...(csv.spec.apiservicedefinitions?.owned ?? [])].map(
                        (d: Yaml) => d.deploymentName as string,
                    ),
                ),
            ];
            const expected = backends.flatMap((backend) => {
                const deployment = (csv.spec.install.spec.deployments as Yaml[]).find((d) => d.name === backend);
                const subjects = [
                    { kind: "ServiceAccount", name: deployment.spec.template.spec.serviceAccountName ?? "default", namespace: "ops" },
                ];
                const service = `${backend}-service`;
                const secret = `${service}-cert`;
                return [
                    {
                        kind: "Role",
                        metadata: { name: secret, namespace: "ops" },
                        rules: [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: [secret] }],
                    },
                    {
                        kind: "RoleBinding",
                        metadata: { name: secret, namespace: "ops" },
                        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: secret },
                        subjects,
                    },
                    {
                        kind: "ClusterRoleBinding",
                        metadata: { name: `${service}-system:auth-delegator` },
                        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
                        subjects,
                    },
                    {
                        kind: "RoleBinding",
                        metadata: { name: `${service}-auth-reader`, namespace: "kube-system" },
                        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "extension-apiserver-authentication-reader" },
                        subjects,
                    },
                ];
            });
            const rendered = objectsOf(result, "Role", "RoleBinding", "ClusterRoleBinding")
                .filter((o) => generatedBy(o) === "olm.servingCertificate")
                .map(({ kind, metadata, rules, roleRef, subjects }) => ({
                    kind,
                    metadata: { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) },
                    ...(rules ? { rules } : {}),
                    ...(roleRef ? { roleRef, subjects } : {}),
                }));
            expect(rendered).toEqual(expect.arrayContaining(expected));
            expect(rendered).toHaveLength(expected.length);
        },
    );
});

describe("owned APIServices, as OLM installs them", () => {
    const apiService = (extra: Record<string, unknown>) => ({
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: {
            name: "v1.packages.operators.coreos.com",
            labels: {
                "app.kubernetes.io/managed-by": "cluster-platform",
                "app.kubernetes.io/part-of": "cluster-platform",
                "cluster-platform.io/capability": "operator",
                "cluster-platform.io/operator": "op",
            },
            annotations: { "pulumi.com/waitFor": "condition=Available", ...((extra.annotations as object) ?? {}) },
        },
        spec: {
            group: "packages.operators.coreos.com",
            version: "v1",
            groupPriorityMinimum: 2000,
            versionPriority: 15,
            service: { namespace: "ops", name: "packageserver-service", port: 5443 },
            ...((extra.spec as object) ?? {}),
        },
    });
    const TYPE = "kubernetes:apiregistration.k8s.io/v1:APIService";

    test("GIVEN packageserver in self-signed mode WHEN rendered THEN its APIService names the Service on port 5443 with the stack's CA bundle, after the Deployment is ready, and waits for Available", async () => {
        const result = await renderOperators([install(PACKAGESERVER)]);
        expect(result.errors).toEqual([]);
        expect(objectNamed(result, "APIService", "v1.packages.operators.coreos.com")).toEqual(
            apiService({ spec: { caBundle: "[unknown]" } }),
        );
        const resource = resourceNamed(result, TYPE, "op-packageserver-apiservice-v1.packages.operators.coreos.com");
        expect(resource.options.dependsOn).toEqual(
            expect.arrayContaining(["op-deployment-packageserver", "op-packageserver-service", "op-packageserver-serving-secret"]),
        );
        expect(resource.options.ignoreChanges).toEqual([]);
        expect(objectNamed(result, "Service", "packageserver-service", "ops").spec.ports).toEqual([
            { name: "https", protocol: "TCP", port: 5443, targetPort: 5443 },
        ]);
        // The aggregated API's own RBAC is the CSV's; the per-API roles use OLM's APIService names.
        expect(
            objectsOf(result, "ClusterRole")
                .map((r) => r.metadata.name)
                .filter((n) => n.startsWith("packagemanifests-")),
        ).toEqual(["packagemanifests-v1-admin", "packagemanifests-v1-edit", "packagemanifests-v1-view"]);
    });

    test("GIVEN packageserver in service-ca mode WHEN rendered THEN the APIService asks service-ca for its bundle and ignores the field service-ca writes", async () => {
        const result = await renderOperators([install(PACKAGESERVER)], { platform: "openshift", certificates: { mode: "service-ca" } });
        expect(objectNamed(result, "APIService", "v1.packages.operators.coreos.com")).toEqual(
            apiService({ annotations: { "service.beta.openshift.io/inject-cabundle": "true" } }),
        );
        expect(resourceNamed(result, TYPE, "op-packageserver-apiservice-v1.packages.operators.coreos.com").options.ignoreChanges).toEqual([
            "spec.caBundle",
        ]);
        expect(objectNamed(result, "Service", "packageserver-service", "ops").metadata.annotations).toEqual({
            "service.beta.openshift.io/serving-cert-secret-name": "packageserver-service-cert",
        });
    });

    test("GIVEN packageserver in cert-manager mode WHEN rendered THEN cainjector fills the APIService's bundle from the serving Certificate", async () => {
        const result = await renderOperators([install(PACKAGESERVER)], {
            certificates: { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "platform-ca" } },
        });
        expect(objectNamed(result, "APIService", "v1.packages.operators.coreos.com")).toEqual(
            apiService({ annotations: { "cert-manager.io/inject-ca-from": "ops/packageserver-service-cert" } }),
        );
        expect(resourceNamed(result, TYPE, "op-packageserver-apiservice-v1.packages.operators.coreos.com").options.ignoreChanges).toEqual([
            "spec.caBundle",
        ]);
    });
});

describe("OLM's environment for operator containers", () => {
    const proxy = {
        apiVersion: "config.openshift.io/v1",
        kind: "Proxy",
        metadata: { name: "cluster" },
        spec: { httpProxy: "http://unvalidated:1" },
        status: { httpProxy: "http://proxy.corp:3128", httpsProxy: "http://proxy.corp:3128", noProxy: ".cluster.local,.svc,10.0.0.0/16" },
    };
    const conditionCrd = OPERATOR_CONDITION_CRD;
    const openshift = (cluster: KubeObject[]) =>
        renderConfig(
            {
                cluster: { name: "test", platform: "openshift", kubeContext: "test" },
                operators: [install("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml")],
            },
            { cluster },
        );

    test("GIVEN OpenShift with a cluster proxy WHEN rendered THEN every container gets Proxy cluster's status as HTTP_PROXY/HTTPS_PROXY/NO_PROXY, then OPERATOR_CONDITION_NAME, and the OperatorCondition OLM would generate", async () => {
        const result = await openshift([proxy, conditionCrd] as unknown as KubeObject[]);
        expect(result.errors).toEqual([]);
        // The Proxy is read by the pre-flight, like every other live object it checks: no Pulumi read of it.
        expect(result.reads.map((r) => [r.id, r.outcome])).toEqual([["operatorconditions.operators.coreos.com", "found"]]);
        const csv = readCsv("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml");
        const container = objectNamed(result, "Deployment", "strimzi-cluster-operator", "ops").spec.template.spec.containers[0];
        expect(container.env.slice(-4)).toEqual([
            { name: "HTTP_PROXY", value: "http://proxy.corp:3128" },
            { name: "HTTPS_PROXY", value: "http://proxy.corp:3128" },
            { name: "NO_PROXY", value: ".cluster.local,.svc,10.0.0.0/16" },
            { name: "OPERATOR_CONDITION_NAME", value: csv.metadata.name },
        ]);
        expect(objectNamed(result, "OperatorCondition", csv.metadata.name, "ops")).toEqual({
            apiVersion: "operators.coreos.com/v2",
            kind: "OperatorCondition",
            metadata: {
                name: "strimzi-cluster-operator.v0.12.2",
                namespace: "ops",
                labels: expect.objectContaining({ "cluster-platform.io/operator": "op" }),
            },
            spec: { serviceAccounts: ["strimzi-cluster-operator"], deployments: ["strimzi-cluster-operator"] },
        });
        expect(
            resourceNamed(result, "kubernetes:operators.coreos.com/v2:OperatorCondition", "op-operator-condition").options.dependsOn,
        ).toEqual(["namespace-ops", "olm-operatorconditions.operators.coreos.com"]);
    });

    test("GIVEN a cluster proxy whose URLs carry credentials WHEN rendered THEN the engine gets those values as secrets (the mock monitor, without output values, marks the whole spec), merged in OLM's order, and no credential appears anywhere a preview shows", async () => {
        const credentialed = {
            ...proxy,
            status: {
                httpProxy: "http://user:s3cr3t-pw@proxy.corp:3128",
                httpsProxy: "https://token-9f2@proxy.corp:3129",
                noProxy: ".svc",
            },
        };
        const capture = new Capture();
        const result = await renderConfig(
            {
                cluster: { name: "test", platform: "openshift", kubeContext: "test" },
                operators: [install("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml")],
            },
            {
                cluster: [credentialed, conditionCrd] as unknown as KubeObject[],
                preview: false,
                computed: capture.producers("kubernetes:apps/v1:Deployment"),
            },
        );
        expect(result.errors).toEqual([]);
        expect(objectNamed(result, "Deployment", "strimzi-cluster-operator", "ops").spec).toBe("[secret]");
        const env = (capture.get("op-deployment-strimzi-cluster-operator") as Yaml).spec.template.spec.containers[0].env;
        expect(env.filter((e: Yaml) => /PROXY/.test(e.name))).toEqual([
            { name: "HTTP_PROXY", value: "http://user:s3cr3t-pw@proxy.corp:3128" },
            { name: "HTTPS_PROXY", value: "https://token-9f2@proxy.corp:3129" },
            { name: "NO_PROXY", value: ".svc" },
        ]);
        expect(JSON.stringify(result)).not.toMatch(/s3cr3t-pw|token-9f2/);
    });

    test("GIVEN OpenShift without a Proxy cluster, or one without status WHEN rendered THEN no proxy variable is injected and nothing is unknown, as OLM reads a missing Proxy as no proxy", async () => {
        for (const cluster of [[conditionCrd], [{ ...proxy, status: undefined }, conditionCrd]]) {
            const result = await openshift(cluster as unknown as KubeObject[]);
            expect(result.errors).toEqual([]);
            const env = objectNamed(result, "Deployment", "strimzi-cluster-operator", "ops").spec.template.spec.containers[0].env;
            expect(env.filter((e: Yaml) => /PROXY/.test(e.name))).toEqual([]);
            expect(JSON.stringify(env)).not.toContain("[unknown]");
        }
    });

    test("GIVEN OpenShift without the OperatorCondition API WHEN previewed THEN the preview fails on the pre-flight read, naming it", async () => {
        const result = await openshift([proxy] as unknown as KubeObject[]);
        expect(result.errors).toContain(
            "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition (olm-operatorconditions.operators.coreos.com): Preview failed: resource 'operatorconditions.operators.coreos.com' does not exist",
        );
    });

    test("GIVEN plain Kubernetes WHEN rendered THEN containers get OPERATOR_CONDITION_NAME, no proxy, no OperatorCondition, and the preview says why", async () => {
        const result = await renderOperators([install("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml")]);
        const env = objectNamed(result, "Deployment", "strimzi-cluster-operator", "ops").spec.template.spec.containers[0].env;
        expect(env.filter((e: Yaml) => /PROXY|OPERATOR_CONDITION/.test(e.name))).toEqual([
            { name: "OPERATOR_CONDITION_NAME", value: "strimzi-cluster-operator.v0.12.2" },
        ]);
        expect(objectsOf(result, "OperatorCondition")).toEqual([]);
        expect(result.warnings).toContain(
            "operators: no OperatorCondition (operators.coreos.com/v2) is declared on a kubernetes cluster, where OLM, which serves that API, may not run; operators still get OPERATOR_CONDITION_NAME, and operator-lib's condition calls fail until an OperatorCondition of that name exists",
        );
    });

    test("GIVEN OpenShift rendered to a directory WHEN rendered THEN nothing is read and the preview says the proxy and OperatorCondition are left out", async () => {
        const result = await renderOperators([install("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml")], {
            platform: "openshift",
            renderYaml: true,
        });
        expect(result.reads).toEqual([]);
        expect(objectsOf(result, "OperatorCondition")).toEqual([]);
        expect(result.warnings).toContain(
            "operators: skipped the reads of Proxy cluster and CRD operatorconditions.operators.coreos.com: the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch; the rendered Deployments carry no proxy variables and no OperatorCondition is rendered",
        );
    });
});
