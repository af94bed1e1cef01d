import { webhookCertificateVolumes } from "../../components/admission-webhook/build";
import {
    DeploymentInput,
    deploymentFor,
    deploymentLabels,
    mayCarryCredentials,
    proxyEnvOf,
    withCertificateMount,
    withEnv,
} from "../../components/operator/deployments";
import type { StrategyDeployment } from "../../components/operator/csv";
import { createHash } from "node:crypto";

const sha256Prefix = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** OLM's two volumes of the serving Secret (certresources.go, AddDefaultCertVolumeAndVolumeMounts), written out. */
const SECRET = "widget-webhook-service-cert";
const apiserviceVolume = {
    name: "apiservice-cert",
    secret: {
        secretName: SECRET,
        items: [
            { key: "tls.crt", path: "apiserver.crt" },
            { key: "tls.key", path: "apiserver.key" },
        ],
    },
};
const webhookVolume = {
    name: "webhook-cert",
    secret: {
        secretName: SECRET,
        items: [
            { key: "tls.crt", path: "tls.crt" },
            { key: "tls.key", path: "tls.key" },
        ],
    },
};
const apiserviceMount = { name: "apiservice-cert", mountPath: "/apiserver.local.config/certificates" };
const webhookMount = { name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs" };
const certificate = { volumes: [apiserviceVolume, webhookVolume], volumeMounts: [apiserviceMount, webhookMount] };
const CSV_NAME = "widget-operator.v1.0.0";
const conditionName = { name: "OPERATOR_CONDITION_NAME", value: CSV_NAME };

const strategy = (spec: Record<string, unknown>): StrategyDeployment =>
    ({
        name: "widget-webhook",
        label: { "app.kubernetes.io/name": "widget-webhook" },
        spec: {
            replicas: 2,
            selector: { matchLabels: { app: "widget" } },
            template: {
                metadata: { labels: { app: "widget" }, annotations: { "kubectl.kubernetes.io/default-container": "webhook" } },
                spec,
            },
        },
    }) as unknown as StrategyDeployment;

/** An AllNamespaces deployment of `containers`, with `input` overriding the defaults. */
const derive = (containers: Record<string, unknown>[], input: Partial<DeploymentInput> = {}) =>
    deploymentFor({
        operator: "widgets",
        csvName: CSV_NAME,
        namespace: "widget-operator",
        deployment: strategy({ containers }),
        csvAnnotations: {},
        watchNamespaces: [],
        overrideWatchNamespace: false,
        ...input,
    });

describe("a CSV deployment as OLM deploys it", () => {
    test("GIVEN a CSV deployment WHEN derived THEN the pod template carries the CSV's annotations (over the template's, as OLM merges them), OLM's target and operator namespaces, OPERATOR_CONDITION_NAME, and one old ReplicaSet is kept", () => {
        const object = deploymentFor({
            operator: "widgets",
            csvName: CSV_NAME,
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
                // The CSV's selector, untouched (immutable once applied); the stack's label is on the pods only.
                selector: { matchLabels: { app: "widget" } },
                template: {
                    metadata: {
                        labels: { app: "widget", "cluster-platform.io/deployment": "widget-webhook" },
                        annotations: {
                            capabilities: "Basic Install",
                            "kubectl.kubernetes.io/default-container": "from-csv",
                            "olm.operatorNamespace": "widget-operator",
                            "olm.targetNamespaces": "team-a,team-b",
                            // sha256 of the Deployment's labels as sorted-key JSON (shared/workload-metadata.ts).
                            "cluster-platform.io/workload-labels": sha256Prefix(
                                '{"app.kubernetes.io/managed-by":"cluster-platform","app.kubernetes.io/name":"widget-webhook",' +
                                    '"app.kubernetes.io/part-of":"cluster-platform","cluster-platform.io/capability":"operator",' +
                                    '"cluster-platform.io/operator":"widgets"}',
                            ),
                        },
                    },
                    spec: { containers: [{ name: "webhook", image: "example.io/w:1", env: [conditionName] }] },
                },
            },
        });
    });

    test("GIVEN one CSV deployment installed under two operator names WHEN derived THEN the pod templates differ, so a rename moves the Deployment's generation and the provider's await cannot take a replayed pre-rename object for the result", () => {
        const input = {
            csvName: CSV_NAME,
            namespace: "widget-operator",
            deployment: strategy({ containers: [{ name: "webhook", image: "example.io/w:1" }] }),
            csvAnnotations: {},
            watchNamespaces: [],
            overrideWatchNamespace: false,
        };
        const widgets = deploymentFor({ ...input, operator: "widgets" });
        const gadgets = deploymentFor({ ...input, operator: "gadgets" });
        expect(widgets.spec.template.metadata.annotations).not.toEqual(gadgets.spec.template.metadata.annotations);
        expect({ ...widgets.spec.template.spec }).toEqual({ ...gadgets.spec.template.spec });
    });

    test("GIVEN the serving certificate WHEN built THEN it is OLM's two volumes of one Secret, keys renamed for the APIService layout", () => {
        expect(webhookCertificateVolumes(SECRET)).toEqual(certificate);
    });

    test("GIVEN a pod with no volumes WHEN the certificate is mounted THEN every container gets both mounts, init containers none", () => {
        const spec = withCertificateMount(
            {
                containers: [{ name: "a" }, { name: "b", volumeMounts: [{ name: "tmp", mountPath: "/tmp" }] }],
                initContainers: [{ name: "init" }],
            },
            certificate,
        );
        expect(spec).toEqual({
            containers: [
                { name: "a", volumeMounts: [apiserviceMount, webhookMount] },
                { name: "b", volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, apiserviceMount, webhookMount] },
            ],
            initContainers: [{ name: "init" }],
            volumes: [apiserviceVolume, webhookVolume],
        });
    });

    test("GIVEN a bundle that mounts its own certificate Secret at OLM's webhook path (opentelemetry) WHEN mounted THEN that mount is replaced in place and the unused volume stays, as OLM leaves it", () => {
        const spec = withCertificateMount(
            {
                containers: [
                    {
                        name: "manager",
                        volumeMounts: [{ name: "cert", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true }],
                    },
                ],
                volumes: [{ name: "cert", secret: { secretName: "opentelemetry-operator-controller-manager-service-cert" } }],
            },
            certificate,
        );
        expect(spec).toEqual({
            containers: [{ name: "manager", volumeMounts: [webhookMount, apiserviceMount] }],
            volumes: [
                { name: "cert", secret: { secretName: "opentelemetry-operator-controller-manager-service-cert" } },
                apiserviceVolume,
                webhookVolume,
            ],
        });
    });

    test("GIVEN a bundle whose volume is named apiservice-cert and mounted at the webhook path (kubevirt's hostpath provisioner) WHEN mounted THEN the volume is OLM's and the path is taken over by webhook-cert", () => {
        const spec = withCertificateMount(
            {
                containers: [
                    { name: "op", volumeMounts: [{ name: "apiservice-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs" }] },
                ],
                volumes: [{ name: "apiservice-cert", secret: { secretName: "own", items: [{ key: "tls.crt", path: "tls.crt" }] } }],
            },
            certificate,
        );
        expect(spec).toEqual({ containers: [{ name: "op", volumeMounts: [webhookMount] }], volumes: [apiserviceVolume, webhookVolume] });
    });

    test("GIVEN a container that already mounts webhook-cert elsewhere WHEN mounted THEN OLM keeps that mount as it is", () => {
        const spec = withCertificateMount(
            { containers: [{ name: "c", volumeMounts: [{ name: "webhook-cert", mountPath: "/etc/tls" }] }] },
            certificate,
        );
        expect(spec.containers[0].volumeMounts).toEqual([{ name: "webhook-cert", mountPath: "/etc/tls" }, apiserviceMount]);
    });

    test("GIVEN promotion disabled WHEN derived THEN every container's WATCH_NAMESPACE is exactly the RBAC namespaces, replacing the CSV's downward-API value", () => {
        const object = derive(
            [
                {
                    name: "manager",
                    env: [
                        { name: "A", value: "1" },
                        { name: "WATCH_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } },
                    ],
                },
                { name: "kube-rbac-proxy" },
            ],
            { watchNamespaces: ["team-a", "team-b"], overrideWatchNamespace: true },
        );
        expect(object.spec.template.spec.containers.map((c) => c.env)).toEqual([
            [{ name: "A", value: "1" }, { name: "WATCH_NAMESPACE", value: "team-a,team-b" }, conditionName],
            [conditionName, { name: "WATCH_NAMESPACE", value: "team-a,team-b" }],
        ]);
        expect(object.spec.template.metadata.annotations["olm.targetNamespaces"]).toBe("team-a,team-b");
    });

    test("GIVEN an AllNamespaces install WHEN derived THEN olm.targetNamespaces is empty and WATCH_NAMESPACE is left to the CSV", () => {
        const env = [{ name: "WATCH_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.annotations['olm.targetNamespaces']" } } }];
        const object = derive([{ name: "manager", env }]);
        expect(object.spec.template.metadata.annotations["olm.targetNamespaces"]).toBe("");
        expect(object.spec.template.spec.containers[0].env).toEqual([...env, conditionName]);
    });

    test("GIVEN a bundle's own managed-by and part-of labels (kubevirt) WHEN derived THEN the stack manages the object but the product's part-of stays", () => {
        expect(
            deploymentLabels("kubevirt", {
                "app.kubernetes.io/managed-by": "olm",
                "app.kubernetes.io/part-of": "hyperconverged-cluster",
                name: "hco",
            }),
        ).toEqual({
            "app.kubernetes.io/managed-by": "cluster-platform",
            "app.kubernetes.io/part-of": "hyperconverged-cluster",
            "cluster-platform.io/capability": "operator",
            "cluster-platform.io/operator": "kubevirt",
            name: "hco",
        });
    });

    test("GIVEN a cluster proxy WHEN derived THEN it is merged into each container as OLM's mergeEnvVars merges it (a container's own HTTPS_PROXY takes the cluster's value in its place, the rest follow), before OPERATOR_CONDITION_NAME, which replaces a CSV's own value in place", () => {
        const proxyEnv = proxyEnvOf({ httpProxy: "http://proxy.corp:3128", httpsProxy: "http://proxy.corp:3128", noProxy: "" });
        expect(proxyEnv).toEqual([
            { name: "HTTP_PROXY", value: "http://proxy.corp:3128" },
            { name: "HTTPS_PROXY", value: "http://proxy.corp:3128" },
        ]);
        const object = derive(
            [
                {
                    name: "manager",
                    env: [
                        { name: "OPERATOR_CONDITION_NAME", value: "stale" },
                        { name: "HTTPS_PROXY", value: "http://own:8080" },
                    ],
                },
                { name: "sidecar" },
            ],
            { proxyEnv },
        );
        expect(object.spec.template.spec.containers.map((c) => c.env)).toEqual([
            [
                conditionName,
                { name: "HTTPS_PROXY", value: "http://proxy.corp:3128" },
                { name: "HTTP_PROXY", value: "http://proxy.corp:3128" },
            ],
            [...proxyEnv, conditionName],
        ]);
    });

    test("GIVEN a container's own proxy variable and a Subscription config env naming a proxy variable WHEN derived THEN the config's value wins and the cluster's proxy is left out, as OLM's proxy.IsOverridden decides", () => {
        const proxyEnv = proxyEnvOf({ httpProxy: "http://proxy.corp:3128", noProxy: ".svc" });
        const object = derive([{ name: "manager", env: [{ name: "HTTP_PROXY", value: "http://own:8080" }] }], {
            proxyEnv,
            overrides: { env: [{ name: "NO_PROXY", value: ".local" }] },
        });
        expect(object.spec.template.spec.containers[0].env).toEqual([
            { name: "HTTP_PROXY", value: "http://own:8080" },
            { name: "NO_PROXY", value: ".local" },
            conditionName,
        ]);
    });

    test.each([
        ["http://user:password@proxy.corp:3128", true],
        ["user:password@proxy.corp:3128", true],
        ["https://token@proxy.corp", true],
        ["http://proxy.corp:3128", false],
        [".cluster.local,.svc,10.0.0.0/16", false],
    ])("GIVEN the proxy value %s WHEN judged THEN it may carry credentials: %s", (value, expected) => {
        expect(mayCarryCredentials(value)).toBe(expected);
    });

    test("GIVEN a Proxy without status WHEN read THEN no variable is injected", () => {
        expect(proxyEnvOf(undefined)).toEqual([]);
        expect(proxyEnvOf({})).toEqual([]);
    });

    test("GIVEN an env var set twice WHEN set again THEN the last value wins and the order is kept", () => {
        const spec = withEnv(withEnv({ containers: [{ name: "c", env: [{ name: "X", value: "0" }] }] }, "Y", "1"), "X", "2");
        expect(spec.containers[0].env).toEqual([
            { name: "X", value: "2" },
            { name: "Y", value: "1" },
        ]);
    });
});
