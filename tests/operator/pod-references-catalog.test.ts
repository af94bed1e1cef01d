/**
 * Who provides what a Deployment's pods reference, judged on real community bundles
 * (../shared/testdata/community-bundles), one per class of the catalog's former 236 refusals.
 * Expected answers come from the bundle files and the upstream code that creates each object,
 * cited per test, never from the rule module: the kubelet (pull Secrets), OpenShift's service-ca
 * (annotated Services), the operator's own start-up code (HyperConverged's PriorityClass), and
 * the admin (ACK's user config, which ACK's docs tell the admin to create first).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { operatorsSchema } from "../../components/config/schema";
import { planOperators } from "../../components/operator/plan";
import { referenceKey, requiredOn } from "../../components/operator/pod-references";
import { BUNDLES_ROOT, CATALOG_OLM } from "../helpers/catalog";
import { readCsv, writeBundle, type Yaml } from "../helpers/operators";
import { ROOT } from "../helpers/render";

/** The plan of one bundle installed into namespace `ops` (AllNamespaces, else OwnNamespace): its required objects and its pod warnings. */
function planned(bundle: string) {
    const manifests = path.join(BUNDLES_ROOT, bundle, "manifests");
    return plannedCsv(
        path.join(
            manifests,
            fs.readdirSync(manifests).find((f) => f.includes("clusterserviceversion"))!,
        ),
    );
}

/** The same for a CSV file. */
function plannedCsv(csv: string) {
    const modes = (parse(fs.readFileSync(csv, "utf8")) as { spec: { installModes: { type: string; supported: boolean }[] } }).spec
        .installModes;
    const all = modes.some((m) => m.type === "AllNamespaces" && m.supported);
    const [config] = operatorsSchema.parse([{ name: "op", csv, namespace: "ops", targetNamespaces: all ? [] : ["ops"] }]);
    const result = planOperators([config], CATALOG_OLM, ROOT);
    expect(result.problems).toEqual([]);
    const references = result.plans[0].clusterReferences;
    return {
        required: (platform: string) => requiredOn(platform, references).map((r) => referenceKey(r.ref)),
        why: (ref: string) => references.find((r) => referenceKey(r.ref) === ref)?.why ?? "",
        warnings: result.warnings.filter((w) => / needs | pull Secret /.test(w)),
    };
}

/** A bundle manifest's parsed object. */
const manifest = (bundle: string, file: string) =>
    parse(fs.readFileSync(path.join(BUNDLES_ROOT, bundle, "manifests", file), "utf8")) as Yaml;

describe("objects a real install provides before or while the pod starts", () => {
    test("GIVEN pubsubplus, whose pod names pull Secret regcred nobody provides WHEN planned THEN nothing is required of the cluster and a warning names it (the kubelet pulls without it)", () => {
        // kubernetes pkg/kubelet/kubelet_pods.go `getPullSecretsForPod`: a missing pull Secret is an
        // event (FailedToRetrieveImagePullSecret), and the pull goes on with the node's credentials.
        const bundle = "pubsubplus-eventbroker-operator/1.4.2";
        const csv = manifest(bundle, "pubsubplus-eventbroker-operator.clusterserviceversion.yaml");
        expect(csv.spec.install.spec.deployments[0].spec.template.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
        const plan = planned(bundle);
        expect(plan.required("kubernetes")).toEqual([]);
        expect(plan.warnings).toEqual([expect.stringContaining("names image pull Secret Secret ops/regcred")]);
    });

    test("GIVEN keepalived (alpha annotation) and file-integrity's console plugin (beta annotation), whose pods mount the Secret their bundle Service asks service-ca for WHEN planned THEN OpenShift provides it and Kubernetes requires it, naming the Service", () => {
        // openshift/service-ca-operator pkg/controller/api/api.go: both annotations name the Secret the
        // serving-cert controller (servingcert/controller/secret_creating_controller.go) creates.
        const cases = [
            [
                "keepalived-operator/1.5.4",
                "keepalived-operator-controller-manager-metrics_v1_service.yaml",
                "service.alpha.openshift.io/serving-cert-secret-name",
            ],
            [
                "file-integrity-console-plugin/0.4.1-ocp4.19",
                "file-integrity-console-plugin_core_v1_service.yaml",
                "service.beta.openshift.io/serving-cert-secret-name",
            ],
        ] as const;
        for (const [bundle, file, annotation] of cases) {
            const service = manifest(bundle, file);
            const secret = `Secret ops/${service.metadata.annotations[annotation]}`;
            const plan = planned(bundle);
            expect(plan.required("openshift")).toEqual([]);
            expect(plan.required("kubernetes")).toEqual([secret]);
            expect(plan.why(secret)).toContain(`OpenShift's service-ca creates it for the bundle's Service "${service.metadata.name}"`);
            expect(plan.why(secret)).toContain(`create a kubernetes.io/tls Secret "${service.metadata.annotations[annotation]}"`);
        }
    });

    test("GIVEN HyperConverged, whose virt-operator and four other Deployments run at PriorityClass kubevirt-cluster-critical WHEN planned THEN it is not required: the operator's own Deployment creates it at start (a warning names it)", () => {
        // kubevirt/hyperconverged-cluster-operator cmd/hyperconverged-cluster-operator/main.go
        // `createPriorityClass`: "KubeVirtPriorityClass is needed by virt-operator but OLM is not able
        // to create it so we have to create it ASAP"; the CSV grants its ServiceAccount create on priorityclasses.
        const plan = planned("community-kubevirt-hyperconverged/1.18.1");
        expect(plan.required("kubernetes")).toEqual([]);
        const needing = plan.warnings.filter((w) => w.includes("PriorityClass kubevirt-cluster-critical"));
        expect(needing.map((w) => /^.*?deployment "([^"]+)"/.exec(w)?.[1]).sort()).toEqual([
            "aaq-operator",
            "cdi-operator",
            "hostpath-provisioner-operator",
            "kubevirt-migration-operator",
            "virt-operator",
        ]);
        // hco-operator runs the code above; hco-webhook runs as the same ServiceAccount, so it may too.
        for (const w of needing) expect(w).toContain(`deployment "hco-operator", "hco-webhook" of the same CSV may create it`);
    });

    test("GIVEN an ACK controller, whose envFrom reads ConfigMap ack-s3-user-config with optional: false WHEN planned THEN it is required on both platforms, naming Deployment, field and object: the admin creates it (ACK's OpenShift install docs)", () => {
        // aws-controllers-k8s docs, user-docs/openshift ("Pre-installation instructions"): the admin
        // creates ack-<service>-user-config (and the optional -user-secrets) before installing.
        const plan = planned("ack-s3-controller/1.10.0");
        expect(plan.required("kubernetes")).toEqual(["ConfigMap ops/ack-s3-user-config"]);
        expect(plan.required("openshift")).toEqual(["ConfigMap ops/ack-s3-user-config"]);
        const why = plan.why("ConfigMap ops/ack-s3-user-config");
        expect(why).toContain(`deployment "ack-s3-controller" of operator "op" needs it`);
        expect(why).toContain("spec.install.spec.deployments[0].spec.template.spec.containers[0].envFrom[0].configMapRef.name");
        expect(why).toContain("create it first");
    });

    test("GIVEN a real CSV whose pod mounts kube-root-ca.crt and openshift-service-ca.crt (a projected volume, as OpenShift's default one) WHEN planned THEN kube-root-ca.crt is never asked of the cluster (every namespace gets it, even one the stack creates) and openshift-service-ca.crt is required on Kubernetes only", () => {
        // kubernetes pkg/controller/certificates/rootcacertpublisher/publisher.go and openshift/kubernetes
        // openshift-kube-controller-manager/servicecacertpublisher/publisher.go create them in each new namespace.
        const csv = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
        const pod = csv.spec.install.spec.deployments[0].spec.template.spec;
        pod.volumes = [
            ...(pod.volumes ?? []),
            {
                name: "cas",
                projected: {
                    sources: [
                        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                        { configMap: { name: "openshift-service-ca.crt", items: [{ key: "service-ca.crt", path: "service-ca.crt" }] } },
                    ],
                },
            },
        ];
        pod.containers[0].volumeMounts = [...(pod.containers[0].volumeMounts ?? []), { name: "cas", mountPath: "/cas" }];
        const plan = plannedCsv(writeBundle(csv));
        expect(plan.required("openshift")).toEqual([]);
        expect(plan.required("kubernetes")).toEqual(["ConfigMap ops/openshift-service-ca.crt"]);
        expect(plan.why("ConfigMap ops/openshift-service-ca.crt")).toContain(
            "OpenShift's service CA publisher creates it in every namespace",
        );
    });
});
