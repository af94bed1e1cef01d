/**
 * Stacks that install each real CSV (../shared/testdata/csvs), rendered through the real program
 * on OpenShift and run through both packs configured as such a stack configures them (`npm run
 * policy:config`). Pod security judges restricted-v2 there, and every CSV's operator passes it;
 * the same rendered Deployments judged against the restricted Pod Security Standard (a plain
 * Kubernetes cluster) show which operators leave to the SCC what the standard asks them to set.
 * What else the packs report of a CSV is the CSV's own RBAC and webhook design, named here one
 * by one (and in docs/policy-packs.md): real findings an admin allow-lists or raises with the vendor.
 */
import { podOf, restrictedProfileViolations } from "../../components/shared/pod-security";
import { validateStackConfig } from "../../components/config";
import { formatReport } from "../../components/shared/problems";
import { policyConfigFor } from "../../scripts/policy/config";
import { analyzeWithBothPacks } from "../../scripts/policy/stacks";
import { PACKS_START, sharedPacks } from "../helpers/policy-packs";
import { CSV_DIR, CSV_FILES, NAMESPACED_CSVS, objectsOf, renderOperators } from "../helpers/operators";

// The packs start once per jest registry (tests/helpers/policy-packs.ts); on a loaded machine that takes minutes.
beforeAll(() => sharedPacks(), PACKS_START);

/** What the k8s-rbac pack reports of each CSV's install besides pod security: `policy object [power]`, in order. */
const CSV_FINDINGS: Record<string, string[]> = {
    "argocd-operator-0.19.0.clusterserviceversion.yaml": [
        'k8s-no-wildcard-access ClusterRole "argocd-operator.v0.19.0-4DrNM36xI6cVeJDJzWMgFRJb8IObXf35bAnecK"',
        'k8s-no-broad-grants ClusterRole "argocd-operator.v0.19.0-4DrNM36xI6cVeJDJzWMgFRJb8IObXf35bAnecK" [escalate]',
        'k8s-no-broad-grants ClusterRole "argocd-operator.v0.19.0-4DrNM36xI6cVeJDJzWMgFRJb8IObXf35bAnecK" [bind]',
        'k8s-no-broad-grants ClusterRole "argocd-operator.v0.19.0-4DrNM36xI6cVeJDJzWMgFRJb8IObXf35bAnecK" [impersonate]',
        'k8s-no-broad-grants ClusterRole "argocd-operator.v0.19.0-4DrNM36xI6cVeJDJzWMgFRJb8IObXf35bAnecK" [read-secrets]',
    ],
    "cert-manager-1.16.1.clusterserviceversion.yaml": [
        'k8s-no-broad-grants ClusterRole "cert-manager.v1.16.1-7EMNhdRuDTclCbf5qERQJS6O9wbMxGccBDmGY" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "cert-manager.v1.16.1-aAPneMdMAdzdDGnTniKLWQ3ExWqiCjFaMsI34Y" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "cert-manager.v1.16.1-aAPneMdMAdzdDGnTniKLWQ3ExWqiCjFaMsI34Y" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "cert-manager.v1.16.1-aAPneMdMAdzdDGnTniKLWQ3ExWqiCjFaMsI34Y" [crd-writes]',
        'k8s-no-broad-grants ClusterRole "cert-manager.v1.16.1-aAPneMdMAdzdDGnTniKLWQ3ExWqiCjFaMsI34Y" [apiservice-writes]',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.cert-manager-webhook"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.cert-manager-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.cert-manager-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.cert-manager-webhook"',
    ],
    "etcdoperator-0.9.4.clusterserviceversion.yaml": [],
    "kubevirt-hyperconverged-operator-1.14.0.clusterserviceversion.yaml": [
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--536UIwy3o7KRNYvEaAS11FYAs6UhSVc9lbnMPN" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--6LKxVHrPPv2NjbpGPQuxtQRXUT9Dr3aFm4zEtj" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--5XlBR6T6ShaPOTVWpuRZq0gVfhoZmNkA05OCh6" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--5blP8RDVhXSuY71KqQVvoXfbA4iamfBpeqHPxJ" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--5blP8RDVhXSuY71KqQVvoXfbA4iamfBpeqHPxJ" [crd-writes]',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--9EEO9Ct10G5f7GxiD4wleoAZFtA88Q43TWYhWA"',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--9EEO9Ct10G5f7GxiD4wleoAZFtA88Q43TWYhWA" [bind]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--9EEO9Ct10G5f7GxiD4wleoAZFtA88Q43TWYhWA" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--9EEO9Ct10G5f7GxiD4wleoAZFtA88Q43TWYhWA" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--9EEO9Ct10G5f7GxiD4wleoAZFtA88Q43TWYhWA" [crd-writes]',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa"',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa" [exec-pods]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa" [crd-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--8nHoqTvMZGpAI4mmsxp5MKK0mhED4aqNDsI0Aa" [apiservice-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--7cluUVOJXR5Xit0yRMLcrJEiiRQpN6OMoZOtgo" [read-secrets]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--7cluUVOJXR5Xit0yRMLcrJEiiRQpN6OMoZOtgo" [mint-tokens]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--7cluUVOJXR5Xit0yRMLcrJEiiRQpN6OMoZOtgo" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--7cluUVOJXR5Xit0yRMLcrJEiiRQpN6OMoZOtgo" [apiservice-writes]',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--4UEmEvj2a3Dc9DHbno1vi5khf5Ua30E9huyyih"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--4UEmEvj2a3Dc9DHbno1vi5khf5Ua30E9huyyih"',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--4UEmEvj2a3Dc9DHbno1vi5khf5Ua30E9huyyih" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--4UEmEvj2a3Dc9DHbno1vi5khf5Ua30E9huyyih" [crd-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--4UEmEvj2a3Dc9DHbno1vi5khf5Ua30E9huyyih" [apiservice-writes]',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged--1yZmDnEhEiXuoUBtL87HcLuOm1UFB83VVczPe7"',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--43tLT4EsuUpjNbvb3qobA1TimzfS3bVPUh9jtz" [admission-writes]',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged--43tLT4EsuUpjNbvb3qobA1TimzfS3bVPUh9jtz" [crd-writes]',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hostpath-provisioner-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hostpath-provisioner-operator"',
    ],
    "node-maintenance-operator-0.0.1.clusterserviceversion.yaml": [
        'k8s-no-wildcard-access ClusterRole "node-maintenance-operato-1GLeZOJ2RW16gVvkr7NIpMLUgh6yq2Z78l4DD9"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.node-maintenance-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.node-maintenance-operator-controller-manager"',
    ],
    "opentelemetry-operator-0.158.0.clusterserviceversion.yaml": [
        'k8s-no-broad-grants ClusterRole "opentelemetry-operator.v-b7Xible743F7fkEgT6o3AJDHCJkYhJwDTk0Uif" [read-secrets]',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
    ],
    "packageserver-0.16.1.clusterserviceversion.yaml": [],
    "prometheusoperator-0.22.2.clusterserviceversion.yaml": [],
    "strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml": [
        'k8s-no-broad-grants ClusterRole "strimzi-cluster-operator.-XKjzweRSapkFlyZ8RgSnDhX86xYNegNFF572D" [read-secrets]',
    ],
};

/** The restricted Pod Security Standard's controls each CSV's Deployments miss on plain Kubernetes (each leaves them to the SCC on OpenShift). */
const KUBERNETES_SHORTFALLS: Record<string, string[]> = {
    "argocd-operator-0.19.0.clusterserviceversion.yaml": [],
    "cert-manager-1.16.1.clusterserviceversion.yaml": [],
    "etcdoperator-0.9.4.clusterserviceversion.yaml": ["Privilege Escalation", "Running as Non-root", "Seccomp", "Capabilities"],
    "kubevirt-hyperconverged-operator-1.14.0.clusterserviceversion.yaml": [],
    "node-maintenance-operator-0.0.1.clusterserviceversion.yaml": ["Seccomp"],
    "opentelemetry-operator-0.158.0.clusterserviceversion.yaml": ["Privilege Escalation", "Running as Non-root", "Seccomp", "Capabilities"],
    "prometheusoperator-0.22.2.clusterserviceversion.yaml": ["Running as Non-root", "Seccomp", "Capabilities"],
    "strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml": [
        "Privilege Escalation",
        "Running as Non-root",
        "Seccomp",
        "Capabilities",
    ],
    "packageserver-0.16.1.clusterserviceversion.yaml": ["Privilege Escalation", "Running as Non-root", "Seccomp", "Capabilities"],
};

describe("stacks that install each real CSV, on OpenShift, through both packs", () => {
    test("GIVEN the expectations below THEN they cover exactly the CSVs in the test data", () => {
        expect(Object.keys(CSV_FINDINGS).sort()).toEqual(CSV_FILES);
        expect(Object.keys(KUBERNETES_SHORTFALLS).sort()).toEqual(CSV_FILES);
    });

    test.each(Object.keys(CSV_FINDINGS))(
        "GIVEN a stack installing %s WHEN rendered and analyzed as the stack configures the packs THEN pod security (restricted-v2) and aws-tags report nothing, and k8s-rbac only the CSV's own RBAC and webhook findings",
        async (file) => {
            const operators = [
                {
                    name: "op",
                    csv: `${CSV_DIR}/${file}`,
                    namespace: "ops",
                    targetNamespaces: NAMESPACED_CSVS.includes(file) ? ["ops"] : [],
                },
            ];
            const result = await renderOperators(operators, { platform: "openshift" });
            expect(result.errors).toEqual([]);
            const config = validateStackConfig({ cluster: { name: "test", platform: "openshift", kubeContext: "test" }, operators });
            if (!config.ok) {
                throw new Error(formatReport(config.problems));
            }
            const analysis = await analyzeWithBothPacks(await sharedPacks(), result, policyConfigFor(config.config));
            expect(analysis["aws-tags"].diagnostics).toEqual([]);
            expect(
                analysis["k8s-rbac"].diagnostics.map((d) => `${d.policyName} ${/^\w+ "[^"]+"( \[[a-z-]+\])?/.exec(d.violation)?.[0]}`),
            ).toEqual(CSV_FINDINGS[file]);

            // The same Deployments against the restricted Pod Security Standard, as on a plain Kubernetes cluster.
            const shortfalls = objectsOf(result, "Deployment").flatMap((d) =>
                restrictedProfileViolations(podOf("Deployment", d)?.spec ?? {}, {}, { platform: "kubernetes" }).map((v) => v.check),
            );
            expect([...new Set(shortfalls)]).toEqual(KUBERNETES_SHORTFALLS[file]);
        },
    );
});
