/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AwsTags, parseTagKeyState, propagateUserTags, TAG_KEY_STATE_OUTPUT } from "./components/aws-tags";
import { Certificates } from "./components/certificates";
import { AwsConfig, ReconcileConfig, sectionsFromPulumiConfig, StackConfig, validateStackConfig, WebhookImageConfig } from "./components/config";
import { Operators, OperatorsPlan, planOperators } from "./components/operator";
import { DeclaredKinds, derivedResyncSeconds, Reconcile, recordDeclaredKinds } from "./components/reconcile";
import { ClusterTarget } from "./components/shared/cluster";
import { formatReport, Problem } from "./components/shared/problems";
import { SubscriptionInjection } from "./components/subscriptions";
import {
    buildsWebhookImage,
    checkoutProvenance,
    layoutDirectoryFor,
    namesRegistryHost,
    WEBHOOK_INPUT_PATHS,
    WEBHOOK_SOURCE,
    WebhookImage,
} from "./components/webhook-image";

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

interface Preflight {
    operators: OperatorsPlan;
}

/** Every capability's pure pre-flight checks, run before any resource is registered. */
function preflight(config: StackConfig): Preflight {
    const operators = planOperators(config.operators, config.olm, __dirname);
    const problems: Problem[] = [...operators.problems];
    for (const warning of operators.warnings) {
        pulumi.log.warn(warning);
    }
    if (problems.length > 0) {
        throw new pulumi.RunError(formatReport(problems));
    }
    return { operators };
}

export = async function clusterPlatform(): Promise<Record<string, unknown>> {
    const config = readStackConfig();
    const checked = preflight(config);

    const cluster: ClusterTarget = {
        name: config.cluster.name,
        platform: config.cluster.platform,
        live: config.cluster.renderYamlToDirectory === undefined,
    };
    // With reconcile on, every Kubernetes kind the program declares is recorded (before the first
    // resource) for the least RBAC of PKO's ServiceAccount.
    const declaredKinds = config.reconcile.enabled ? recordDeclaredKinds() : undefined;
    // In-cluster: no context, so the provider falls back to the pod's service-account identity.
    const context = config.cluster.inCluster ? undefined : config.cluster.kubeContext;
    const kubernetes = new k8s.Provider("kubernetes", {
        renderYamlToDirectory: config.cluster.renderYamlToDirectory,
        context,
        enableServerSideApply: true,
    });
    // Adopts objects that already exist instead of failing on them; used only for OLM's own
    // aggregate roles, which every cluster running OLM already has.
    const adoptingKubernetes = new k8s.Provider("kubernetes-adopting", {
        renderYamlToDirectory: config.cluster.renderYamlToDirectory,
        context,
        enableServerSideApply: true,
        upsertExistingObjects: true,
    });

    // This stack's own last update: capabilities that must remember what they managed (CA trust,
    // released tag keys) publish it as stack outputs and read it back here on the next update.
    const previousUpdate = new pulumi.StackReference("previous-update", {
        name: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
    });

    // First, so that every LoadBalancer Service declared after it gets the tags annotation. A
    // capability that creates AWS resources passes `transformations: [awsTags.tagger.transformation]`;
    // the webhook image is pushed to `awsTags.webhookRepositoryUrl` when webhookImage.output is registry.
    const awsTags = config.aws.enabled ? await installAwsTags(config.aws, cluster, kubernetes, previousUpdate) : undefined;

    // The subscription webhook's image, unless subscriptions.webhook.image names one. Its `imageRef`
    // (`<repository>@sha256:...`) is what the webhook Deployment runs.
    const webhookImage = buildsWebhookImage(config.subscriptions) ? buildWebhookImage(config.webhookImage, awsTags) : undefined;

    // The stack's issuer (`certificates.issuer`) and, per operator override,
    // `certificates.issuerFor(operator.certificates)`; CA bundles for `caInjection` objects.
    const certificates = new Certificates(
        "certificates",
        { settings: config.certificates, caInjection: config.caInjection, cluster, previousUpdate },
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
                  },
              },
              { providers: [kubernetes] },
          )
        : undefined;

    new Operators(
        "operators",
        {
            plans: checked.operators.plans,
            olm: config.olm,
            cluster,
            issuerFor: (operator) => certificates.issuerFor(operator.certificates),
            adoptingProvider: adoptingKubernetes,
        },
        { providers: { kubernetes } },
    );

    const reconcile = declaredKinds ? installReconcile(config, declaredKinds, kubernetes) : undefined;

    return {
        clusterName: cluster.name,
        ...(reconcile ? { reconcileStack: reconcile.stackObject } : {}),
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        ...(subscriptions ? { subscriptionCrds: subscriptions.crdNames, subscriptionClusterRoles: subscriptions.clusterRoleNames } : {}),
        ...(webhookImage ? { webhookImageRef: webhookImage.imageRef } : {}),
        ...(awsTags ? awsTagsOutputs(awsTags, config.aws) : {}),
        // Last, once every component has issued its certificates: read back by the next update.
        ...certificates.stackOutputs(),
    };
};

/**
 * Builds and publishes the webhook image: to `webhookImage.repository` when it names a registry
 * host, else (output registry, AWS on) to the stack's ECR repository, or as an OCI image layout
 * under out/oci/. Labels carry package.json's repository and the webhook's inputs by git content,
 * the same in every clone of a commit (components/webhook-image/provenance.ts).
 */
function buildWebhookImage(settings: WebhookImageConfig, awsTags: AwsTags | undefined): WebhookImage {
    const toEcr = settings.output === "registry" && !namesRegistryHost(settings.repository) && awsTags !== undefined;
    const provenance = checkoutProvenance(__dirname, WEBHOOK_INPUT_PATHS);
    return new WebhookImage("subscription-webhook-image", {
        repository: toEcr ? (awsTags as AwsTags).webhookRepositoryUrl : settings.repository,
        output: settings.output,
        layoutDirectory: settings.output === "oci-layout" ? layoutDirectoryFor(settings.repository) : undefined,
        baseImage: settings.baseImage,
        platforms: settings.platforms,
        projectDirectory: __dirname,
        ...WEBHOOK_SOURCE,
        source: provenance.source,
        sourceTree: provenance.sourceTree,
        deleteOnDestroy: settings.deleteOnDestroy,
    });
}

/** The AWS stack outputs: assets for other tools, and the tag key state the next update reads back. */
function awsTagsOutputs(awsTags: AwsTags, awsConfig: AwsConfig): Record<string, unknown> {
    return {
        [TAG_KEY_STATE_OUTPUT]: awsTags.tagKeys,
        awsWebhookImageRepositoryUrl: awsTags.webhookRepositoryUrl,
        awsImageRegistryStorage: {
            bucket: awsTags.registryStorage.bucketName,
            region: awsConfig.region,
            kmsKeyArn: awsTags.registryStorage.kmsKeyArn,
            roleArn: awsTags.registryStorage.roleArn,
        },
        ...(awsTags.storageClassName ? { awsTaggedStorageClass: awsTags.storageClassName } : {}),
    };
}

/**
 * The AWS assets and tags (seed 004). Reads the tag keys the previous update managed (its output
 * `awsUserTagKeys`), builds the component, and,
 * with propagation on, registers for the whole stack the transformation that gives
 * LoadBalancer Services the tags annotation.
 */
async function installAwsTags(
    awsConfig: AwsConfig,
    cluster: ClusterTarget,
    kubernetes: k8s.Provider,
    previousUpdate: pulumi.StackReference,
): Promise<AwsTags> {
    const awsProvider = new aws.Provider("aws", { region: awsConfig.region as aws.Region });
    const previousOutput = await previousUpdate.getOutputDetails(TAG_KEY_STATE_OUTPUT);
    const previous = parseTagKeyState(previousOutput.value ?? previousOutput.secretValue);
    if (previous.warning) {
        pulumi.log.warn(previous.warning);
    }
    const awsTags = new AwsTags(
        "aws-tags",
        {
            cluster,
            region: awsConfig.region as string,
            userTags: awsConfig.userTags,
            propagate: propagateUserTags(awsConfig),
            previousTagKeys: previous.state,
            oidcProviderArn: awsConfig.oidcProviderArn,
        },
        { providers: { aws: awsProvider, kubernetes } },
    );
    if (awsTags.loadBalancerTransformation) {
        pulumi.runtime.registerStackTransformation(awsTags.loadBalancerTransformation);
    }
    return awsTags;
}

/**
 * The PKO Stack that runs this stack on a schedule, its ServiceAccount and RBAC. Inside PKO's
 * workspace the program reaches the cluster in-cluster: the Stack sets `cluster` inline with
 * `inCluster: true` over the checked-in config.
 */
function installReconcile(config: StackConfig, declared: DeclaredKinds, kubernetes: k8s.Provider): Reconcile {
    const settings: ReconcileConfig = config.reconcile;
    const reconcile = new Reconcile(
        "reconcile",
        {
            createNamespace: settings.createNamespace,
            rules: declared.rules,
            stack: {
                name: `cluster-platform-${config.cluster.name}`,
                namespace: settings.namespace,
                stack: settings.stack ?? `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
                git: settings.git,
                flux: settings.flux,
                backend: settings.backend,
                environment: Object.fromEntries(Object.entries(settings.environment).map(([name, ref]) => [name, { secret: ref.name, key: ref.key }])),
                resyncFrequencySeconds: settings.resyncFrequencySeconds ?? derivedResyncSeconds(config.certificates.renewBeforeDays),
                serviceAccountName: settings.serviceAccountName,
                config: { "cluster-platform:cluster": { name: config.cluster.name, platform: config.cluster.platform, inCluster: true } },
            },
        },
        { providers: { kubernetes } },
    );
    // Every component, and the reconcile objects themselves, are registered by now.
    declared.seal();
    return reconcile;
}
