/**
 * A CSV's `spec.nativeAPIs` checked as OLM checks them (operator-lifecycle-manager
 * pkg/controller/operators/olm/requirements.go, `requirementStatus` and `isGVKRegistered`):
 * discovery of each group version must list the kind, or the CSV stays Pending with "Native API does
 * not exist" and nothing of it is created. The served kinds the renders below answer with are the
 * render's model of a current cluster, whose Kubernetes part is the real tier's kube-apiserver
 * discovery (components/shared/api-resources.table.json); the live check against a real API server
 * is tests/real/min-kube-version.real.ts. The catalog's Go oracle judges the 248 community bundles
 * with the same rule (tests/catalog/oracle/olm.go): six name nativeAPIs, all served.
 */
import { describeNativeApi, missingNativeApis, type NativeApi, nativeApiProblems } from "../../components/operator/native-apis";
import { CURRENT_CLUSTER_KINDS } from "../../scripts/render/render";
import { readCsv, renderOperators, writeBundle } from "../helpers/operators";

const gvk = (group: string, version: string, kind: string): NativeApi => ({ group, version, kind });

/** A discovery of these group versions (kind → scope), recording what it is asked. */
function discovery(served: Record<string, string[]>): {
    asked: string[];
    served: (gv: string) => Promise<Map<string, { namespaced: boolean }> | undefined>;
} {
    const asked: string[] = [];
    return {
        asked,
        served: async (groupVersion) => {
            asked.push(groupVersion);
            const kinds = served[groupVersion];
            return kinds && new Map(kinds.map((kind) => [kind, { namespaced: true }]));
        },
    };
}

describe("which native APIs a cluster lacks (isGVKRegistered)", () => {
    test("GIVEN native APIs of the core group, a named group, a kind the group version lacks, a group version not served, and empty fields WHEN checked THEN exactly the unserved ones are missing, each group version asked once", async () => {
        const cluster = discovery({ v1: ["Pod", "Service"], "apps/v1": ["Deployment"] });
        const apis = [
            gvk("", "v1", "Pod"),
            gvk("apps", "v1", "Deployment"),
            gvk("", "v1", "Service"),
            gvk("apps", "v1", "DeploymentConfig"),
            gvk("route.openshift.io", "v1", "Route"),
            gvk("route.openshift.io", "v1", "Route"),
            // metav1.GroupVersion{}.String() is "" (client-go: "groupVersion shouldn't be empty"); "apps/" is no group version.
            gvk("", "", "Pod"),
            gvk("apps", "", "Deployment"),
            gvk("apps", "v1", ""),
        ];

        const missing = await missingNativeApis(apis, cluster.served);

        expect(missing).toEqual([
            gvk("apps", "v1", "DeploymentConfig"),
            gvk("route.openshift.io", "v1", "Route"),
            gvk("route.openshift.io", "v1", "Route"),
            gvk("", "", "Pod"),
            gvk("apps", "", "Deployment"),
            gvk("apps", "v1", ""),
        ]);
        expect(cluster.asked).toEqual(["v1", "apps/v1", "route.openshift.io/v1"]);
    });

    test("GIVEN a GroupVersionKind WHEN described THEN it reads as apimachinery prints one", () => {
        expect([gvk("", "v1", "Pod"), gvk("route.openshift.io", "v1", "Route")].map(describeNativeApi)).toEqual([
            "/v1, Kind=Pod",
            "route.openshift.io/v1, Kind=Route",
        ]);
    });

    test("GIVEN installs whose CSVs name no native API WHEN checked THEN discovery is not asked; GIVEN two that do THEN each unserved one is a problem on its install", async () => {
        const cluster = discovery({ "apps/v1": ["Deployment"] });
        const plan = (name: string, nativeApis: NativeApi[]) => ({ config: { name, csv: `${name}.yaml` }, nativeApis });
        const operators = [{ name: "a" }, { name: "b" }, { name: "c" }];
        expect(await nativeApiProblems([plan("a", []), plan("b", [])], operators, cluster.served)).toEqual([]);
        expect(cluster.asked).toEqual([]);

        const problems = await nativeApiProblems(
            [
                plan("a", [gvk("apps", "v1", "Deployment")]),
                plan("b", []),
                plan("c", [gvk("route.openshift.io", "v1", "Route"), gvk("", "v1", "Pod")]),
            ],
            operators,
            cluster.served,
        );

        expect(problems).toEqual([
            {
                path: "operators[2].csv",
                message:
                    '"c.yaml" spec.nativeAPIs: this cluster does not serve route.openshift.io/v1, Kind=Route; /v1, Kind=Pod, and OLM leaves this CSV Pending, RequirementsNotMet: "Native API does not exist" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, requirementStatus); install the operator on a cluster that serves them, or install what serves them first',
            },
        ]);
    });
});

/** The real node-maintenance bundle with `spec.nativeAPIs` set (none as shipped); returns the CSV's path. */
function bundle(nativeApis: unknown): string {
    const csv = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
    csv.spec.nativeAPIs = nativeApis;
    return writeBundle(csv);
}

const install = (csv: string) => ({ name: "op", csv, namespace: "op", createNamespace: true, targetNamespaces: [] });

describe("the pre-flight refuses an operator whose CSV's nativeAPIs the cluster does not serve", () => {
    const openshiftApis = [
        { group: "apps", version: "v1", kind: "Deployment" },
        { group: "", version: "v1", kind: "Service" },
        { group: "route.openshift.io", version: "v1", kind: "Route" },
        { group: "console.openshift.io", version: "v1", kind: "ConsolePlugin" },
    ];

    test("GIVEN a CSV naming Deployments, Services, Routes and ConsolePlugins (openshift-integration-operator's nativeAPIs) WHEN previewed on the render's current cluster THEN it installs", async () => {
        const result = await renderOperators([install(bundle(openshiftApis))]);

        expect(result.errors).toEqual([]);
        expect(result.resources.some((r) => r.type === "kubernetes:apps/v1:Deployment")).toBe(true);
    });

    test("GIVEN the same CSV WHEN previewed on a cluster without OpenShift's route API THEN nothing is registered and the problem names the install, the file and the missing kind", async () => {
        const csv = bundle(openshiftApis);
        const withoutRoutes = Object.fromEntries(
            Object.entries(CURRENT_CLUSTER_KINDS).filter(([groupVersion]) => groupVersion !== "route.openshift.io/v1"),
        );

        const result = await renderOperators([install(csv)], { render: { servedKinds: withoutRoutes } });

        expect(result.resources).toEqual([]);
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: ${JSON.stringify(csv)} spec.nativeAPIs: this cluster does not serve route.openshift.io/v1, Kind=Route, and OLM leaves this CSV Pending, RequirementsNotMet: "Native API does not exist" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, requirementStatus); install the operator on a cluster that serves them, or install what serves them first`,
        ]);
    });

    test("GIVEN native APIs with missing fields, or not a list of objects WHEN planned THEN missing fields read as empty (as Go decodes them) and are unserved, and a wrong type fails the CSV's decoding", async () => {
        const missingFields = await renderOperators([install(bundle([{ group: "apps", kind: "Deployment" }]))]);
        expect(missingFields.errors).toHaveLength(1);
        expect(missingFields.errors[0]).toContain("spec.nativeAPIs: this cluster does not serve apps/, Kind=Deployment, and OLM leaves");

        const wrongType = await renderOperators([install(bundle([{ group: "apps", version: 1, kind: "Deployment" }]))]);
        expect(wrongType.resources).toEqual([]);
        expect(wrongType.errors.join("\n")).toContain("spec.nativeAPIs[0].version");
    });
});
