import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { validateStackConfig } from "../../components/config";
import { kubeconfigContents } from "../../components/shared/cluster";
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
        // The empty kubeconfig keeps the SDK from filling in $KUBECONFIG: the provider then uses the pod's service account.
        ["inCluster", { inCluster: true }, { kubeconfig: "" }],
        // Empty there too: provider 4.25.0 refuses the runner's $KUBECONFIG, which the SDK would fill in, beside a render directory.
        ["renderYamlToDirectory", { renderYamlToDirectory: "out/prod" }, { renderYamlToDirectory: "out/prod", kubeconfig: "" }],
    ])("GIVEN cluster.%s WHEN rendered THEN both Kubernetes providers connect exactly so", async (_key, cluster, connection) => {
        const result = await renderConfig({ cluster: { name: "prod", platform: "kubernetes", ...cluster } });
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes").inputs).toEqual({
            ...connection,
            enableServerSideApply: "true",
        });
        // @pulumi/kubernetes 4.25.0's Provider serializes only the arguments it declares, so the adopting
        // provider's `upsertExistingObjects` (provider 4.29+) does not reach 4.25.0, whose creates upsert.
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes-adopting").inputs).toEqual({
            ...connection,
            enableServerSideApply: "true",
        });
    });
});

describe("nothing of the runner in the provider's inputs", () => {
    const KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\ncurrent-context: ""\n';
    let directory: string;
    let saved: string | undefined;
    beforeEach(() => {
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "runner-home-"));
        saved = process.env.KUBECONFIG;
    });
    afterEach(() => {
        fs.rmSync(directory, { recursive: true, force: true });
        if (saved === undefined) {
            delete process.env.KUBECONFIG;
        } else {
            process.env.KUBECONFIG = saved;
        }
    });

    /** Every string anywhere in the rendered resources' inputs. */
    const strings = (value: unknown): string[] =>
        typeof value === "string" ? [value] : value && typeof value === "object" ? Object.values(value).flatMap(strings) : [];

    test("GIVEN a colon-separated KUBECONFIG on the runner and cluster.kubeContext WHEN rendered THEN no input of any resource holds any of its paths, and the providers take the context alone", async () => {
        process.env.KUBECONFIG = [path.join(directory, "alice", "config"), path.join(directory, "team", "config")].join(path.delimiter);
        const result = await renderConfig({ cluster: { name: "prod", platform: "kubernetes", kubeContext: "prod-admin" } });
        expect(result.problems).toEqual([]);
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes").inputs).toEqual({
            context: "prod-admin",
            kubeconfig: "",
            enableServerSideApply: "true",
        });
        expect(result.resources.flatMap((r) => strings(r.inputs)).filter((s) => s.includes(directory))).toEqual([]);
    });

    test("GIVEN cluster.kubeconfig naming a file WHEN rendered THEN the providers take its contents as a secret, never its path", async () => {
        const file = path.join(directory, "prod.yaml");
        fs.writeFileSync(file, KUBECONFIG);
        process.env.KUBECONFIG = path.join(directory, "elsewhere");
        const result = await renderConfig({ cluster: { name: "prod", platform: "kubernetes", kubeconfig: file } });
        expect(result.problems).toEqual([]);
        for (const name of ["kubernetes", "kubernetes-adopting"]) {
            const inputs = resourceNamed(result, "pulumi:providers:kubernetes", name).inputs as Record<string, unknown>;
            expect(inputs.kubeconfig).toBe("[secret]");
        }
        expect(result.resources.flatMap((r) => strings(r.inputs)).filter((s) => s.includes(directory))).toEqual([]);
    });

    test("GIVEN a relative cluster.kubeconfig WHEN its contents are read THEN it is the project's file whatever the working directory, and a missing one names the field and where it looked", () => {
        fs.mkdirSync(path.join(directory, "kube"));
        fs.writeFileSync(path.join(directory, "kube", "prod.yaml"), KUBECONFIG);
        expect(kubeconfigContents("kube/prod.yaml", directory)).toBe(KUBECONFIG);
        expect(() => kubeconfigContents("kube/missing.yaml", directory)).toThrow(
            `cluster.kubeconfig: "kube/missing.yaml" cannot be read (ENOENT, resolved to ${path.join(directory, "kube", "missing.yaml")}): it must name a kubeconfig file, relative to the project directory`,
        );
    });
});
