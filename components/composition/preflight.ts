/**
 * Reading the stack config and every capability's pre-flight checks, before any resource is
 * registered: all problems at once, then nothing registered while any remains.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { delegatedBackendProblems } from "../certificates/delegated-backends";
import { SERVICE_CA_BUNDLE_SOURCE } from "../certificates/delegated";
import { effectiveCertificateSettings, requiredCaSourceObjects } from "../certificates/rules";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "../config";
import {
    bundleApiProblems,
    minKubeVersionProblems,
    nativeApiProblems,
    OperatorsPlan,
    planOperators,
    requiredClusterObjects,
    upgradeProblems,
} from "../operator";
import type { EnvVar } from "../operator/deployments";
import { clusterProxyEnv, olmEnvironmentDecision } from "../operator/olm-environment";
import { requiredOn } from "../operator/pod-references";
import { ClusterConnection, clusterConnection, projectDirectory, skippedWithoutCluster } from "../shared/cluster";
import { apiDiscovery, apiKindDiscovery, serverVersion } from "../shared/discovery";
import { warnOfUnavailableApiServices } from "../shared/namespace-deletion";
import { checkExisting, describeRef, objectLister, objectReader, type ObjectReader, presenceLookup } from "../shared/object-presence";
import { formatReport, Problem } from "../shared/problems";
import { requiredObjectsOf } from "../subscriptions";
import { ASSUMED_SUBSCRIPTION_APIS, discoverSubscriptionApis, SubscriptionClusterApis } from "../subscriptions/cluster-apis";

/** The project directory: where the program, its bundles and the webhook's build live. */
export const PROJECT_DIRECTORY = path.resolve(__dirname, "..", "..");

/** The validated stack config, or a RunError listing every problem (no stack trace, no resources). */
export function readStackConfig(): StackConfig {
    const result = validateStackConfig(sectionsFromPulumiConfig(pulumi.runtime.allConfig()));
    for (const warning of result.warnings) {
        pulumi.log.warn(warning);
    }
    if (!result.ok) {
        throw new pulumi.RunError(formatReport(result.problems));
    }
    return result.config;
}

/** The connection the validated cluster config chooses (validation makes it the one explicit choice). */
export function connectionOf(config: StackConfig): ClusterConnection {
    return clusterConnection(config.cluster).connection as ClusterConnection;
}

/** What the pre-flight checks planned, for the phases after them. */
export interface Preflight {
    /** The operators' plans (bundles read and checked). */
    readonly operators: OperatorsPlan;
    /** What the cluster serves of the subscription capability's optional APIs (discovered, live clusters). */
    readonly subscriptionApis: SubscriptionClusterApis;
    /** OLM's proxy variables from OpenShift's Proxy `cluster` (components/operator/olm-environment.ts), when the operators need them. */
    readonly proxyEnv: EnvVar[] | undefined;
    /**
     * service-ca's current bundle (PEM), read when the stack declares admission webhook
     * configurations in service-ca mode on a live cluster and the bundle is published
     * (components/certificates/delegated.ts); undefined otherwise.
     */
    readonly serviceCaBundle: string | undefined;
}

/** Whether the stack declares admission webhook configurations whose certificates service-ca issues. */
function createsServiceCaWebhooks(config: StackConfig, plans: OperatorsPlan["plans"]): boolean {
    const subscriptionWebhook = config.subscriptions.enabled && config.certificates.mode === "service-ca";
    return (
        subscriptionWebhook ||
        plans.some(
            (plan) =>
                effectiveCertificateSettings(config.certificates, plan.config.certificates).mode === "service-ca" &&
                plan.deployments.some((d) => (d.webhooks?.webhooks.length ?? 0) > 0),
        )
    );
}

/** service-ca's current bundle from the ConfigMap OpenShift publishes with it (never a Secret), or undefined with a warning. */
async function serviceCaBundleOf(read: ObjectReader): Promise<string | undefined> {
    const source = SERVICE_CA_BUNDLE_SOURCE;
    const [object] = await read([
        { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespace: source.namespace, name: source.name },
    ]);
    const pem = typeof object === "object" ? (object.data as Record<string, unknown> | undefined)?.[source.key] : undefined;
    if (typeof pem === "string" && pem.includes("BEGIN CERTIFICATE")) {
        return pem;
    }
    if (object === "unknown") {
        return undefined; // an offline render without --cluster: nothing to ask, nothing to warn about
    }
    pulumi.log.warn(
        `service-ca's bundle could not be read from ConfigMap ${source.namespace}/${source.name} (${JSON.stringify(source.key)}): webhook configurations created by this update get the inject annotation only and refuse calls until service-ca injects its bundle`,
    );
    return undefined;
}

/** The Namespaces the stack creates, and so deletes on removal or destroy (the reconcile namespace is kept on delete). */
function ownedNamespaces(config: StackConfig): string[] {
    const operators = config.operators.filter((o) => o.createNamespace).map((o) => o.namespace);
    const subscriptions = config.subscriptions.enabled ? [config.subscriptions.namespace, config.subscriptions.sourceNamespace] : [];
    return [...new Set([...operators, ...subscriptions])];
}

/**
 * Every capability's pre-flight checks, run before any resource is registered: the pure ones, then
 * (live clusters only) that the objects the stack needs but never creates exist, asked by
 * metadata only so that no Secret's data enters the state (components/shared/object-presence.ts).
 */
export async function preflight(config: StackConfig): Promise<Preflight> {
    const operators = planOperators(config.operators, config.olm, PROJECT_DIRECTORY);
    const problems: Problem[] = [...operators.problems];
    for (const warning of operators.warnings) {
        pulumi.log.warn(warning);
    }
    const connection = connectionOf(config);
    if (connection.kind !== "renderYamlToDirectory") {
        const existing = await checkExisting(
            [
                ...(config.subscriptions.enabled ? requiredObjectsOf(config.subscriptions.clusterBundles) : []),
                ...requiredClusterObjects(config.operators, config.olm),
                ...requiredCaSourceObjects(config.certificates.mode, config.caInjection),
                // What operator pods need that neither their bundle, the stack nor the platform provides (components/operator/pod-references.ts).
                ...operators.plans.flatMap((plan) => requiredOn(config.cluster.platform, plan.clusterReferences)),
            ],
            presenceLookup(connection, projectDirectory()),
        ).catch((error: Error) => {
            // An unreachable or refusing API server: say so plainly, and decide nothing.
            throw new pulumi.RunError(error.message);
        });
        problems.push(...existing.problems);
        // Bundle objects whose API the cluster does not serve, as OLM's InstallPlan would fail on them.
        problems.push(...(await bundleApiProblems(operators.plans, config.operators, apiKindDiscovery(connection, PROJECT_DIRECTORY))));
        // CSVs whose minKubeVersion this cluster's Kubernetes does not meet, as OLM leaves them Pending.
        problems.push(...(await minKubeVersionProblems(operators.plans, config.operators, serverVersion(connection, PROJECT_DIRECTORY))));
        // CSVs whose nativeAPIs this cluster does not serve, as OLM leaves them Pending.
        problems.push(...(await nativeApiProblems(operators.plans, config.operators, apiKindDiscovery(connection, PROJECT_DIRECTORY))));
        const reader = objectReader(connection, projectDirectory());
        // What OLM checks before an upgrade (components/operator/upgrade.ts), against the cluster's CRDs and running operators.
        const upgrades = await upgradeProblems(operators.plans, config.operators, reader, objectLister(connection, projectDirectory()));
        problems.push(...upgrades.problems);
        upgrades.warnings.forEach((warning) => pulumi.log.warn(warning));
        // Delegated modes: each caInjection target's backends serve the injector's certificate (components/certificates/delegated-backends.ts).
        problems.push(...(await delegatedBackendProblems(config.certificates.mode, config.cluster.platform, config.caInjection, reader)));
        // A Namespace the stack deletes stays Terminating while another team's APIService is down (components/shared/namespace-deletion.ts).
        await warnOfUnavailableApiServices(objectLister(connection, projectDirectory()), ownedNamespaces(config));
        if (existing.unchecked.length > 0) {
            pulumi.log.warn(
                `not checked that these exist (no cluster to ask): ${existing.unchecked.map((r) => describeRef(r.ref)).join(", ")}`,
            );
        }
    }
    if (problems.length > 0) {
        throw new pulumi.RunError(formatReport(problems));
    }
    const live = connection.kind !== "renderYamlToDirectory";
    const environment = olmEnvironmentDecision(
        { name: config.cluster.name, platform: config.cluster.platform, live },
        operators.plans.length,
        skippedWithoutCluster,
    );
    return {
        operators,
        proxyEnv: live && environment.readProxy ? await clusterProxyEnv(objectReader(connection, projectDirectory())) : undefined,
        subscriptionApis:
            live && config.subscriptions.enabled
                ? await discoverSubscriptionApis(apiDiscovery(connection, PROJECT_DIRECTORY))
                : ASSUMED_SUBSCRIPTION_APIS,
        serviceCaBundle:
            live && createsServiceCaWebhooks(config, operators.plans)
                ? await serviceCaBundleOf(objectReader(connection, projectDirectory()))
                : undefined,
    };
}
