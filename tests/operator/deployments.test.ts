import { deploymentFor, deploymentLabels, withCertificateMount, withEnv } from "../../components/operator/deployments";
import type { StrategyDeployment } from "../../components/operator/csv";

/** The serving certificate as the AdmissionWebhook contract mounts it: one Secret at OLM's two paths. */
const certificate = {
    volumes: [{ name: "webhook-cert", secret: { secretName: "widget-webhook-service-cert", items: [{ key: "tls.crt", path: "tls.crt" }, { key: "tls.key", path: "tls.key" }] } }],
    volumeMounts: [
        { name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true },
        { name: "webhook-cert", mountPath: "/apiserver.local.config/certificates", readOnly: true },
    ],
};

const strategy = (spec: Record<string, unknown>): StrategyDeployment =>
    ({
        name: "widget-webhook",
        label: { "app.kubernetes.io/name": "widget-webhook" },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "widget" } },
            template: { metadata: { labels: { app: "widget" }, annotations: { "kubectl.kubernetes.io/default-container": "webhook" } }, spec },
        },
    }) as unknown as StrategyDeployment;

describe("a CSV deployment as OLM deploys it", () => {
    test("GIVEN a CSV deployment WHEN derived THEN the pod template carries the CSV's annotations, OLM's target and operator namespaces, and one old ReplicaSet is kept", () => {
        const object = deploymentFor({
            operator: "widgets",
            namespace: "widget-operator",
            deployment: strategy({ containers: [{ name: "webhook", image: "example.io/w:1" }] }),
            csvAnnotations: { capabilities: "Basic Install", "kubectl.kubernetes.io/default-container": "from-csv" },
            watchNamespaces: ["team-a", "team-b"],
            overrideWatchNamespace: false,
        });
        expect(object).toEqual({
            apiVersion: "apps/v1",
            kind: "Deployment",
            metadata: {
                name: "widget-webhook",
                namespace: "widget-operator",
                labels: {
                    "app.kubernetes.io/name": "widget-webhook",
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "operator",
                    "cluster-platform.io/operator": "widgets",
                },
            },
            spec: {
                replicas: 2,
                revisionHistoryLimit: 1,
                selector: { matchLabels: { app: "widget" } },
                template: {
                    metadata: {
                        labels: { app: "widget" },
                        annotations: {
                            capabilities: "Basic Install",
                            "kubectl.kubernetes.io/default-container": "webhook",
                            "olm.operatorNamespace": "widget-operator",
                            "olm.targetNamespaces": "team-a,team-b",
                        },
                    },
                    spec: { containers: [{ name: "webhook", image: "example.io/w:1" }] },
                },
            },
        });
    });

    test("GIVEN a bundle that mounts its own certificate Secret at OLM's path (opentelemetry) WHEN the serving certificate is mounted THEN the bundle's volume and mount are replaced", () => {
        const spec = withCertificateMount(
            {
                containers: [{ name: "manager", volumeMounts: [{ name: "cert", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true }] }],
                volumes: [{ name: "cert", secret: { secretName: "opentelemetry-operator-controller-manager-service-cert" } }],
            },
            certificate,
        );
        expect(spec).toEqual({ containers: [{ name: "manager", volumeMounts: certificate.volumeMounts }], volumes: certificate.volumes });
    });

    test("GIVEN a volume at OLM's path that another mount also uses WHEN the certificate is mounted THEN that volume stays for the other mount", () => {
        const spec = withCertificateMount(
            {
                containers: [
                    { name: "manager", volumeMounts: [{ name: "shared", mountPath: "/tmp/k8s-webhook-server/serving-certs" }] },
                    { name: "sidecar", volumeMounts: [{ name: "shared", mountPath: "/etc/tls" }] },
                ],
                volumes: [{ name: "shared", secret: { secretName: "s" } }, { name: "data", emptyDir: {} }],
            },
            certificate,
        );
        expect(spec.volumes).toEqual([{ name: "shared", secret: { secretName: "s" } }, { name: "data", emptyDir: {} }, ...certificate.volumes]);
        expect(spec.containers.map((c) => c.volumeMounts)).toEqual([certificate.volumeMounts, [{ name: "shared", mountPath: "/etc/tls" }, ...certificate.volumeMounts]]);
    });

    test("GIVEN promotion disabled WHEN derived THEN every container's WATCH_NAMESPACE is exactly the RBAC namespaces, replacing the CSV's downward-API value", () => {
        const object = deploymentFor({
            operator: "widgets",
            namespace: "widget-operator",
            deployment: strategy({
                containers: [
                    { name: "manager", env: [{ name: "A", value: "1" }, { name: "WATCH_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } }] },
                    { name: "kube-rbac-proxy" },
                ],
            }),
            csvAnnotations: {},
            watchNamespaces: ["team-a", "team-b"],
            overrideWatchNamespace: true,
        });
        expect(object.spec.template.spec.containers.map((c) => c.env)).toEqual([
            [{ name: "A", value: "1" }, { name: "WATCH_NAMESPACE", value: "team-a,team-b" }],
            [{ name: "WATCH_NAMESPACE", value: "team-a,team-b" }],
        ]);
        expect(object.spec.template.metadata.annotations["olm.targetNamespaces"]).toBe("team-a,team-b");
    });

    test("GIVEN an AllNamespaces install WHEN derived THEN olm.targetNamespaces is empty and WATCH_NAMESPACE is left to the CSV", () => {
        const env = [{ name: "WATCH_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } }];
        const object = deploymentFor({
            operator: "widgets",
            namespace: "widget-operator",
            deployment: strategy({ containers: [{ name: "manager", env }] }),
            csvAnnotations: {},
            watchNamespaces: [],
            overrideWatchNamespace: false,
        });
        expect(object.spec.template.metadata.annotations["olm.targetNamespaces"]).toBe("");
        expect(object.spec.template.spec.containers[0].env).toEqual(env);
    });

    test("GIVEN a bundle's own managed-by and part-of labels (kubevirt) WHEN derived THEN the stack manages the object but the product's part-of stays", () => {
        expect(deploymentLabels("kubevirt", { "app.kubernetes.io/managed-by": "olm", "app.kubernetes.io/part-of": "hyperconverged-cluster", name: "hco" })).toEqual({
            "app.kubernetes.io/managed-by": "cluster-platform",
            "app.kubernetes.io/part-of": "hyperconverged-cluster",
            "cluster-platform.io/capability": "operator",
            "cluster-platform.io/operator": "kubevirt",
            name: "hco",
        });
    });

    test("GIVEN an env var set twice WHEN set again THEN the last value wins and the order is kept", () => {
        const spec = withEnv(withEnv({ containers: [{ name: "c", env: [{ name: "X", value: "0" }] }] }, "Y", "1"), "X", "2");
        expect(spec.containers[0].env).toEqual([{ name: "X", value: "2" }, { name: "Y", value: "1" }]);
    });
});
