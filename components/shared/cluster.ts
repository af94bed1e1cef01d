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
