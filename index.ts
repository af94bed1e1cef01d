/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AwsAssetPlan, awsAssetPlan, registryTrustOf } from "./components/aws-assets";
import {
    AwsTags,
    INSTALL_TAG_KEYS_OUTPUT,
    parseInstallTagKeys,
    parseTagKeyState,
    propagateUserTags,
    TAG_KEY_STATE_OUTPUT,
} from "./components/aws-tags";
import { stackAwsProvider } from "./components/aws-tags/providers";
import { Certificates } from "./components/certificates";
import { delegatedBackendProblems } from "./components/certificates/delegated-backends";
import { requiredCaSourceObjects } from "./components/certificates/rules";
import {
    AwsConfig,
    ReconcileConfig,
    sectionsFromPulumiConfig,
    StackConfig,
    validateStackConfig,
    WebhookImageConfig,
} from "./components/config";
import { ConversionResets, Operators, OperatorsPlan, planOperators, requiredClusterObjects, upgradeProblems } from "./components/operator";
import {
    DeclaredKinds,
    derivedResyncSeconds,
    pkoStackName,
    Reconcile,
    reconcileNamespaces,
    recordDeclaredKinds,
} from "./components/reconcile";
import {
    ClusterConnection,
    clusterConnection,
    ClusterTarget,
    kubernetesConnectionArgs,
    projectDirectory,
} from "./components/shared/cluster";
import {
    CONVERSION_RESETS_OUTPUT,
    ConversionResetState,
    conversionResets,
    INSTALLED_CRDS_OUTPUT,
    InstalledCrds,
    installedCrds,
    parseConversionResets,
    parseInstalledCrds,
    retentionMessages,
} from "./components/shared/crd-retention";
import { checkExisting, describeRef, objectReader, presenceLookup } from "./components/shared/object-presence";
import { formatReport, Problem } from "./components/shared/problems";
import { requiredObjectsOf, SubscriptionInjection } from "./components/subscriptions";
import { apiDiscovery } from "./components/shared/discovery";
import { ASSUMED_SUBSCRIPTION_APIS, discoverSubscriptionApis, SubscriptionClusterApis } from "./components/subscriptions/cluster-apis";
import { SHARE_GRANTS_OUTPUT, warnRunningPodLosses } from "./components/subscriptions/running-pods";
import {
    buildsWebhookImage,
    checkoutProvenance,
    layoutDirectoryFor,
    WEBHOOK_INPUT_PATHS,
    WEBHOOK_SOURCE,
    WebhookImage,
    webhookImageOutput,
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
    subscriptionApis: SubscriptionClusterApis;
}

/**
 * Every capability's pre-flight checks, run before any resource is registered: the pure ones, then
 * (live clusters only) that the objects the stack needs but never creates exist, asked by
 * metadata only so that no Secret's data enters the state (components/shared/object-presence.ts).
 */
async function preflight(config: StackConfig): Promise<Preflight> {
    const operators = planOperators(config.operators, config.olm, __dirname);
    const problems: Problem[] = [...operators.problems];
    for (const warning of operators.warnings) {
        pulumi.log.warn(warning);
    }
    // Validated: the connection is the one explicit choice the cluster config makes.
    const connection = clusterConnection(config.cluster).connection as ClusterConnection;
    if (connection.kind !== "renderYamlToDirectory") {
        const existing = await checkExisting(
            [
                ...(config.subscriptions.enabled ? requiredObjectsOf(config.subscriptions.clusterBundles) : []),
                ...requiredClusterObjects(config.operators, config.olm),
                ...requiredCaSourceObjects(config.certificates.mode, config.caInjection),
            ],
            presenceLookup(connection, projectDirectory()),
        ).catch((error: Error) => {
            // An unreachable or refusing API server: say so plainly, and decide nothing.
            throw new pulumi.RunError(error.message);
        });
        problems.push(...existing.problems);
        // What OLM checks before an upgrade (components/operator/upgrade.ts), against the cluster's CRDs and running operators.
        const upgrades = await upgradeProblems(operators.plans, config.operators, objectReader(connection, projectDirectory()));
        problems.push(...upgrades.problems);
        problems.push(
            ...(await delegatedBackendProblems(
                config.certificates.mode,
                config.cluster.platform,
                config.caInjection,
                objectReader(connection, projectDirectory()),
            )),
        );
        upgrades.warnings.forEach((warning) => pulumi.log.warn(warning));
        if (existing.unchecked.length > 0) {
            pulumi.log.warn(
                `not checked that these exist (no cluster to ask): ${existing.unchecked.map((r) => describeRef(r.ref)).join(", ")}`,
            );
        }
    }
    if (problems.length > 0) {
        throw new pulumi.RunError(formatReport(problems));
    }
    const live = connection.kind !== "renderYamlToDirectory" && config.subscriptions.enabled;
    return {
        operators,
        subscriptionApis: live ? await discoverSubscriptionApis(apiDiscovery(connection, __dirname)) : ASSUMED_SUBSCRIPTION_APIS,
    };
}

export = async function clusterPlatform(): Promise<Record<string, unknown>> {
    const config = readStackConfig();
    const checked = await preflight(config);

    // Validated above: the connection is the one explicit choice the cluster config makes.
    const connection = clusterConnection(config.cluster).connection as ClusterConnection;
    const cluster: ClusterTarget = {
        name: config.cluster.name,
        platform: config.cluster.platform,
        live: connection.kind !== "renderYamlToDirectory",
    };
    // With reconcile on, every Kubernetes kind the program declares is recorded (before the first
    // resource) for the least RBAC of PKO's ServiceAccount.
    const declaredKinds = config.reconcile.enabled ? recordDeclaredKinds() : undefined;
    const kubernetes = new k8s.Provider("kubernetes", {
        ...kubernetesConnectionArgs(connection),
        enableServerSideApply: true,
    });
    // Adopts objects that already exist instead of failing on them; used only for OLM's own
    // aggregate roles, which every cluster running OLM already has.
    const adoptingKubernetes = new k8s.Provider("kubernetes-adopting", {
        ...kubernetesConnectionArgs(connection),
        enableServerSideApply: true,
        upsertExistingObjects: true,
    });

    // This stack's own last update: capabilities that must remember what they managed (CA trust,
    // released tag keys) publish it as stack outputs and read it back here on the next update.
    const previousUpdate = new pulumi.StackReference("previous-update", {
        name: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
    });

    // First, so that every taggable AWS resource and LoadBalancer Service declared after it, in any
    // component or file, gets the tags (stack transformations). The webhook image is pushed to
    // `awsTags.webhookRepositoryUrl` when the plan has the ECR repository (see awsAssetPlan).
    const assets = awsAssetPlan({
        ...config,
        webhookImage: { ...config.webhookImage, output: webhookImageOutput(config.webhookImage, cluster.live) },
    });
    const awsTags = config.aws.enabled ? await installAwsTags(config.aws, assets, cluster, kubernetes, previousUpdate) : undefined;

    // The subscription webhook's image, unless subscriptions.webhook.image names one. Its `imageRef`
    // (`<repository>@sha256:...`) is what the webhook Deployment runs.
    const webhookImage = buildsWebhookImage(config.subscriptions)
        ? buildWebhookImage(config.webhookImage, cluster.live, awsTags, config.cluster.runByOperator)
        : undefined;

    // The stack's issuer (`certificates.issuer`) and, per operator override,
    // `certificates.issuerFor(operator.certificates)`; CA bundles for `caInjection` objects.
    const certificates = new Certificates(
        "certificates",
        { settings: config.certificates, caInjection: config.caInjection, cluster, previousUpdate },
        { providers: { kubernetes } },
    );
    // Before anything changes: what running pods would lose (components/subscriptions/running-pods.ts).
    const shareGrants = await warnRunningPodLosses(previousUpdate, config.subscriptions.enabled ? config.subscriptions.clusterBundles : []);
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
                      readAllNamespaces: config.subscriptions.webhook.readAllNamespaces,
                  },
                  driver: config.subscriptions.sharedResourceDriver.serviceAccount,
                  apis: checked.subscriptionApis,
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

    const crds = installedCrds([
        ...checked.operators.plans.map((plan) => ({
            owner: `operator ${plan.config.name}`,
            crds: plan.crds.filter((c) => c.manifest).map((c) => c.name),
            deleteOnRemoval: plan.config.deleteCrdsOnRemoval,
            converted: Object.fromEntries(plan.crds.filter((c) => c.manifest && c.conversion).map((c) => [c.name, c.kind])),
        })),
        ...(subscriptions ? [{ owner: "subscriptions", crds: subscriptions.crdNames, deleteOnRemoval: false }] : []),
    ]);
    const resets = await reportCrdRetention(crds, previousUpdate);
    if (Object.keys(resets).length > 0) {
        new ConversionResets("crd-conversion-resets", { crds: resets, cluster }, { providers: { kubernetes } });
    }

    const reconcile = declaredKinds ? installReconcile(config, declaredKinds, kubernetes) : undefined;

    return {
        clusterName: cluster.name,
        ...(reconcile ? { reconcileStack: reconcile.stackObject } : {}),
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        ...(subscriptions ? { subscriptionCrds: subscriptions.crdNames, subscriptionClusterRoles: subscriptions.clusterRoleNames } : {}),
        // Only while there are grants: a stack without ClusterBundles keeps its outputs as they were.
        ...(Object.keys(shareGrants).length > 0 ? { [SHARE_GRANTS_OUTPUT]: shareGrants } : {}),
        ...(webhookImage ? { webhookImageRef: webhookImage.imageRef } : {}),
        ...(awsTags ? awsTagsOutputs(awsTags, config.aws) : {}),
        // Read back by the next update, whose preview names the CRDs it no longer declares.
        ...(Object.keys(crds).length > 0 ? { [INSTALLED_CRDS_OUTPUT]: crds } : {}),
        ...(Object.keys(resets).length > 0 ? { [CONVERSION_RESETS_OUTPUT]: resets } : {}),
        // Last, once every component has issued its certificates: read back by the next update.
        ...certificates.stackOutputs(),
    };
};

/**
 * Says in the preview which CRDs outlive their owner and which (opted in) die with it, and names
 * the CRDs the previous update installed that this one drops (components/shared/crd-retention.ts).
 */
async function reportCrdRetention(crds: InstalledCrds, previousUpdate: pulumi.StackReference): Promise<ConversionResetState> {
    const previousOutput = await previousUpdate.getOutputDetails(INSTALLED_CRDS_OUTPUT);
    const previous = parseInstalledCrds(previousOutput.value ?? previousOutput.secretValue);
    const messages = retentionMessages(crds, previous.state);
    for (const line of messages.infos) {
        pulumi.log.info(line);
    }
    for (const line of [...(previous.warning ? [previous.warning] : []), ...messages.warnings]) {
        pulumi.log.warn(line);
    }
    const previousResets = await previousUpdate.getOutputDetails(CONVERSION_RESETS_OUTPUT);
    return conversionResets(crds, previous.state, parseConversionResets(previousResets.value));
}

/**
 * Builds and publishes the webhook image: to the stack's ECR repository when the plan has one
 * (output registry, a repository without a registry host, AWS on), else to
 * `webhookImage.repository`, or as an OCI image layout under out/oci/. A live stack's default
 * output is registry: its cluster must pull the image. Labels carry package.json's repository and
 * the webhook's inputs by git content, the same in every clone of a commit
 * (components/webhook-image/provenance.ts).
 */
function buildWebhookImage(
    settings: WebhookImageConfig,
    live: boolean,
    awsTags: AwsTags | undefined,
    buildWhenMissing: boolean,
): WebhookImage {
    const output = webhookImageOutput(settings, live);
    const provenance = checkoutProvenance(__dirname, WEBHOOK_INPUT_PATHS);
    return new WebhookImage("subscription-webhook-image", {
        repository: awsTags?.webhookRepositoryUrl ?? settings.repository,
        output,
        layoutDirectory: output === "oci-layout" ? layoutDirectoryFor(settings.repository) : undefined,
        baseImage: settings.baseImage,
        platforms: settings.platforms,
        projectDirectory: __dirname,
        ...WEBHOOK_SOURCE,
        source: provenance.source,
        sourceTree: provenance.sourceTree,
        deleteOnDestroy: settings.deleteOnDestroy,
        // PKO's workspace runs a fresh checkout (dist/ is git-ignored) and no build.
        buildWhenMissing,
    });
}

/** The AWS stack outputs: assets for other tools, and the tag key states the next update reads back. */
function awsTagsOutputs(awsTags: AwsTags, awsConfig: AwsConfig): Record<string, unknown> {
    const storage = awsTags.registryStorage;
    return {
        [TAG_KEY_STATE_OUTPUT]: awsTags.tagKeys,
        [INSTALL_TAG_KEYS_OUTPUT]: awsTags.installTagKeys,
        ...(awsTags.webhookRepositoryUrl ? { awsWebhookImageRepositoryUrl: awsTags.webhookRepositoryUrl } : {}),
        ...(storage
            ? {
                  awsImageRegistryStorage: {
                      bucket: storage.bucketName,
                      region: awsConfig.region,
                      kmsKeyArn: storage.kmsKeyArn,
                      roleArn: storage.roleArn,
                  },
              }
            : {}),
        ...(awsTags.storageClassName ? { awsTaggedStorageClass: awsTags.storageClassName } : {}),
    };
}

/**
 * The AWS assets and tags (seed 004). Reads the tag keys the previous update managed (its outputs
 * `awsUserTagKeys` and `awsInstallTagKeys`), builds the component with the AWS provider (its
 * `ignoreTags` from `aws.ignoreTags`), and registers for the whole stack the tagging safety net
 * (every taggable AWS resource declared after this, wherever, gets the tags at creation) and,
 * with propagation on, the transformation that gives LoadBalancer Services the tags annotation.
 */
async function installAwsTags(
    awsConfig: AwsConfig,
    assets: AwsAssetPlan,
    cluster: ClusterTarget,
    kubernetes: k8s.Provider,
    previousUpdate: pulumi.StackReference,
): Promise<AwsTags> {
    const awsProvider = new aws.Provider("aws", {
        region: awsConfig.region as aws.Region,
        ignoreTags: { keys: awsConfig.ignoreTags.keys, keyPrefixes: awsConfig.ignoreTags.keyPrefixes },
    });
    const previousOutput = await previousUpdate.getOutputDetails(TAG_KEY_STATE_OUTPUT);
    const previous = parseTagKeyState(previousOutput.value ?? previousOutput.secretValue);
    const previousInstallOutput = await previousUpdate.getOutputDetails(INSTALL_TAG_KEYS_OUTPUT);
    const previousInstall = parseInstallTagKeys(previousInstallOutput.value ?? previousInstallOutput.secretValue);
    for (const warning of [previous.warning, previousInstall.warning]) {
        if (warning) {
            pulumi.log.warn(warning);
        }
    }
    const awsTags = new AwsTags(
        "aws-tags",
        {
            cluster,
            region: awsConfig.region as string,
            userTags: awsConfig.userTags,
            propagate: propagateUserTags(awsConfig),
            previousTagKeys: previous.state,
            previousInstallTagKeys: previousInstall.keys,
            assets,
            registryTrust: registryTrustOf(awsConfig),
        },
        { providers: { aws: awsProvider, kubernetes } },
    );
    pulumi.runtime.registerStackTransformation(awsTags.tagger.transformation);
    pulumi.runtime.registerStackTransformation(stackAwsProvider(awsProvider));
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
                name: pkoStackName(config.cluster.name),
                namespace: settings.namespace,
                stack: settings.stack ?? `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
                git: settings.git,
                flux: settings.flux,
                backend: settings.backend,
                environment: Object.fromEntries(
                    Object.entries(settings.environment).map(([name, ref]) => [name, { secret: ref.name, key: ref.key }]),
                ),
                resyncFrequencySeconds: settings.resyncFrequencySeconds ?? derivedResyncSeconds(config.certificates.renewBeforeDays),
                serviceAccountName: settings.serviceAccountName,
                config: {
                    "cluster-platform:cluster": {
                        name: config.cluster.name,
                        platform: config.cluster.platform,
                        inCluster: true,
                        runByOperator: true,
                    },
                },
            },
        },
        { providers: { kubernetes } },
    );
    // Every component, and the reconcile objects themselves, are registered by now.
    declared.seal();
    return reconcile;
}
