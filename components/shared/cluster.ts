import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { Problem } from "./problems";

/**
 * What components know about the cluster they declare objects for. Built once by index.ts
 * from validated config; components never read config themselves.
 */
export interface ClusterTarget {
    /** Cluster name, from `cluster.name`. */
    name: string;
    /** `openshift` or `kubernetes`, from `cluster.platform`. */
    platform: "openshift" | "kubernetes";
    /**
     * Whether the Kubernetes provider talks to a live API server. False when it renders
     * YAML to a directory (`cluster.renderYamlToDirectory`): then there is no cluster to read
     * (`.get` fails) and server-side-apply `…Patch` resources cannot be rendered, so
     * components skip them and say so.
     */
    live: boolean;
}

/** The message a component logs when it skips a read or a patch because the provider renders YAML. */
export function skippedWithoutCluster(what: string): string {
    return `skipped ${what}: the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch`;
}

/** How a stack reaches its cluster: the one choice its `cluster` config makes. */
export type ClusterConnection =
    | { kind: "renderYamlToDirectory"; directory: string }
    | { kind: "kubeContext"; context: string }
    | { kind: "kubeconfig"; path: string }
    | { kind: "inCluster" };

/** The `cluster` keys that choose the connection. */
export interface ClusterConnectionSettings {
    renderYamlToDirectory?: string;
    kubeContext?: string;
    kubeconfig?: string;
    inCluster?: boolean;
}

const LIVE_CHOICES = ["kubeContext", "kubeconfig", "inCluster"] as const;

/**
 * The explicit-cluster rule. A live stack (no `renderYamlToDirectory`) names its cluster with
 * exactly one of `kubeContext`, `kubeconfig` (a path) or `inCluster: true`: without one, the
 * Kubernetes provider would apply to whichever context `kubectl config use-context` or
 * `oc login` selected last, and it cannot notice the switch. A render-to-directory stack takes
 * none of them: the provider refuses `context` and `kubeconfig` next to `renderYamlToDirectory`
 * (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go, CheckConfig). Every problem is
 * reported under `cluster.kubeContext`, the key most stacks set.
 */
export function clusterConnection(cluster: ClusterConnectionSettings): { connection?: ClusterConnection; problems: Problem[] } {
    const chosen = LIVE_CHOICES.filter((key) => (key === "inCluster" ? cluster.inCluster === true : cluster[key] !== undefined));
    const named = (keys: readonly string[]) => keys.map((key) => `cluster.${key}`).join(", ");
    if (cluster.renderYamlToDirectory !== undefined) {
        if (chosen.length > 0) {
            return {
                problems: [
                    {
                        path: "cluster.kubeContext",
                        message: `${named(chosen)} must not be set with cluster.renderYamlToDirectory: a render-to-directory stack reaches no cluster (the Kubernetes provider refuses a context or kubeconfig next to renderYamlToDirectory)`,
                    },
                ],
            };
        }
        return { connection: { kind: "renderYamlToDirectory", directory: cluster.renderYamlToDirectory }, problems: [] };
    }
    if (chosen.length !== 1) {
        const found = chosen.length === 0 ? "none is set" : `${named(chosen)} are all set`;
        return {
            problems: [
                {
                    path: "cluster.kubeContext",
                    message: `a live stack (no cluster.renderYamlToDirectory) must name its cluster with exactly one of ${named(LIVE_CHOICES)} (true), and ${found}: set cluster.kubeContext to a kubeconfig context, cluster.kubeconfig to a kubeconfig file, or cluster.inCluster to true in a pod of the cluster`,
                },
            ],
        };
    }
    switch (chosen[0]) {
        case "kubeContext":
            return { connection: { kind: "kubeContext", context: cluster.kubeContext as string }, problems: [] };
        case "kubeconfig":
            return { connection: { kind: "kubeconfig", path: cluster.kubeconfig as string }, problems: [] };
        default:
            return { connection: { kind: "inCluster" }, problems: [] };
    }
}

/**
 * The project directory, where Pulumi.yaml is, that relative config paths are resolved against:
 * the engine's root directory (with Pulumi.yaml's `main` elsewhere, the program's working
 * directory and `__dirname` are not it), else the working directory. The language host passes the
 * root as an absolute path (`--root-directory`, @pulumi/pulumi cmd/run); without one, as under the
 * mock runtime, the SDK answers a placeholder ("rootDirectory", runtime/state.js).
 */
export function projectDirectory(): string {
    const root = pulumi.runtime.getRootDirectory();
    return path.isAbsolute(root) ? root : process.cwd();
}

/**
 * The contents of the kubeconfig file `cluster.kubeconfig` names: a relative path is the
 * project's (resolved against `projectDirectory`, the same file for every runner of a checkout),
 * `~/` the runner's home. Throws a problem naming the field when it cannot be read.
 */
export function kubeconfigContents(file: string, projectDirectory: string): string {
    const resolved = file === "~" || file.startsWith("~/") ? path.join(os.homedir(), file.slice(1)) : path.resolve(projectDirectory, file);
    try {
        return fs.readFileSync(resolved, "utf8");
    } catch (error) {
        throw new Error(
            `cluster.kubeconfig: ${JSON.stringify(file)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}, resolved to ${resolved}): it must name a kubeconfig file, relative to the project directory`,
        );
    }
}

/**
 * The Kubernetes provider arguments that connect it as `connection` says. Nothing of the
 * runner's environment goes in: the provider's inputs are stored in the stack's state and
 * compared by the next runner's DiffConfig, which parses the old `kubeconfig` as a path if one
 * exists there, else as kubeconfig contents, and fails on a path that only existed on the
 * previous runner (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go DiffConfig,
 * util.go parseKubeconfigPropertyValue/parseKubeconfigString).
 */
export function kubernetesConnectionArgs(
    connection: ClusterConnection,
    project: string = projectDirectory(),
): {
    renderYamlToDirectory?: string;
    context?: string;
    kubeconfig?: pulumi.Input<string>;
} {
    switch (connection.kind) {
        case "renderYamlToDirectory":
            // Empty too: otherwise the Node SDK fills in the runner's $KUBECONFIG, and provider 4.25.0
            // (the lockfile's) refuses any kubeconfig beside renderYamlToDirectory in CheckConfig
            // (`"kubeconfig" arg is not compatible with "renderYamlToDirectory" arg`; pulumi-kubernetes
            // allows the ambient one only from 4.32.0, PR #4406). "" counts as unset there.
            return { renderYamlToDirectory: connection.directory, kubeconfig: "" };
        case "kubeContext":
            // An empty kubeconfig, not an absent one: the Node SDK fills an absent one from the
            // runner's $KUBECONFIG (@pulumi/kubernetes provider.js: `args.kubeconfig ??
            // getEnv("KUBECONFIG")`), freezing that path (or colon-separated list) into the
            // provider's state, where the next runner's DiffConfig fails to parse it. The provider
            // treats "" as unset and resolves the context through client-go's default loading
            // rules, which read $KUBECONFIG, a colon-separated list included, in the provider's own
            // process (pulumi-kubernetes provider/pkg/provider/provider.go, Configure:
            // NewDefaultClientConfigLoadingRules). Found by the real tier.
            return { context: connection.context, kubeconfig: "" };
        case "kubeconfig":
            // The file's contents, not its path: a path (relative ones resolve against the
            // provider's working directory) would enter the state as this runner's; the contents
            // are the same for every runner of the checkout. A secret: kubeconfigs hold credentials.
            return { kubeconfig: pulumi.secret(kubeconfigContents(connection.path, project)) };
        case "inCluster":
            // Empty for the same reason; with no kubeconfig file, client-go's default loading rules
            // fall back to the pod's service account
            // (kubernetes/client-go tools/clientcmd/merged_client_builder.go, ClientConfig).
            return { kubeconfig: "" };
    }
}
