/**
 * What a CSV Deployment's pods need before they start (components/operator/pod-references.ts), for
 * the classes the kubelet and admission decide on.
 */
import {
    inEveryNamespace,
    inEveryOpenShiftNamespace,
    operatorCreators,
    podReferences,
    requiredOn,
    servingCertSecrets,
} from "../../components/operator/pod-references";
import type { ObjectRef } from "../../components/shared/object-refs";

const spec = (pod: Record<string, unknown>) => ({ template: { spec: { containers: [{ name: "manager" }], ...pod } } });
const needed = (pod: Record<string, unknown>) =>
    podReferences(spec(pod), "ops").map((r) => `${r.ref.kind} ${r.ref.namespace ?? ""}/${r.ref.name} at ${r.field}`);

describe("objects a pod needs", () => {
    test("GIVEN the API server's own PriorityClasses WHEN named THEN they are not needed (every cluster has them); another PriorityClass is", () => {
        // kubernetes pkg/registry/scheduling/rest/storage_scheduling.go creates system-node-critical and
        // system-cluster-critical at start; the real tier's API server has them (kubectl get priorityclass).
        expect(needed({ priorityClassName: "system-node-critical" })).toEqual([
            "ServiceAccount ops/default at template.spec.serviceAccountName",
        ]);
        expect(needed({ priorityClassName: "system-cluster-critical" })).toEqual([
            "ServiceAccount ops/default at template.spec.serviceAccountName",
        ]);
        expect(needed({ priorityClassName: "kubevirt-cluster-critical", serviceAccountName: "op" })).toEqual([
            "ServiceAccount ops/op at template.spec.serviceAccountName",
            "PriorityClass /kubevirt-cluster-critical at template.spec.priorityClassName",
        ]);
    });

    test("GIVEN a volume no container mounts and an optional Secret WHEN judged THEN neither is needed; a mounted ConfigMap is", () => {
        expect(
            needed({
                serviceAccountName: "op",
                containers: [
                    {
                        name: "manager",
                        volumeMounts: [
                            { name: "config", mountPath: "/c" },
                            { name: "maybe", mountPath: "/m" },
                        ],
                    },
                ],
                volumes: [
                    { name: "config", configMap: { name: "manager-config" } },
                    { name: "maybe", secret: { secretName: "opt", optional: true } },
                    { name: "unused", secret: { secretName: "never-read" } },
                ],
            }),
        ).toEqual([
            "ServiceAccount ops/op at template.spec.serviceAccountName",
            "ConfigMap ops/manager-config at template.spec.volumes[0].configMap.name",
        ]);
    });

    test("GIVEN image pull Secrets WHEN judged THEN they are listed as pull-only: the kubelet pulls without a missing one (kubelet_pods.go getPullSecretsForPod)", () => {
        const refs = podReferences(spec({ serviceAccountName: "op", imagePullSecrets: [{ name: "regcred" }] }), "ops");
        expect(refs.map((r) => [r.ref.kind, r.ref.name, r.field, r.pullOnly ?? false])).toEqual([
            ["ServiceAccount", "op", "template.spec.serviceAccountName", false],
            ["Secret", "regcred", "template.spec.imagePullSecrets[0].name", true],
        ]);
    });
});

const ref = (kind: string, name: string, namespace?: string, apiVersion = "v1", plural = `${kind.toLowerCase()}s`): ObjectRef => ({
    apiVersion,
    kind,
    plural,
    name,
    ...(namespace ? { namespace } : {}),
});

describe("who provides a referenced object", () => {
    test("GIVEN the objects every namespace gets WHEN asked THEN Kubernetes' own (rootcacertpublisher, serviceaccounts controller) are everywhere and openshift-service-ca.crt on OpenShift only", () => {
        expect(inEveryNamespace(ref("ConfigMap", "kube-root-ca.crt", "ops"))).toBe(true);
        expect(inEveryNamespace(ref("ServiceAccount", "default", "ops"))).toBe(true);
        expect(inEveryNamespace(ref("ConfigMap", "openshift-service-ca.crt", "ops"))).toBe(false);
        expect(inEveryNamespace(ref("Secret", "kube-root-ca.crt", "ops"))).toBe(false);
        expect(inEveryOpenShiftNamespace(ref("ConfigMap", "openshift-service-ca.crt", "ops"))).toContain("servicecacertpublisher");
        expect(inEveryOpenShiftNamespace(ref("ConfigMap", "kube-root-ca.crt", "ops"))).toBeUndefined();
        const requirements = [
            { ref: ref("ConfigMap", "openshift-service-ca.crt", "ops"), path: "p", why: "w", openShiftProvides: "service CA publisher" },
            { ref: ref("ConfigMap", "manager-config", "ops"), path: "p", why: "w" },
        ];
        expect(requiredOn("openshift", requirements).map((r) => r.ref.name)).toEqual(["manager-config"]);
        expect(requiredOn("kubernetes", requirements).map((r) => r.ref.name)).toEqual(["openshift-service-ca.crt", "manager-config"]);
    });

    test("GIVEN Services with service-ca's annotations WHEN read THEN each names its Secret, the beta annotation before the alpha one (secret_creating_controller.go requiresCertGeneration)", () => {
        const service = (name: string, annotations: Record<string, string>) => ({ metadata: { name, annotations } });
        expect([
            ...servingCertSecrets([
                service("a", { "service.alpha.openshift.io/serving-cert-secret-name": "a-tls" }),
                service("b", {
                    "service.alpha.openshift.io/serving-cert-secret-name": "b-alpha",
                    "service.beta.openshift.io/serving-cert-secret-name": "b-beta",
                }),
                service("c", { "service.beta.openshift.io/inject-cabundle": "true" }),
            ]),
        ]).toEqual([
            ["a-tls", "a"],
            ["b-beta", "b"],
        ]);
    });

    test("GIVEN CSV grants WHEN asked who may create an object THEN another Deployment whose ServiceAccount may create the resource without resourceNames (cluster-wide for a cluster kind), never the one needing it", () => {
        const deployments = [
            { name: "operator", serviceAccount: "boss" },
            { name: "operand", serviceAccount: "worker" },
        ];
        const priorityClass = ref("PriorityClass", "critical", undefined, "scheduling.k8s.io/v1", "priorityclasses");
        const secret = ref("Secret", "plugin-cert", "ops");
        const create = (apiGroups: string[], resources: string[], resourceNames?: string[]) => ({
            apiGroups,
            resources,
            verbs: ["get", "create"],
            ...(resourceNames ? { resourceNames } : {}),
        });
        // Cluster-wide create on priorityclasses: the operator may create it for the operand.
        expect(
            operatorCreators(priorityClass, "operand", deployments, [
                { serviceAccount: "boss", cluster: true, rules: [create(["scheduling.k8s.io"], ["priorityclasses"])] },
            ]),
        ).toEqual(["operator"]);
        // A namespaced grant cannot create a cluster-scoped object; a create limited by name grants nothing.
        expect(
            operatorCreators(priorityClass, "operand", deployments, [
                { serviceAccount: "boss", cluster: false, rules: [create(["scheduling.k8s.io"], ["priorityclasses"])] },
                { serviceAccount: "boss", cluster: true, rules: [create(["scheduling.k8s.io"], ["priorityclasses"], ["critical"])] },
            ]),
        ).toEqual([]);
        // Wildcards grant it; the Deployment that needs the Secret cannot be the one to create it.
        const wildcard = [{ serviceAccount: "boss", cluster: false, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }];
        expect(operatorCreators(secret, "operand", deployments, wildcard)).toEqual(["operator"]);
        expect(operatorCreators(secret, "operator", deployments, wildcard)).toEqual([]);
        expect(operatorCreators(secret, "operand", deployments, [{ ...wildcard[0], serviceAccount: "worker" }])).toEqual([]);
    });
});
