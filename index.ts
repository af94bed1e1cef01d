/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "./components/config";
import { ClusterTarget } from "./components/shared/cluster";
import { SubscriptionInjection } from "./components/subscriptions";
import { formatReport } from "./components/shared/problems";

/** The validated stack config, or a RunError listing every problem (no stack trace, no resources). */
function readStackConfig(): StackConfig {
    const result = validateStackConfig(sectionsFromPulumiConfig(pulumi.runtime.allConfig()));
    for (const warning of result.warnings) {
        pulumi.log.warn(warning);
    }
    if (!result.ok) {
        throw new pulumi.RunError(formatReport(result.problems));
    }
    return result.config;
}

export = async function clusterPlatform(): Promise<Record<string, unknown>> {
    const config = readStackConfig();

    const cluster: ClusterTarget = {
        name: config.cluster.name,
        platform: config.cluster.platform,
        live: config.cluster.renderYamlToDirectory === undefined,
    };
    const kubernetes = new k8s.Provider("kubernetes", {
        renderYamlToDirectory: config.cluster.renderYamlToDirectory,
        context: config.cluster.kubeContext,
        enableServerSideApply: true,
    });
    const awsProvider = config.aws.enabled ? new aws.Provider("aws", { region: config.aws.region as aws.Region }) : undefined;
    void awsProvider;

    const subscriptions = config.subscriptions.enabled
        ? new SubscriptionInjection(
              "subscriptions",
              {
                  cluster,
                  clusterBundles: config.subscriptions.clusterBundles,
                  bundles: config.subscriptions.bundles,
              },
              { providers: [kubernetes] },
          )
        : undefined;

    return {
        clusterName: cluster.name,
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        ...(subscriptions ? { subscriptionCrds: subscriptions.crdNames, subscriptionClusterRoles: subscriptions.clusterRoleNames } : {}),
    };
};
