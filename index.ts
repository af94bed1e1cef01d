/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability in the phases of
 * components/composition/phases.ts, whose values only exist in their order: open (kinds
 * recorded, previous update read, running-pod losses warned), tag (providers, AWS tags), the
 * capabilities below, finish (reconcile, sealed RBAC, the certificates' outputs last).
 */
import { Certificates } from "./components/certificates";
import { finishStack, openStack, tagStack, TaggedStack } from "./components/composition/phases";
import { Preflight, preflight, PROJECT_DIRECTORY, readStackConfig } from "./components/composition/preflight";
import { unmapPackageFrames } from "./components/composition/package-frames";
import { cheapenSdkPromiseCaptures } from "./components/composition/promise-stacks";
import { Operators } from "./components/operator";
import { reconcileNamespaces } from "./components/reconcile";
import { installedCrds } from "./components/shared/crd-retention";
import { SubscriptionInjection } from "./components/subscriptions";
import { buildsWebhookImage, WebhookImage } from "./components/webhook-image";
import { publishWebhookImage } from "./components/webhook-image/install";

// Before the first resource: installed packages' frames in their real paths, and the SDK's
// per-promise stacks in V8's format (each module says why).
unmapPackageFrames();
cheapenSdkPromiseCaptures();

export = async function clusterPlatform(): Promise<Record<string, unknown>> {
    const config = readStackConfig();
    const checked = await preflight(config);
    const tagged = tagStack(await openStack(config));
    return finishStack(tagged, composeCapabilities(tagged, checked));
};

/** Phase 3: every capability, with the providers (and the tagging) of phase 2. */
function composeCapabilities(stack: TaggedStack, checked: Preflight) {
    const { config, cluster, kubernetes } = stack;

    // The subscription webhook's image, unless subscriptions.webhook.image names one. Its `imageRef`
    // (`<repository>@sha256:...`) is what the webhook Deployment runs.
    const webhookImage = buildsWebhookImage(config.subscriptions)
        ? publishWebhookImage(
              config.webhookImage,
              cluster.live,
              stack.awsTags?.webhookRepositoryUrl,
              PROJECT_DIRECTORY,
              config.cluster.runByOperator,
          )
        : undefined;

    // The stack's issuer (`certificates.issuer`) and, per operator override,
    // `certificates.issuerFor(operator.certificates)`; CA bundles for `caInjection` objects.
    const certificates = new Certificates(
        "certificates",
        {
            settings: config.certificates,
            caInjection: config.caInjection,
            cluster,
            previousTrust: stack.previous.values.certificateTrust,
            serviceCaBundle: checked.serviceCaBundle,
        },
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
                      // The configured image, else the one this stack built (`<repository>@sha256:...`).
                      image: config.subscriptions.webhook.image ?? (webhookImage as WebhookImage).imageRef,
                      certificates: certificates.issuer,
                      excludedNamespaces: [...config.subscriptions.webhook.excludedNamespaces, ...reconcileNamespaces(config.reconcile)],
                      readNamespaces: config.subscriptions.webhook.readNamespaces,
                  },
                  driver: config.subscriptions.sharedResourceDriver.serviceAccount,
                  apis: checked.subscriptionApis,
                  sourceNamespace: config.subscriptions.sourceNamespace,
                  keptShares: stack.keptShares,
              },
              { providers: [kubernetes] },
          )
        : undefined;

    const operators = new Operators(
        "operators",
        {
            plans: checked.operators.plans,
            olm: config.olm,
            cluster,
            issuerFor: (operator) => certificates.issuerFor(operator.certificates),
            previousInstalls: stack.previous.values.operatorInstalls,
            proxyEnv: checked.proxyEnv,
        },
        { providers: { kubernetes } },
    );

    const crds = installedCrds([
        ...checked.operators.plans.map((plan) => ({
            owner: `operator ${plan.config.name}`,
            crds: plan.crds.filter((c) => c.manifest).map((c) => c.name),
            deleteOnRemoval: plan.config.deleteCrdsOnRemoval,
            converted: Object.fromEntries(plan.crds.filter((c) => c.manifest && c.conversion).map((c) => [c.name, c.kind])),
        })),
        ...(subscriptions ? [{ owner: "subscriptions", crds: subscriptions.crdNames, deleteOnRemoval: false }] : []),
    ]);

    return {
        certificates,
        crds,
        operatorInstalls: operators.records,
        outputs: {
            ...(subscriptions
                ? { subscriptionCrds: subscriptions.crdNames, subscriptionClusterRoles: subscriptions.clusterRoleNames }
                : {}),
            ...(webhookImage ? { webhookImageRef: webhookImage.imageRef } : {}),
        },
    };
}
