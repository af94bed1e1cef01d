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
import { analyzeWithBothPacks, enginesFor } from "../../scripts/policy/stacks";
import { CSV_DIR, CSV_FILES, NAMESPACED_CSVS, objectsOf, renderOperators } from "../helpers/operators";

/** What the k8s-rbac pack reports of each CSV's install besides pod security: `policy object`, in order. */
const CSV_FINDINGS: Record<string, string[]> = {
    "argocd-operator-0.19.0.clusterserviceversion.yaml": [
        'k8s-no-wildcard-access ClusterRole "argocd-operator.v0.19.0-bfbc69fb9"',
        'k8s-no-broad-grants ClusterRole "argocd-operator.v0.19.0-bfbc69fb9"',
    ],
    "cert-manager-1.16.1.clusterserviceversion.yaml": [
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.cert-manager-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.cert-manager-webhook"',
    ],
    "etcdoperator-0.9.4.clusterserviceversion.yaml": [],
    "kubevirt-hyperconverged-operator-1.14.0.clusterserviceversion.yaml": [
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-7858c99bdd"',
        'k8s-no-broad-grants ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-7858c99bdd"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-5fb5c69785"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-5fb5c69785"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-755d4d6564"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-755d4d6564"',
        'k8s-no-wildcard-access ClusterRole "kubevirt-hyperconverged-operator.v1.14.0-86cbc69fc9"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hco-webhook"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.ssp-operator"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.hostpath-provisioner-operator"',
    ],
    "node-maintenance-operator-0.0.1.clusterserviceversion.yaml": [
        'k8s-no-wildcard-access ClusterRole "node-maintenance-operator.v0.0.1-66cd798bc9"',
        'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.node-maintenance-operator-controller-manager"',
    ],
    "opentelemetry-operator-0.158.0.clusterserviceversion.yaml": [
        ...["minstrumentation", "mopampbridge", "mopentelemetrycollectorbeta", "mtargetallocatorbeta"].map(
            () => 'k8s-webhook-fail-closed-availability MutatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        ),
        ...["vinstrumentation", "vopampbridge", "vopentelemetrycollector", "vtargetallocator"].map(
            () => 'k8s-webhook-fail-closed-availability ValidatingWebhookConfiguration "ops.opentelemetry-operator-controller-manager"',
        ),
    ],
    "prometheusoperator-0.22.2.clusterserviceversion.yaml": [
        'k8s-no-broad-grants Role "ops/prometheusoperator.0.22.2-prometheus-operator-0-22-2-64c4dfff47"',
    ],
    "strimzi-cluster-operator-0.12.2.clusterserviceversion.yaml": [],
    "packageserver-0.16.1.clusterserviceversion.yaml": [],
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
            const analysis = analyzeWithBothPacks(enginesFor(config.config), result);
            expect(analysis["aws-tags"].diagnostics).toEqual([]);
            expect(analysis["k8s-rbac"].diagnostics.map((d) => `${d.policyName} ${/^\w+ "[^"]+"/.exec(d.violation)?.[0]}`)).toEqual(
                CSV_FINDINGS[file],
            );

            // The same Deployments against the restricted Pod Security Standard, as on a plain Kubernetes cluster.
            const shortfalls = objectsOf(result, "Deployment").flatMap((d) =>
                restrictedProfileViolations(podOf("Deployment", d)?.spec ?? {}, {}, { platform: "kubernetes" }).map((v) => v.check),
            );
            expect([...new Set(shortfalls)]).toEqual(KUBERNETES_SHORTFALLS[file]);
        },
    );
});
