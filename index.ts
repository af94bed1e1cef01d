/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Certificates } from "./components/certificates";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "./components/config";
import { ClusterTarget } from "./components/shared/cluster";
import { defaultWebhookImage, SubscriptionInjection } from "./components/subscriptions";
import { version } from "./package.json";
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

    // The stack's issuer (`certificates.issuer`) and, per operator override,
    // `certificates.issuerFor(operator.certificates)`; CA bundles for `caInjection` objects.
    const certificates = new Certificates(
        "certificates",
        { settings: config.certificates, caInjection: config.caInjection, cluster },
        { providers: { kubernetes } },
    );
    const subscriptions = config.subscriptions.enabled
        ? new SubscriptionInjection(
              "subscriptions",
              {
                  cluster,
                  clusterBundles: config.subscriptions.clusterBundles,
                  bundles: config.subscriptions.bundles,
                  webhook: {
                      namespace: config.subscriptions.namespace,
                      replicas: config.subscriptions.webhook.replicas,
                      failurePolicy: config.subscriptions.webhook.failurePolicy,
                      timeoutSeconds: config.subscriptions.webhook.timeoutSeconds,
                      // Until the image capability passes its built imageRef.
                      image: defaultWebhookImage(config.subscriptions.webhook.image, config.webhookImage.repository, version),
                      certificates: certificates.issuer,
                  },
              },
              { providers: [kubernetes] },
          )
        : undefined;

    return {
        clusterName: cluster.name,
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        ...(subscriptions ? { subscriptionCrds: subscriptions.crdNames, subscriptionClusterRoles: subscriptions.clusterRoleNames } : {}),
        // Last, once every component has issued its certificates: read back by the next update.
        ...certificates.stackOutputs(),
    };
};
