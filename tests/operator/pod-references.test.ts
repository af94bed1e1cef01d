/**
 * What a CSV Deployment's pods need before they start (components/operator/pod-references.ts), for
 * the classes the kubelet and admission decide on.
 */
import { podReferences } from "../../components/operator/pod-references";

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
});
