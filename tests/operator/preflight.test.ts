import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { OlmConfig, OperatorConfig } from "../../components/config/schema";
import { planOperators } from "../../components/operator/plan";
import { formatProblem, sortProblems } from "../../components/shared/problems";
import { ROOT } from "../helpers/render";
import { temporaryDirectory } from "../helpers/temporary";

const olm: OlmConfig = {
    disableOLMAggregateCRDRoles: false,
    disableAggregateCRDRoles: false,
    disableAllNamespacePermissionPromotion: false,
    manageOLMConfig: false,
};
const CSVS = "../shared/testdata/csvs";
const operator = (overrides: Partial<OperatorConfig> & Pick<OperatorConfig, "csv">): OperatorConfig => ({
    name: "op",
    namespace: "ops",
    createNamespace: true,
    deleteCrdsOnRemoval: false,
    targetNamespaces: [],
    ...overrides,
});
/** The pre-flight's problems of an operators plan, as the report prints them (sorted by path, then message). */
const planProblemLines = (operators: OperatorConfig[], root = ROOT) =>
    sortProblems(planOperators(operators, olm, root).problems).map(formatProblem);

/** A bundle folder in a temporary directory, from objects (the first one is the CSV). */
function bundle(csv: Record<string, unknown>, others: Record<string, unknown>[] = []): { root: string; csv: string } {
    const root = temporaryDirectory("bundle-");
    fs.mkdirSync(path.join(root, "manifests"));
    fs.writeFileSync(path.join(root, "manifests", "op.clusterserviceversion.yaml"), stringify(csv));
    others.forEach((o, i) => fs.writeFileSync(path.join(root, "manifests", `object-${i}.yaml`), stringify(o)));
    return { root, csv: "manifests/op.clusterserviceversion.yaml" };
}

const minimalCsv = (spec: Record<string, unknown> = {}) => ({
    apiVersion: "operators.coreos.com/v1alpha1",
    kind: "ClusterServiceVersion",
    metadata: { name: "op.v1.0.0" },
    spec: {
        installModes: [{ type: "AllNamespaces", supported: true }],
        install: {
            strategy: "deployment",
            spec: {
                deployments: [
                    {
                        name: "op-controller",
                        spec: {
                            selector: { matchLabels: { app: "op" } },
                            template: {
                                metadata: { labels: { app: "op" } },
                                spec: { containers: [{ name: "manager", image: "example.io/op:1" }] },
                            },
                        },
                    },
                ],
            },
        },
        ...spec,
    },
});

/** The CRD as.example.io with `versions`. */
const crdServing = (versions: { name: string; served: boolean; storage: boolean }[]) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "as.example.io" },
    spec: { group: "example.io", names: { plural: "as", kind: "A" }, scope: "Namespaced", versions },
});

describe("operator pre-flight: every problem before anything is registered", () => {
    test("GIVEN every real CSV with a supported targetNamespaces shape WHEN planned THEN there is no problem", () => {
        const files = fs.readdirSync(path.join(ROOT, CSVS)).sort();
        const namespaced = new Set([
            "etcdoperator-0.9.4.clusterserviceversion.yaml",
            "prometheusoperator-0.22.2.clusterserviceversion.yaml",
        ]);
        for (const file of files) {
            const result = planOperators(
                [operator({ csv: `${CSVS}/${file}`, targetNamespaces: namespaced.has(file) ? ["ops"] : [] })],
                olm,
                ROOT,
            );
            expect([file, result.problems]).toEqual([file, []]);
            expect(result.plans).toHaveLength(1);
        }
    });

    test("GIVEN a CSV path that does not exist WHEN planned THEN the problem names the config key and the file", () => {
        expect(planProblemLines([operator({ csv: "bundles/missing.yaml" })])).toEqual([
            `cluster-platform:operators[0].csv: "bundles/missing.yaml": cannot read ${path.join(ROOT, "bundles/missing.yaml")}: does not exist`,
        ]);
    });

    test("GIVEN a malformed CSV WHEN planned THEN each problem names the file and the field", () => {
        const csv = minimalCsv();
        const broken = {
            ...csv,
            spec: {
                ...csv.spec,
                install: { strategy: "helm", spec: { deployments: [{ name: 7, spec: {} }] } },
                webhookdefinitions: [{ generateName: "v.example.io", type: "Validating", containerPort: "443" }],
            },
        };
        const { root, csv: file } = bundle(broken);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.install.spec.deployments[0].name: expected string, got number 7',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.install.spec.deployments[0].spec.selector: is required (expected object)',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.install.spec.deployments[0].spec.template: is required (expected object)',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.install.strategy: "helm" is not one of "deployment"',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.webhookdefinitions[0].containerPort: expected number, got string "443"',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.webhookdefinitions[0].type: "Validating" is not one of "ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"',
        ]);
    });

    test("GIVEN a file that is not YAML WHEN planned THEN the problem says so", () => {
        const { root, csv } = bundle({});
        fs.writeFileSync(path.join(root, csv), "spec: [unclosed");
        expect(planProblemLines([operator({ csv })], root)).toEqual([
            expect.stringMatching(
                /^cluster-platform:operators\[0\]\.csv: "manifests\/op\.clusterserviceversion\.yaml": is not valid YAML as OLM's Go tooling reads it \(so OLM finds no CSV in the bundle\): /,
            ),
        ]);
    });

    test("GIVEN targetNamespaces the CSV's installModes do not support WHEN planned THEN OLM's message names the shape", () => {
        expect(planProblemLines([operator({ csv: `${CSVS}/etcdoperator-0.9.4.clusterserviceversion.yaml` })])).toEqual([
            'cluster-platform:operators[0].targetNamespaces: operator "op": []: AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces (the CSV supports OwnNamespace, SingleNamespace)',
        ]);
        expect(
            planProblemLines([
                operator({ csv: `${CSVS}/cert-manager-1.16.1.clusterserviceversion.yaml`, targetNamespaces: ["team-a", "team-b"] }),
            ]),
        ).toEqual([
            'cluster-platform:operators[0].targetNamespaces: operator "op": ["team-a","team-b"]: MultiNamespace InstallModeType not supported, cannot configure to watch 2 namespaces (the CSV supports AllNamespaces)',
        ]);
    });

    test("GIVEN a CSV with a forbidden webhook rule and a webhook on a missing deployment WHEN planned THEN both are reported with the file", () => {
        const csv = minimalCsv({
            webhookdefinitions: [
                {
                    generateName: "vpods.example.io",
                    type: "ValidatingAdmissionWebhook",
                    deploymentName: "op-controller",
                    sideEffects: "None",
                    admissionReviewVersions: ["v1"],
                    rules: [{ apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["pods"] }],
                },
                {
                    generateName: "mpods.example.io",
                    type: "MutatingAdmissionWebhook",
                    deploymentName: "op-webhook",
                    sideEffects: "None",
                    admissionReviewVersions: ["v1"],
                },
            ],
        });
        const { root, csv: file } = bundle(csv);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml": operator "op": webhook "mpods.example.io" (spec.webhookdefinitions[1].deploymentName): references non-existent deployment "op-webhook" (the CSV\'s deployments: op-controller)',
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml": operator "op": webhook "vpods.example.io" (spec.webhookdefinitions[0].rules[0].apiGroups): Webhook rules cannot include all groups',
        ]);
    });

    test("GIVEN two webhooks of one deployment on different ports WHEN planned THEN the one-port-per-deployment limit is reported", () => {
        const webhook = {
            type: "ValidatingAdmissionWebhook",
            deploymentName: "op-controller",
            sideEffects: "None",
            admissionReviewVersions: ["v1"],
        };
        const csv = minimalCsv({
            webhookdefinitions: [
                { ...webhook, generateName: "va.example.io", containerPort: 443, targetPort: 9443 },
                { ...webhook, generateName: "vb.example.io", containerPort: 8443 },
            ],
        });
        const { root, csv: file } = bundle(csv);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.webhookdefinitions[1].containerPort: operator "op": webhook "vb.example.io" serves port 8443 → 8443, but spec.webhookdefinitions[0] of the same deployment "op-controller" serves 443 → 9443; this stack gives each deployment one webhook Service port',
        ]);
    });

    const flunders = {
        name: "flunders",
        group: "wardle.example.com",
        version: "v1alpha1",
        kind: "Flunder",
        deploymentName: "op-controller",
        containerPort: 9443,
    };

    test("GIVEN owned APIServices with an unknown deployment and one on a second port WHEN planned THEN OLM's rules report each", () => {
        const csv = minimalCsv({
            apiservicedefinitions: {
                owned: [
                    flunders,
                    { ...flunders, version: "v1", deploymentName: "op-server" },
                    { ...flunders, version: "v2", containerPort: 443 },
                ],
            },
        });
        const { root, csv: file } = bundle(csv);
        const at = 'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml"';
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            `${at} spec.apiservicedefinitions.owned: operator "op": owned APIService "v2.wardle.example.com" is served on port 443, but deployment "op-controller" already serves 9443 → 9443; this stack gives each deployment one Service port`,
            `${at} spec.apiservicedefinitions.owned[1].deploymentName: operator "op": owned APIService "v1.wardle.example.com": deploymentName "op-server" is not a deployment of spec.install.spec.deployments (OLM's requirement status DeploymentNotFound)`,
        ]);
    });

    test("GIVEN one APIService listed under three kinds, the first two naming no deployment of the CSV WHEN planned THEN it is installed once, from the last entry, as OLM keys them by <version>.<group> (GetOwnedAPIServiceDescriptions), and nothing is refused", () => {
        const csv = minimalCsv({
            apiservicedefinitions: {
                owned: [
                    { ...flunders, deploymentName: "gone" },
                    { ...flunders, kind: "Fischer", deploymentName: "gone" },
                    { ...flunders, kind: "Flounder" },
                    { ...flunders, version: "v1" },
                ],
            },
        });
        const { root, csv: file } = bundle(csv);
        const planned = planOperators([operator({ csv: file })], olm, root);
        expect(planned.problems).toEqual([]);
        expect(planned.plans[0].deployments[0].apiServices?.map((a) => [a.name, a.service.port])).toEqual([
            ["v1.wardle.example.com", 9443],
            ["v1alpha1.wardle.example.com", 9443],
        ]);
    });

    test("GIVEN an owned APIService whose containerPort is 0 WHEN planned THEN it is served on 443, as OLM's installer defaults it", () => {
        const csv = minimalCsv({ apiservicedefinitions: { owned: [{ ...flunders, containerPort: 0 }] } });
        const { root, csv: file } = bundle(csv);
        const planned = planOperators([operator({ csv: file })], olm, root);
        expect(planned.problems).toEqual([]);
        expect(planned.plans[0].deployments[0].apiServices?.map((a) => a.service)).toEqual([
            { namespace: "ops", name: "op-controller-service", port: 443 },
        ]);
    });

    test("GIVEN two installs of packageserver in two namespaces WHEN planned THEN nothing is refused: the first declares the APIService and the fixed-name serving bindings, with both ServiceAccounts as subjects, and the second declares neither", () => {
        const packageserver = `${CSVS}/packageserver-0.16.1.clusterserviceversion.yaml`;
        const planned = planOperators(
            [
                operator({ csv: packageserver, namespace: "olm-a", targetNamespaces: ["olm-a"] }),
                operator({ csv: packageserver, name: "other", namespace: "olm-b", targetNamespaces: ["olm-b"] }),
            ],
            olm,
            ROOT,
        );
        expect(planned.problems).toEqual([]);
        const [first, second] = planned.plans;
        const shared = [
            "APIService v1.packages.operators.coreos.com",
            "ClusterRoleBinding packageserver-service-system:auth-delegator",
            "RoleBinding kube-system/packageserver-service-auth-reader",
        ];
        expect(shared.every((key) => first.shared.declared.includes(key))).toBe(true);
        expect(shared.map((key) => second.shared.fromOthers[key])).toEqual(["op", "op", "op"]);
        const subjectsOf = (name: string) =>
            (first.rbac.find((o) => o.metadata.name === name) as { subjects: unknown[] } | undefined)?.subjects;
        const subjects = [
            { kind: "ServiceAccount", name: "olm-operator-serviceaccount", namespace: "olm-a" },
            { kind: "ServiceAccount", name: "olm-operator-serviceaccount", namespace: "olm-b" },
        ];
        expect(subjectsOf("packageserver-service-system:auth-delegator")).toEqual(subjects);
        expect(subjectsOf("packageserver-service-auth-reader")).toEqual(subjects);
        expect(
            second.rbac.filter((o) => o.metadata.name.startsWith("packageserver-service-")).map((o) => `${o.kind} ${o.metadata.namespace}`),
        ).toEqual(["Role olm-b", "RoleBinding olm-b"]);
        expect(second.deployments.flatMap((d) => d.apiServices ?? [])).toEqual([]);
        expect(first.deployments.flatMap((d) => d.apiServices ?? []).map((a) => a.service.namespace)).toEqual(["olm-a"]);
    });

    test("GIVEN a bundle with some but not all owned CRD manifests WHEN planned THEN the missing one is reported", () => {
        const csv = minimalCsv({
            customresourcedefinitions: {
                owned: [
                    { name: "as.example.io", version: "v1", kind: "A" },
                    { name: "bs.example.io", version: "v1", kind: "B" },
                ],
            },
        });
        const crd = {
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: "as.example.io" },
            spec: {
                group: "example.io",
                names: { plural: "as", kind: "A" },
                scope: "Namespaced",
                versions: [{ name: "v1", served: true, storage: true }],
            },
        };
        const { root, csv: file } = bundle(csv, [crd]);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.customresourcedefinitions.owned: owned custom resource definition "bs.example.io" not found in the bundle folder next to the CSV',
        ]);
    });

    test("GIVEN a CSV owning a CRD version its manifest does not serve WHEN planned THEN it is refused as OLM refuses it", () => {
        const csv = minimalCsv({
            customresourcedefinitions: {
                owned: [
                    { name: "as.example.io", version: "v1", kind: "A" },
                    { name: "as.example.io", version: "v2", kind: "A" },
                ],
            },
        });
        const crd = crdServing([
            { name: "v1", served: true, storage: true },
            { name: "v2", served: false, storage: false },
        ]);
        const { root, csv: file } = bundle(csv, [crd]);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            `cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml" spec.customresourcedefinitions.owned[1].version: custom resource definition "as.example.io": version "v2" is not served by its manifest (OLM's requirement status: CRD version not served)`,
        ]);
    });

    test("GIVEN a CSV that lists one version of a CRD serving two WHEN planned THEN only the listed version gets aggregate roles, as OLM names them", () => {
        const csv = minimalCsv({ customresourcedefinitions: { owned: [{ name: "as.example.io", version: "v2", kind: "A" }] } });
        const crd = crdServing([
            { name: "v1", served: true, storage: false },
            { name: "v2", served: true, storage: true },
        ]);
        const { root, csv: file } = bundle(csv, [crd]);
        const plan = planOperators([operator({ csv: file })], olm, root).plans[0];
        expect(plan.rbac.map((o) => o.metadata.name).filter((n) => n.startsWith("as.example.io"))).toEqual([
            "as.example.io-v2-admin",
            "as.example.io-v2-edit",
            "as.example.io-v2-view",
            "as.example.io-v2-crdview",
        ]);
    });

    test("GIVEN a v1beta1 CRD manifest in the bundle WHEN planned THEN it is refused with the file named", () => {
        const crd = {
            apiVersion: "apiextensions.k8s.io/v1beta1",
            kind: "CustomResourceDefinition",
            metadata: { name: "as.example.io" },
            spec: { group: "example.io", names: { plural: "as" }, version: "v1" },
        };
        const { root, csv: file } = bundle(minimalCsv(), [crd]);
        expect(planProblemLines([operator({ csv: file })], root)).toEqual([
            'cluster-platform:operators[0].csv: "manifests/op.clusterserviceversion.yaml": bundle file "object-0.yaml": CustomResourceDefinition "as.example.io" is "apiextensions.k8s.io/v1beta1"; only apiextensions.k8s.io/v1 is served by Kubernetes 1.22 and later (OLM\'s InstallPlan fails on it too: the API server does not serve the version)',
        ]);
    });

    test("GIVEN two installs of CSVs owning the same CRD in one namespace WHEN planned THEN every shared object is reported once, on the second install", () => {
        const csv = `${CSVS}/strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml`;
        const lines = planProblemLines([operator({ name: "kafka-a", csv }), operator({ name: "kafka-b", csv })]);
        // Its CRDs have no manifests: they must already exist, neither install declares them.
        expect(lines.filter((l) => l.includes("CustomResourceDefinition"))).toEqual([]);
        expect(lines).toContain(
            'cluster-platform:operators[1]: operator "kafka-b": Deployment ops/strimzi-cluster-operator is also declared by operator "kafka-a" (operators[0]); one cluster object cannot belong to two installs',
        );
        expect(lines.every((l) => l.startsWith('cluster-platform:operators[1]: operator "kafka-b": '))).toBe(true);
    });

    test("GIVEN a CSV without CRD manifests next to it, with required APIs and a bundle ConfigMap WHEN planned THEN warnings say what the admin must provide and the ConfigMap is installed", () => {
        const csv = minimalCsv({
            customresourcedefinitions: {
                owned: [{ name: "as.example.io", version: "v1", kind: "A" }],
                required: [{ name: "certificates.cert-manager.io", version: "v1", kind: "Certificate" }],
            },
        });
        const { root, csv: file } = bundle(csv, [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "op-config" } }]);
        const planned = planOperators([operator({ csv: file })], olm, root);
        expect(planned.warnings).toEqual([
            'operators[0].csv: operator "op": no CRD manifests next to "manifests/op.clusterserviceversion.yaml": the owned CRDs (as.example.io) must already exist in the cluster',
            'operators[0].csv: operator "op": requires APIs another operator provides (certificates.cert-manager.io (v1)); this stack does not resolve dependencies, install their operators too',
        ]);
        expect(planned.plans[0].bundleObjects.map((o) => `${o.kind} ${o.namespace}/${o.name} (${o.file})`)).toEqual([
            "ConfigMap ops/op-config (object-0.yaml)",
        ]);
    });
});
