import { resourceNamed, resourcesOfType } from "../helpers/render";
import {
    CSV_DIR,
    CSV_FILES,
    keyOf,
    NAMESPACED_CSVS,
    objectNamed,
    objectsOf,
    patchesOf,
    RBAC_KINDS,
    readCsv,
    renderOperators,
    SAMPLE_CSVS,
    scopableBundle,
    writeBundle,
    Yaml,
} from "../helpers/operators";

/** OLM's two volumes of a deployment's serving Secret (certresources.go, AddDefaultCertVolumeAndVolumeMounts). */
const certVolumes = (deployment: string) => [
    {
        name: "apiservice-cert",
        secret: {
            secretName: `${deployment}-service-cert`,
            items: [
                { key: "tls.crt", path: "apiserver.crt" },
                { key: "tls.key", path: "apiserver.key" },
            ],
        },
    },
    {
        name: "webhook-cert",
        secret: {
            secretName: `${deployment}-service-cert`,
            items: [
                { key: "tls.crt", path: "tls.crt" },
                { key: "tls.key", path: "tls.key" },
            ],
        },
    },
];
const apiserviceMount = { name: "apiservice-cert", mountPath: "/apiserver.local.config/certificates" };
const webhookMount = { name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs" };
const install = (file: string, targetNamespaces: string[] = []) => ({
    name: "op",
    csv: `${CSV_DIR}/${file}`,
    namespace: "ops",
    targetNamespaces,
});

describe("every real CSV installs", () => {
    test.each(CSV_FILES)(
        "GIVEN %s WHEN rendered THEN its Deployments, webhook Services, certificates, webhook configurations and RBAC are the CSV's",
        async (file) => {
            const csv = readCsv(file);
            const result = await renderOperators([install(file, NAMESPACED_CSVS.includes(file) ? ["ops"] : [])]);
            expect(result.errors).toEqual([]);
            expect(result.ok).toBe(true);

            const deployments: Yaml[] = csv.spec.install.spec.deployments;
            expect(objectsOf(result, "Deployment").map((d) => d.metadata.name)).toEqual(deployments.map((d) => d.name));

            const webhooks: Yaml[] = csv.spec.webhookdefinitions ?? [];
            const apiServices: Yaml[] = csv.spec.apiservicedefinitions?.owned ?? [];
            const served = [...webhooks, ...apiServices];
            const backends = [...new Set(served.map((w) => w.deploymentName as string))];
            expect(
                objectsOf(result, "Service")
                    .map((s) => s.metadata.name)
                    .sort(),
            ).toEqual(backends.map((b) => `${b}-service`).sort());
            for (const backend of backends) {
                const first = served.find((w) => w.deploymentName === backend);
                const port = first.containerPort ?? 443;
                const deployment = deployments.find((d) => d.name === backend);
                expect(objectNamed(result, "Service", `${backend}-service`, "ops").spec).toEqual({
                    // The CSV's matchLabels and the Deployment's own label (one Deployment's pods only).
                    selector: { ...deployment.spec.selector.matchLabels, "cluster-platform.io/deployment": backend },
                    ports: [{ name: "https", protocol: "TCP", port, targetPort: first.targetPort ?? port }],
                });
                // The Deployment's own selector stays the CSV's (immutable once applied): the label is on its pods.
                const rendered = objectNamed(result, "Deployment", backend, "ops");
                expect(rendered.spec.selector).toEqual(deployment.spec.selector);
                expect(rendered.spec.template.metadata.labels).toEqual({
                    ...deployment.spec.template.metadata?.labels,
                    ...deployment.spec.selector.matchLabels,
                    "cluster-platform.io/deployment": backend,
                });
                const pod = rendered.spec.template.spec;
                expect(pod.volumes).toEqual(expect.arrayContaining(certVolumes(backend)));
                for (const container of pod.containers) {
                    // OLM's webhook mount replaces whatever the bundle had at its path (kubevirt's hostpath provisioner had apiservice-cert there).
                    expect(container.volumeMounts).toContainEqual(webhookMount);
                }
            }
            expect(objectsOf(result, "APIService").map((a) => a.metadata.name)).toEqual(apiServices.map((a) => `${a.version}.${a.group}`));
            for (const [kind, type] of [
                ["ValidatingWebhookConfiguration", "ValidatingAdmissionWebhook"],
                ["MutatingWebhookConfiguration", "MutatingAdmissionWebhook"],
            ]) {
                const declared = objectsOf(result, kind).flatMap((c) => c.webhooks.map((w: Yaml) => w.name));
                expect(declared.sort()).toEqual(
                    webhooks
                        .filter((w) => w.type === type)
                        .map((w) => w.generateName)
                        .sort(),
                );
            }

            // Every permission's rules are a Role in the operator's namespace, every clusterPermission's a ClusterRole.
            const roles = objectsOf(result, "Role").filter((r) => r.metadata.namespace === "ops");
            for (const permission of csv.spec.install.spec.permissions ?? []) {
                expect(roles.map((r) => r.rules)).toContainEqual(permission.rules);
            }
            const clusterRoles = objectsOf(result, "ClusterRole").filter(
                (r) => r.metadata.labels?.["cluster-platform.io/generated-by"] === "csv.clusterPermissions",
            );
            expect(clusterRoles.map((r) => r.rules).sort()).toEqual(
                (csv.spec.install.spec.clusterPermissions ?? []).map((p: Yaml) => p.rules).sort(),
            );
        },
    );
});

describe("deployments in CSV order", () => {
    test("GIVEN kubevirt's 9 deployments WHEN rendered THEN each waits for the previous one and for the webhooks it serves, and webhooks wait for their deployment", async () => {
        const file = "kubevirt-hyperconverged-operator-1.14.0.clusterserviceversion.yaml";
        const csv = readCsv(file);
        const result = await renderOperators([install(file)]);
        const names: string[] = csv.spec.install.spec.deployments.map((d: Yaml) => d.name);
        const backends = new Set((csv.spec.webhookdefinitions as Yaml[]).map((w) => w.deploymentName));
        expect([...backends]).toEqual(["hco-webhook", "ssp-operator", "hostpath-provisioner-operator"]);

        const deployments = resourcesOfType(result, "kubernetes:apps/v1:Deployment");
        expect(deployments.map((d) => d.name)).toEqual(names.map((n) => `op-deployment-${n}`));
        names.forEach((name, i) => {
            const own = backends.has(name) ? [`op-${name}-serving-secret`] : [];
            if (i === 0) {
                expect(deployments[i].options.dependsOn).toEqual(expect.arrayContaining(["op-webhook-generation", ...own]));
                return;
            }
            const previous = names[i - 1];
            const previousWebhooks = backends.has(previous) ? [`op-${previous}-webhooks`] : [];
            // ...and, like everything in the namespace the stack creates, on that Namespace.
            expect(deployments[i].options.dependsOn).toEqual([`op-deployment-${previous}`, ...previousWebhooks, ...own, "namespace-ops"]);
        });
        // Exactly the configurations the CSV's webhooks call for, each after its deployment.
        const expectedConfigurations = [
            ...new Set(
                (csv.spec.webhookdefinitions as Yaml[])
                    .filter((w) => w.type !== "ConversionWebhook")
                    .map((w) => `op-${w.deploymentName}-webhooks-${w.type === "MutatingAdmissionWebhook" ? "mutating" : "validating"}`),
            ),
        ];
        const configurations = result.resources.filter((r) => r.type.includes("WebhookConfiguration"));
        expect(configurations.map((r) => r.name).sort()).toEqual(expectedConfigurations.sort());
        for (const configuration of configurations) {
            const backend = configuration.name.replace(/^op-/, "").replace(/-webhooks-(mutating|validating)$/, "");
            expect(configuration.options.dependsOn).toEqual([`op-deployment-${backend}`, `op-${backend}-serving-secret`]);
        }
    });
});

/** Every operator webhook shuts out the control plane and, unless the install targets it, the operator's own namespace (k8s-rbac's k8s-webhook-namespace-exclusions). */
const SHUT_OUT = { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "ops"] };

describe("webhook Services, certificates and configurations", () => {
    test("GIVEN cert-manager's named targetPort WHEN rendered THEN the Service forwards 443 to the port named https", async () => {
        const result = await renderOperators([install("cert-manager-1.16.1.clusterserviceversion.yaml")]);
        expect(objectNamed(result, "Service", "cert-manager-webhook-service", "ops")).toEqual({
            apiVersion: "v1",
            kind: "Service",
            metadata: {
                name: "cert-manager-webhook-service",
                namespace: "ops",
                labels: {
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "admission-webhook",
                },
            },
            spec: {
                selector: {
                    "app.kubernetes.io/component": "webhook",
                    "app.kubernetes.io/instance": "cert-manager",
                    "app.kubernetes.io/name": "webhook",
                    "cluster-platform.io/deployment": "cert-manager-webhook",
                },
                ports: [{ name: "https", protocol: "TCP", port: 443, targetPort: "https" }],
            },
        });
    });

    test("GIVEN opentelemetry's own certificate volume at OLM's webhook path WHEN rendered THEN OLM's webhook-cert takes its mount, apiservice-cert is added and the unused volume stays as OLM leaves it", async () => {
        const result = await renderOperators([install("opentelemetry-operator-0.158.0.clusterserviceversion.yaml")]);
        const pod = objectNamed(result, "Deployment", "opentelemetry-operator-controller-manager", "ops").spec.template.spec;
        expect(pod.volumes).toEqual([
            { name: "cert", secret: { defaultMode: 420, secretName: "opentelemetry-operator-controller-manager-service-cert" } },
            ...certVolumes("opentelemetry-operator-controller-manager"),
        ]);
        expect(pod.containers.map((c: Yaml) => [c.name, c.volumeMounts])).toEqual([["manager", [webhookMount, apiserviceMount]]]);
        expect(objectNamed(result, "Secret", "opentelemetry-operator-controller-manager-service-cert", "ops").type).toBe(
            "kubernetes.io/tls",
        );
    });

    test("GIVEN kubevirt's and cert-manager's webhooks WHEN rendered THEN objectSelector, NoneOnDryRun, timeouts, matchPolicy and paths are the CSV's", async () => {
        const kubevirt = await renderOperators([install("kubevirt-hyperconverged-operator-1.14.0.clusterserviceversion.yaml")]);
        const mutating = objectNamed(kubevirt, "MutatingWebhookConfiguration", "ops.hco-webhook");
        expect(mutating.webhooks.find((w: Yaml) => w.name === "mutate-ns-hco.kubevirt.io")).toEqual({
            name: "mutate-ns-hco.kubevirt.io",
            clientConfig: {
                caBundle: "[unknown]",
                service: { name: "hco-webhook-service", namespace: "ops", path: "/mutate-ns-hco-kubevirt-io", port: 4343 },
            },
            rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["DELETE"], resources: ["namespaces"] }],
            failurePolicy: "Fail",
            namespaceSelector: { matchExpressions: [SHUT_OUT] },
            objectSelector: { matchLabels: { "kubernetes.io/metadata.name": "kubevirt-hyperconverged" } },
            sideEffects: "NoneOnDryRun",
            timeoutSeconds: 10,
            admissionReviewVersions: ["v1beta1", "v1"],
        });
        const certManager = await renderOperators([install("cert-manager-1.16.1.clusterserviceversion.yaml")]);
        expect(objectNamed(certManager, "ValidatingWebhookConfiguration", "ops.cert-manager-webhook").webhooks).toEqual([
            {
                name: "validate.webhooks.cert-manager.io",
                clientConfig: {
                    caBundle: "[unknown]",
                    service: { name: "cert-manager-webhook-service", namespace: "ops", path: "/validate", port: 443 },
                },
                rules: [
                    {
                        apiGroups: ["cert-manager.io", "acme.cert-manager.io"],
                        apiVersions: ["v1"],
                        operations: ["CREATE", "UPDATE"],
                        resources: ["*/*"],
                    },
                ],
                failurePolicy: "Fail",
                matchPolicy: "Equivalent",
                namespaceSelector: { matchExpressions: [SHUT_OUT] },
                sideEffects: "None",
                timeoutSeconds: 30,
                admissionReviewVersions: ["v1"],
            },
        ]);
    });

    test("GIVEN an operator with its own cert-manager issuer WHEN rendered THEN its webhook certificate is a cert-manager Certificate and cainjector fills the bundle", async () => {
        const result = await renderOperators([
            {
                ...install("node-maintenance-operator-0.0.1.clusterserviceversion.yaml"),
                certificates: { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "platform-ca" } },
            },
        ]);
        const certificate = objectsOf(result, "Certificate")[0];
        expect([certificate.metadata.namespace, certificate.spec.secretName, certificate.spec.issuerRef]).toEqual([
            "ops",
            "node-maintenance-operator-controller-manager-service-cert",
            { kind: "ClusterIssuer", name: "platform-ca", group: "cert-manager.io" },
        ]);
        const configuration = objectNamed(result, "ValidatingWebhookConfiguration", "ops.node-maintenance-operator-controller-manager");
        expect(configuration.metadata.annotations).toEqual({
            "cert-manager.io/inject-ca-from": `ops/${certificate.metadata.name}`,
            "cluster-platform.io/webhook-generation": expect.stringMatching(/^[0-9a-f]{10}$/),
        });
        expect(configuration.webhooks[0].clientConfig.caBundle).toBeUndefined();
    });

    const scopable = scopableBundle;
    const clientConfig = {
        caBundle: "[unknown]",
        service: {
            name: "node-maintenance-operator-controller-manager-service",
            namespace: "ops",
            path: "/validate-nodemaintenance-medik8s-io-v1beta1-nodemaintenance",
            port: 443,
        },
    };
    const entry = (selector: Yaml) => ({
        name: "vnodemaintenance.kb.io",
        clientConfig,
        rules: [
            {
                apiGroups: ["nodemaintenance.medik8s.io"],
                apiVersions: ["v1beta1"],
                operations: ["CREATE", "UPDATE"],
                resources: ["nodemaintenances"],
            },
        ],
        failurePolicy: "Fail",
        ...(selector ? { namespaceSelector: selector } : {}),
        sideEffects: "None",
        timeoutSeconds: 15,
        admissionReviewVersions: ["v1"],
    });
    const configuration = "ops.node-maintenance-operator-controller-manager";
    const label = "webhooks.cluster-platform.io/ops.node-maintenance-operator-controller-manager";

    test("GIVEN an AllNamespaces install WHEN rendered THEN the webhook has a generated clientConfig and a namespaceSelector that only shuts out kube-system and its own namespace", async () => {
        const result = await renderOperators([{ name: "op", csv: scopable(), namespace: "ops", targetNamespaces: [] }]);
        expect(objectNamed(result, "ValidatingWebhookConfiguration", configuration).webhooks).toEqual([
            entry({ matchExpressions: [SHUT_OUT] }),
        ]);
        expect(patchesOf(result).filter((p) => p.kind === "Namespace")).toEqual([]);
    });

    test("GIVEN a SingleNamespace install on a live cluster WHEN rendered THEN the target namespace is labelled and the selector matches the label", async () => {
        const result = await renderOperators([{ name: "op", csv: scopable(), namespace: "ops", targetNamespaces: ["team-a"] }]);
        expect(objectNamed(result, "ValidatingWebhookConfiguration", configuration).webhooks).toEqual([
            entry({ matchLabels: { [label]: "true" }, matchExpressions: [SHUT_OUT] }),
        ]);
        expect(
            patchesOf(result)
                .filter((p) => p.kind === "Namespace")
                .map((p) => p.metadata),
        ).toEqual([{ name: "team-a", labels: { [label]: "true" } }]);
    });

    test("GIVEN a MultiNamespace install rendered to a directory WHEN rendered THEN nothing is patched and the selector names the namespaces", async () => {
        const result = await renderOperators([{ name: "op", csv: scopable(), namespace: "ops", targetNamespaces: ["team-b", "team-a"] }], {
            renderYaml: true,
        });
        expect(objectNamed(result, "ValidatingWebhookConfiguration", configuration).webhooks).toEqual([
            entry({ matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: ["team-a", "team-b"] }, SHUT_OUT] }),
        ]);
        expect(patchesOf(result)).toEqual([]);
    });

    test("GIVEN an OwnNamespace install WHEN rendered THEN the operator's own namespace is labelled after the stack creates it, and only kube-system is shut out", async () => {
        const result = await renderOperators([{ name: "op", csv: scopable(), namespace: "ops", targetNamespaces: ["ops"] }]);
        expect(
            resourceNamed(
                result,
                "kubernetes:core/v1:NamespacePatch",
                "op-node-maintenance-operator-controller-manager-webhooks-target-ops",
            ).options.dependsOn,
        ).toEqual(["namespace-ops"]);
        expect(objectNamed(result, "ValidatingWebhookConfiguration", configuration).webhooks[0].namespaceSelector).toEqual({
            matchLabels: { [label]: "true" },
            matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system"] }],
        });
    });

    test("GIVEN webhooks that fail closed and operators[].config.replicas 2 WHEN rendered THEN the Deployment runs 2 pods and gets a PodDisruptionBudget allowing one eviction at a time; webhooks that fail open get none", async () => {
        const result = await renderOperators([
            { name: "op", csv: scopable(), namespace: "ops", targetNamespaces: [], config: { replicas: 2 } },
        ]);
        expect(objectNamed(result, "Deployment", "node-maintenance-operator-controller-manager", "ops").spec.replicas).toBe(2);
        expect(result.warnings.filter((w) => w.includes("fail closed"))).toEqual([]);
        expect(objectNamed(result, "PodDisruptionBudget", "node-maintenance-operator-controller-manager", "ops")).toEqual({
            apiVersion: "policy/v1",
            kind: "PodDisruptionBudget",
            metadata: {
                name: "node-maintenance-operator-controller-manager",
                namespace: "ops",
                labels: {
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "admission-webhook",
                },
            },
            spec: {
                maxUnavailable: 1,
                selector: {
                    matchLabels: {
                        "cluster-platform.io/deployment": "node-maintenance-operator-controller-manager",
                        "control-plane": "controller-manager",
                        "node-maintenance-operator": "",
                    },
                },
                unhealthyPodEvictionPolicy: "AlwaysAllow",
            },
        });
        const failOpen = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
        failOpen.spec.webhookdefinitions = failOpen.spec.webhookdefinitions.map((w: Yaml) => ({ ...w, failurePolicy: "Ignore" }));
        const open = await renderOperators([
            { name: "op", csv: writeBundle(failOpen), namespace: "ops", targetNamespaces: [], config: { replicas: 2 } },
        ]);
        expect(objectsOf(open, "PodDisruptionBudget")).toEqual([]);
    });

    test("GIVEN the CSV's one replica behind webhooks that fail closed WHEN rendered THEN no PodDisruptionBudget is declared and one warning names the deployment, the webhooks and the override", async () => {
        const result = await renderOperators([{ name: "op", csv: scopable(), namespace: "ops", targetNamespaces: [] }]);
        expect(objectNamed(result, "Deployment", "node-maintenance-operator-controller-manager", "ops").spec.replicas).toBe(1);
        expect(objectsOf(result, "PodDisruptionBudget")).toEqual([]);
        expect(result.warnings.filter((w) => w.includes("fail closed"))).toEqual([
            expect.stringMatching(
                /^operators\[0\]\.csv: operator "op": deployment "node-maintenance-operator-controller-manager" runs 1 replica behind webhooks that fail closed \(vnodemaintenance\.kb\.io\): while its pod restarts or is evicted, every call they intercept is refused, and no PodDisruptionBudget is declared \(with one pod it could only let the drain through or block it\); set operators\[0\]\.config\.replicas to 2 or more$/,
            ),
        ]);
    });
});

describe("RBAC by install mode", () => {
    const generatedBy = (result: Awaited<ReturnType<typeof renderOperators>>) =>
        objectsOf(result, ...RBAC_KINDS)
            .filter((o) => o.metadata.labels?.["cluster-platform.io/operator"] === "op")
            .map((o) => `${keyOf(o)} ${o.metadata.labels?.["cluster-platform.io/generated-by"]}`)
            .sort();

    test("GIVEN etcd installed for one other namespace WHEN rendered THEN its Role and binding are in the operator's namespace and copied to the target", async () => {
        const result = await renderOperators([install("etcdoperator-0.9.4.clusterserviceversion.yaml", ["team-a"])]);
        const role = "etcdoperator.v0.9.4-etcd-1fPZ7OPuFW00B7hEHE0e67u7RQT89YSOavY623";
        expect(generatedBy(result).filter((k) => !k.includes("-v1beta2-"))).toEqual([
            `Role ops/${role} csv.permissions`,
            `Role team-a/${role} csv.permissions.targetNamespaces`,
            `RoleBinding ops/${role} csv.permissions`,
            `RoleBinding team-a/${role} csv.permissions.targetNamespaces`,
        ]);
        expect(objectNamed(result, "RoleBinding", role, "team-a").subjects).toEqual([
            { kind: "ServiceAccount", name: "etcd-operator", namespace: "ops" },
        ]);
        expect(objectNamed(result, "Deployment", "etcd-operator", "ops").spec.template.metadata.annotations["olm.targetNamespaces"]).toBe(
            "team-a",
        );
    });

    test("GIVEN prometheus installed for two namespaces WHEN rendered THEN each of its two permissions is a Role in the operator's namespace and in both targets", async () => {
        const result = await renderOperators([install("prometheusoperator-0.22.2.clusterserviceversion.yaml", ["team-a", "team-b"])]);
        const keys = generatedBy(result).filter((k) => k.startsWith("Role "));
        expect(keys).toHaveLength(6);
        expect(keys.map((k) => k.split(" ")[1].split("/")[0])).toEqual(["ops", "ops", "team-a", "team-a", "team-b", "team-b"]);
        // OLM cuts `<csv>-<sa>` to fit its 38-character base-62 hash: the service account may be cut away entirely.
        const names = keys.map((k) => k.split(" ")[1].split("/")[1]);
        expect(names).toEqual(names.map(() => expect.stringMatching(/^prometheusoperator\.0\.22\.[-0-9a-z]*-[0-9A-Za-z]{30,38}$/)));
        expect(names.every((n) => n.length <= 64)).toBe(true);
        expect(new Set(names).size).toBe(2);
        expect(
            objectNamed(result, "Deployment", "prometheus-operator", "ops").spec.template.metadata.annotations["olm.targetNamespaces"],
        ).toBe("team-a,team-b");
    });

    test("GIVEN node-maintenance for all namespaces WHEN rendered THEN its permissions are promoted next to the Role, its clusterPermissions are a ClusterRole and its webhook Service gets OLM's serving-certificate RBAC", async () => {
        const result = await renderOperators([install("node-maintenance-operator-0.0.1.clusterserviceversion.yaml")]);
        const role = "node-maintenance-operato-1z7jy0mls8iZgkRrEoZSo0qrzHuSSDjO6Mzb9m";
        // The namespace is part of a ClusterRole's hash (OLM hashes [csv, namespace, permission]).
        const clusterRole = "node-maintenance-operato-1GLeZOJ2RW16gVvkr7NIpMLUgh6yq2Z78l4DD9";
        const crd = "nodemaintenances.nodemaintenance.medik8s.io-v1beta1";
        const service = "node-maintenance-operator-controller-manager-service";
        expect(generatedBy(result)).toEqual([
            `ClusterRole /${clusterRole} csv.clusterPermissions`,
            `ClusterRole /${role} olm.allNamespacesPromotion`,
            `ClusterRole /${crd}-admin olm.aggregateCRDRoles`,
            `ClusterRole /${crd}-crdview olm.aggregateCRDRoles`,
            `ClusterRole /${crd}-edit olm.aggregateCRDRoles`,
            `ClusterRole /${crd}-view olm.aggregateCRDRoles`,
            `ClusterRoleBinding /${clusterRole} csv.clusterPermissions`,
            `ClusterRoleBinding /${role} olm.allNamespacesPromotion`,
            `ClusterRoleBinding /${service}-system:auth-delegator olm.servingCertificate`,
            `Role ops/${role} csv.permissions`,
            `Role ops/${service}-cert olm.servingCertificate`,
            `RoleBinding kube-system/${service}-auth-reader olm.servingCertificate`,
            `RoleBinding ops/${role} csv.permissions`,
            `RoleBinding ops/${service}-cert olm.servingCertificate`,
        ]);
    });
});

describe("conversion webhooks", () => {
    const widgets = {
        name: "widgets",
        csv: SAMPLE_CSVS.widgets,
        namespace: "widget-operator",
    };

    const WIDGETS_CRD = "widgets.samples.cluster-platform.io";
    /** The sample CRD's conversion, as the CSV's webhook describes it, with the self-signed CA (unknown in a preview). */
    const WIDGETS_CONVERSION = {
        strategy: "Webhook",
        webhook: {
            clientConfig: {
                caBundle: "[unknown]",
                service: { name: "widget-webhook-service", namespace: "widget-operator", path: "/convert", port: 443 },
            },
            conversionReviewVersions: ["v1"],
        },
    };
    const conversionPatch = (result: Awaited<ReturnType<typeof renderOperators>>) =>
        patchesOf(result).find((p) => p.kind === "CustomResourceDefinition" && p.metadata.name === WIDGETS_CRD);

    test("GIVEN the sample bundle's CRD on a live cluster WHEN rendered THEN the CRD is applied under the stack's CRD field manager without spec.conversion, and a patch of its own, under the conversion manager, points the conversion at the webhook Service with the stack's CA bundle", async () => {
        const result = await renderOperators([widgets]);
        expect(result.errors).toEqual([]);
        const crd = objectNamed(result, "CustomResourceDefinition", WIDGETS_CRD);
        expect(crd.spec.conversion).toBeUndefined();
        expect(crd.metadata.annotations).toEqual({
            "pulumi.com/patchFieldManager": "cluster-platform-crds",
            "pulumi.com/patchForce": "true",
        });
        expect(conversionPatch(result)).toEqual({
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: {
                name: WIDGETS_CRD,
                annotations: { "pulumi.com/patchFieldManager": "cluster-platform-crd-conversion", "pulumi.com/patchForce": "true" },
            },
            // group and kind as the CRD has them: the provider reads every CRD patch into its CRD cache.
            spec: { group: "samples.cluster-platform.io", names: { kind: "Widget" }, conversion: WIDGETS_CONVERSION },
        });
        expect(
            resourceNamed(
                result,
                "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
                `widgets-crd-conversion-${WIDGETS_CRD}`,
            ).options.dependsOn,
        ).toEqual([`widgets-crd-${WIDGETS_CRD}`, "widgets-widget-webhook-serving-secret"]);
    });

    test("GIVEN the sample bundle rendered to a directory WHEN rendered THEN the CRD itself carries the conversion (no patch can be rendered)", async () => {
        const result = await renderOperators([widgets], { renderYaml: true });
        expect(objectNamed(result, "CustomResourceDefinition", WIDGETS_CRD).spec.conversion).toEqual(WIDGETS_CONVERSION);
    });

    test("GIVEN the sample bundle's CRD with two served versions WHEN rendered THEN each version gets its four aggregate roles", async () => {
        const result = await renderOperators([widgets]);
        const roles = objectsOf(result, "ClusterRole")
            .map((r) => r.metadata.name)
            .filter((n) => n.startsWith("widgets.samples.cluster-platform.io-"))
            .sort();
        expect(roles).toEqual(
            ["v1", "v1alpha1"].flatMap((v) =>
                ["admin", "crdview", "edit", "view"].map((s) => `widgets.samples.cluster-platform.io-${v}-${s}`),
            ),
        );
    });

    test("GIVEN service-ca mode WHEN rendered THEN the conversion patch asks service-ca for the bundle and ignores the field it writes", async () => {
        const result = await renderOperators([widgets], { platform: "openshift", certificates: { mode: "service-ca" } });
        const patch = conversionPatch(result);
        expect(patch?.metadata.annotations).toEqual({
            "pulumi.com/patchFieldManager": "cluster-platform-crd-conversion",
            "pulumi.com/patchForce": "true",
            "service.beta.openshift.io/inject-cabundle": "true",
        });
        expect(patch?.spec.conversion.webhook.clientConfig).toEqual({
            service: { name: "widget-webhook-service", namespace: "widget-operator", path: "/convert", port: 443 },
        });
        expect(
            resourceNamed(
                result,
                "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
                `widgets-crd-conversion-${WIDGETS_CRD}`,
            ).options.ignoreChanges,
        ).toEqual(["spec.conversion.webhook.clientConfig.caBundle"]);
    });

    test("GIVEN argocd's conversion-only webhook and no CRD manifest on a live cluster WHEN rendered THEN a Service and a patch of the existing CRD's conversion are declared after the deployment", async () => {
        const result = await renderOperators([install("argocd-operator-0.19.0.clusterserviceversion.yaml")]);
        expect(objectNamed(result, "Service", "argocd-operator-controller-manager-service", "ops").spec.ports).toEqual([
            { name: "https", protocol: "TCP", port: 443, targetPort: 9443 },
        ]);
        expect(patchesOf(result).filter((p) => p.kind === "CustomResourceDefinition")).toEqual([
            {
                apiVersion: "apiextensions.k8s.io/v1",
                kind: "CustomResourceDefinition",
                metadata: {
                    name: "argocds.argoproj.io",
                    annotations: { "pulumi.com/patchFieldManager": "cluster-platform-crd-conversion", "pulumi.com/patchForce": "true" },
                },
                spec: {
                    group: "argoproj.io",
                    names: { kind: "ArgoCD" },
                    conversion: {
                        strategy: "Webhook",
                        webhook: {
                            clientConfig: {
                                caBundle: "[unknown]",
                                service: {
                                    name: "argocd-operator-controller-manager-service",
                                    namespace: "ops",
                                    path: "/convert",
                                    port: 443,
                                },
                            },
                            conversionReviewVersions: ["v1alpha1", "v1beta1"],
                        },
                    },
                },
            },
        ]);
        expect(
            resourceNamed(
                result,
                "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
                "op-crd-conversion-argocds.argoproj.io",
            ).options.dependsOn,
        ).toEqual([
            "op-deployment-argocd-operator-controller-manager",
            "op-argocd-operator-controller-manager-service",
            "op-argocd-operator-controller-manager-serving-secret",
        ]);
    });

    test("GIVEN the same install rendered to a directory WHEN rendered THEN the patch is skipped with a warning", async () => {
        const result = await renderOperators([install("argocd-operator-0.19.0.clusterserviceversion.yaml")], { renderYaml: true });
        expect(patchesOf(result)).toEqual([]);
        expect(result.warnings).toContain(
            'operator "op": skipped the conversion webhook patch of CRD argocds.argoproj.io: the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch',
        );
    });
});

describe("webhook upgrades (seed 002) in Pulumi's ordering", () => {
    const csv = () => readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
    const render = (document: Yaml) => renderOperators([{ name: "op", csv: writeBundle(document), namespace: "ops" }]);
    /** The generation ConfigMap's name: the render must succeed and declare exactly one, or the comparisons below would compare nothing. */
    const generationName = (result: Awaited<ReturnType<typeof render>>): string => {
        expect(result.errors).toEqual([]);
        const names = objectsOf(result, "ConfigMap")
            .map((c) => c.metadata.name as string)
            .filter((name) => name.startsWith("op-webhooks-"));
        expect(names).toHaveLength(1);
        return names[0];
    };
    const generation = (result: Awaited<ReturnType<typeof render>>) =>
        objectsOf(result, "ConfigMap").find((c) => c.metadata.name.startsWith("op-webhooks-"));

    test("GIVEN an install WHEN rendered THEN the webhook generation is replaced delete-first, the deployments wait for it and the configurations carry its hash", async () => {
        const result = await render(csv());
        const configMap = generation(result);
        const hash = configMap?.metadata.name.slice("op-webhooks-".length);
        expect(hash).toMatch(/^[0-9a-f]{10}$/);
        expect(configMap?.immutable).toBe(true);
        expect(JSON.parse(configMap?.data["webhooks.json"])).toEqual([
            {
                backend: {
                    deploymentName: "node-maintenance-operator-controller-manager",
                    namespace: "ops",
                    matchLabels: {
                        "cluster-platform.io/deployment": "node-maintenance-operator-controller-manager",
                        "control-plane": "controller-manager",
                        "node-maintenance-operator": "",
                    },
                    servicePort: 443,
                    targetPort: 9443,
                },
                webhooks: [
                    {
                        name: "vnodemaintenance.kb.io",
                        type: "ValidatingAdmissionWebhook",
                        rules: [
                            {
                                operations: ["CREATE", "UPDATE"],
                                apiGroups: ["nodemaintenance.medik8s.io"],
                                apiVersions: ["v1beta1"],
                                resources: ["nodemaintenances"],
                            },
                        ],
                        sideEffects: "None",
                        admissionReviewVersions: ["v1"],
                        failurePolicy: "Fail",
                        timeoutSeconds: 15,
                        path: "/validate-nodemaintenance-medik8s-io-v1beta1-nodemaintenance",
                    },
                ],
            },
        ]);
        expect(resourceNamed(result, "kubernetes:core/v1:ConfigMap", "op-webhook-generation").options.deleteBeforeReplace).toBe(true);
        expect(
            resourceNamed(result, "kubernetes:apps/v1:Deployment", "op-deployment-node-maintenance-operator-controller-manager").options
                .dependsOn,
        ).toContain("op-webhook-generation");
        expect(
            objectNamed(result, "ValidatingWebhookConfiguration", "ops.node-maintenance-operator-controller-manager").metadata.annotations,
        ).toEqual({
            "cluster-platform.io/webhook-generation": hash,
        });
    });

    test("GIVEN a new version that changes a webhook and the deployment WHEN rendered THEN the generation's name changes (the old webhook goes first)", async () => {
        const before = generationName(await render(csv()));
        const next = csv();
        next.spec.webhookdefinitions[0].timeoutSeconds = 10;
        next.spec.install.spec.deployments[0].spec.template.spec.containers[0].image = "quay.io/medik8s/node-maintenance-operator:v0.0.2";
        expect(generationName(await render(next))).not.toBe(before);
    });

    test("GIVEN a new version that only changes the deployment WHEN rendered THEN the generation, and so the webhook, is kept", async () => {
        const before = generationName(await render(csv()));
        const next = csv();
        next.spec.install.spec.deployments[0].spec.template.spec.containers[0].image = "quay.io/medik8s/node-maintenance-operator:v0.0.2";
        expect(generationName(await render(next))).toBe(before);
    });

    test("GIVEN a new version without the webhook WHEN rendered THEN the generation changes (deleting the old configuration) and no configuration is declared", async () => {
        const before = generationName(await render(csv()));
        const next = csv();
        next.spec.webhookdefinitions = [];
        const result = await render(next);
        expect(generationName(result)).not.toBe(before);
        expect(objectsOf(result, "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")).toEqual([]);
    });
});

describe("OLM's cluster-wide objects", () => {
    test("GIVEN the default toggles WHEN rendered THEN OLM's aggregate roles and the OLM-named roles go through the adopting provider, the Deployments through the stack's (components/shared/adoption.ts)", async () => {
        const providers = new Map<string, string | undefined>();
        const record = (call: { name: string; provider?: string }) => {
            providers.set(call.name, call.provider);
            return {};
        };
        // Up semantics, so provider references are known (strimzi: no webhooks, no certificates to compute).
        await renderOperators([install("strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml")], {
            render: {
                preview: false,
                computed: { "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": record, "kubernetes:apps/v1:Deployment": record },
            },
        });
        const provider = (name: string) => providers.get(name)?.split("::")[3];
        expect(provider("olm-aggregate-olm-edit")).toBe("kubernetes-adopting");
        expect(provider("olm-aggregate-olm-view")).toBe("kubernetes-adopting");
        expect(provider("op-deployment-strimzi-cluster-operator")).toBe("kubernetes");
        expect(provider("op-clusterrole-kafkas.kafka.strimzi.io-v1beta1-admin")).toBe("kubernetes-adopting");
    });

    test("GIVEN manageOLMConfig and promotion disabled on a live cluster WHEN rendered THEN OLMConfig/cluster gets only disableCopiedCSVs, with a warning", async () => {
        const result = await renderOperators([], { olm: { manageOLMConfig: true, disableAllNamespacePermissionPromotion: true } });
        expect(patchesOf(result)).toEqual([
            {
                apiVersion: "operators.coreos.com/v1",
                kind: "OLMConfig",
                metadata: { name: "cluster", annotations: { "pulumi.com/patchFieldManager": "cluster-platform-olm-config" } },
                spec: { features: { disableCopiedCSVs: true } },
            },
        ]);
        expect(result.warnings).toContain(
            "olm.manageOLMConfig: server-side-applying OLMConfig/cluster spec.features.disableCopiedCSVs: true because olm.disableAllNamespacePermissionPromotion is true: copied CSVs would advertise operators in namespaces where they have no RBAC (seed 003). No other OLMConfig field is touched; the RBAC toggles are not OLMConfig fields.",
        );
    });

    test("GIVEN the same config rendered to a directory WHEN rendered THEN the patch is skipped with a warning", async () => {
        const result = await renderOperators([], {
            olm: { manageOLMConfig: true, disableAllNamespacePermissionPromotion: true },
            renderYaml: true,
        });
        expect(patchesOf(result)).toEqual([]);
        expect(result.warnings).toContain(
            "olm.manageOLMConfig: skipped the OLMConfig/cluster patch (spec.features.disableCopiedCSVs: true): the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch",
        );
    });

    test.each([
        ["manageOLMConfig without disabling promotion", { manageOLMConfig: true }],
        ["promotion disabled without manageOLMConfig", { disableAllNamespacePermissionPromotion: true }],
    ])("GIVEN %s WHEN rendered THEN OLMConfig is left alone", async (_case, olm) => {
        const result = await renderOperators([], { olm });
        expect(patchesOf(result)).toEqual([]);
        expect(result.warnings.filter((w) => w.includes("OLMConfig"))).toEqual([]);
    });
});

describe("bad input registers nothing", () => {
    test("GIVEN a CSV with a forbidden webhook rule WHEN rendered THEN the report names it and no resource is registered", async () => {
        const csv = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
        csv.spec.webhookdefinitions[0].rules[0].apiGroups = ["admissionregistration.k8s.io"];
        csv.spec.webhookdefinitions[0].rules[0].resources = ["validatingwebhookconfigurations"];
        const file = writeBundle(csv);
        const result = await renderOperators([{ name: "nmo", csv: file, namespace: "ops" }]);
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
            [
                "invalid configuration: 1 problem",
                // The bundle file in full, however long: the message names the file of OLM's reason.
                `  - cluster-platform:operators[0].csv: ${JSON.stringify(file)}: operator "nmo": webhook "vnodemaintenance.kb.io" (spec.webhookdefinitions[0].rules[0].resources): Webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources`,
            ].join("\n"),
        ]);
        expect(result.resources).toEqual([]);
    });
});
