import { validateStackConfig } from "../../components/config";
import { formatProblem } from "../../components/shared/problems";
import { renderConfig, resourceNamed } from "../helpers/render";

const problems = (cluster: Record<string, unknown>) => {
    const result = validateStackConfig({ cluster: { name: "prod", platform: "openshift", ...cluster } });
    return result.ok ? [] : result.problems.map(formatProblem);
};

const NONE_SET =
    "cluster-platform:cluster.kubeContext: a live stack (no cluster.renderYamlToDirectory) must name its cluster with exactly one of cluster.kubeContext, cluster.kubeconfig, cluster.inCluster (true), and none is set: set cluster.kubeContext to a kubeconfig context, cluster.kubeconfig to a kubeconfig file, or cluster.inCluster to true in a pod of the cluster";

describe("which cluster a stack applies to", () => {
    test.each([
        ["nothing", {}, [NONE_SET]],
        ["inCluster false alone", { inCluster: false }, [NONE_SET]],
        [
            "kubeContext and kubeconfig",
            { kubeContext: "prod", kubeconfig: "kube/prod.yaml" },
            [
                "cluster-platform:cluster.kubeContext: a live stack (no cluster.renderYamlToDirectory) must name its cluster with exactly one of cluster.kubeContext, cluster.kubeconfig, cluster.inCluster (true), and cluster.kubeContext, cluster.kubeconfig are all set: set cluster.kubeContext to a kubeconfig context, cluster.kubeconfig to a kubeconfig file, or cluster.inCluster to true in a pod of the cluster",
            ],
        ],
        [
            "renderYamlToDirectory and a context",
            { renderYamlToDirectory: "out/prod", kubeContext: "prod" },
            [
                "cluster-platform:cluster.kubeContext: cluster.kubeContext must not be set with cluster.renderYamlToDirectory: a render-to-directory stack reaches no cluster (the Kubernetes provider refuses a context or kubeconfig next to renderYamlToDirectory)",
            ],
        ],
        ["renderYamlToDirectory alone", { renderYamlToDirectory: "out/prod" }, []],
        ["kubeContext alone", { kubeContext: "prod" }, []],
        ["kubeconfig alone", { kubeconfig: "kube/prod.yaml" }, []],
        ["inCluster true alone", { inCluster: true }, []],
    ])("GIVEN a cluster with %s WHEN validated THEN the problems are exactly these", (_what, cluster, expected) => {
        expect(problems(cluster)).toEqual(expected);
    });

    test("GIVEN a live stack without a named cluster WHEN rendered THEN nothing is registered and the problem names cluster.kubeContext", async () => {
        const result = await renderConfig({ cluster: { name: "prod", platform: "kubernetes" } });
        expect(result.problems.map((p) => p.path)).toEqual(["cluster.kubeContext"]);
        expect(result.resources).toEqual([]);
    });

    test.each([
        // An empty kubeconfig beside the context keeps the runner's $KUBECONFIG path out of the provider's state.
        ["kubeContext", { kubeContext: "prod-admin" }, { context: "prod-admin", kubeconfig: "" }],
        ["kubeconfig", { kubeconfig: "kube/prod.yaml" }, { kubeconfig: "kube/prod.yaml" }],
        // The empty kubeconfig keeps the SDK from filling in $KUBECONFIG: the provider then uses the pod's service account.
        ["inCluster", { inCluster: true }, { kubeconfig: "" }],
        ["renderYamlToDirectory", { renderYamlToDirectory: "out/prod" }, { renderYamlToDirectory: "out/prod" }],
    ])("GIVEN cluster.%s WHEN rendered THEN both Kubernetes providers connect exactly so", async (_key, cluster, connection) => {
        const result = await renderConfig({ cluster: { name: "prod", platform: "kubernetes", ...cluster } });
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes").inputs).toEqual({
            ...connection,
            enableServerSideApply: "true",
        });
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes-adopting").inputs).toEqual({
            ...connection,
            enableServerSideApply: "true",
            upsertExistingObjects: "true",
        });
    });
});
