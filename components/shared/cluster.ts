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

/** The Kubernetes provider arguments that connect it as `connection` says. */
export function kubernetesConnectionArgs(connection: ClusterConnection): {
    renderYamlToDirectory?: string;
    context?: string;
    kubeconfig?: string;
} {
    switch (connection.kind) {
        case "renderYamlToDirectory":
            return { renderYamlToDirectory: connection.directory };
        case "kubeContext":
            // An empty kubeconfig, not an absent one: the Node SDK fills an absent one from the
            // runner's $KUBECONFIG (@pulumi/kubernetes provider.js), freezing that path into the
            // provider's state, where a second runner sees a diff. The provider treats "" as unset
            // and resolves the context through client-go's default loading rules, which read
            // $KUBECONFIG in the provider's own process (pulumi-kubernetes provider/pkg/provider/
            // provider.go, Configure). Found by the real tier (tests/real/state.real.ts).
            return { context: connection.context, kubeconfig: "" };
        case "kubeconfig":
            return { kubeconfig: connection.path };
        case "inCluster":
            // Empty for the same reason; with no kubeconfig file, client-go's default loading rules
            // fall back to the pod's service account
            // (kubernetes/client-go tools/clientcmd/merged_client_builder.go, ClientConfig).
            return { kubeconfig: "" };
    }
}
