/**
 * A CSV's `spec.webhookdefinitions[]` mapped the way OLM maps them: admission webhooks to the
 * AdmissionWebhook contract (one backend per deployment), conversion webhooks to the owned
 * CRDs' `spec.conversion`. Pure; runs after `webhookDescriptionProblems` found nothing.
 */
import { webhookServiceName } from "../admission-webhook/build";
import type { WebhookBackend, WebhookDefinition } from "../admission-webhook/contract";
import { DEFAULT_CONTAINER_PORT, givenTargetPort, requiredExclusions } from "../admission-webhook/rules";
import { describeValue, formatPath } from "../shared/problems";
import type { ClusterServiceVersion, StrategyDeployment, WebhookDescription } from "./csv";
import { podSelectorOf } from "./pod-selector";

/** OLM's Service name for a deployment that serves webhooks (`<deployment>-service`). */
export function webhookServiceNameOf(deploymentName: string): string {
    return webhookServiceName({ deploymentName });
}

/** OLM's serving-certificate Secret name (`<service>-cert`), the one bundles already mount. */
export function webhookCertSecretName(deploymentName: string): string {
    return `${webhookServiceNameOf(deploymentName)}-cert`;
}

/** The Service port and target a description asks for, with OLM's defaults and the API server's (a targetPort of 0 is the port). */
export function servicePortOf(webhook: Pick<WebhookDescription, "containerPort" | "targetPort">): {
    servicePort: number;
    targetPort: number | string;
} {
    const servicePort = webhook.containerPort ?? DEFAULT_CONTAINER_PORT;
    return { servicePort, targetPort: givenTargetPort(webhook.targetPort) ?? servicePort };
}

/** OLM's WebhookDescription → the seed's Webhook (the author's fields; never clientConfig or namespaceSelector). */
export function webhookDefinitionOf(webhook: WebhookDescription): WebhookDefinition {
    const definition: WebhookDefinition = {
        name: webhook.generateName,
        type: webhook.type as WebhookDefinition["type"],
        rules: (webhook.rules ?? []).map((rule) => ({
            operations: rule.operations,
            apiGroups: rule.apiGroups,
            apiVersions: rule.apiVersions,
            resources: rule.resources,
            ...(rule.scope === undefined ? {} : { scope: rule.scope }),
        })),
        sideEffects: webhook.sideEffects as WebhookDefinition["sideEffects"],
        admissionReviewVersions: webhook.admissionReviewVersions ?? [],
    };
    const optional = {
        failurePolicy: webhook.failurePolicy,
        matchPolicy: webhook.matchPolicy,
        objectSelector: webhook.objectSelector,
        timeoutSeconds: webhook.timeoutSeconds,
        reinvocationPolicy: webhook.reinvocationPolicy,
        path: webhook.webhookPath,
    };
    for (const [key, value] of Object.entries(optional)) {
        if (value !== undefined) {
            (definition as unknown as Record<string, unknown>)[key] = value;
        }
    }
    return definition;
}

/** What a deployment serves: its admission webhooks and, for conversion, the CRDs it converts. */
export interface DeploymentWebhooks {
    backend: WebhookBackend;
    webhooks: WebhookDefinition[];
    conversions: ConversionPlan[];
}

/** An owned CRD's `spec.conversion`, minus the CA bundle (added per certificate mode). */
export interface ConversionPlan {
    webhook: string;
    crd: string;
    /** The deployment that serves the conversion (its serving certificate signs the CRD's calls). */
    deploymentName: string;
    service: { namespace: string; name: string; path: string; port: number };
    conversionReviewVersions: string[];
}

export interface WebhookMappingProblem {
    field: string;
    message: string;
}

/**
 * Groups a CSV's webhooks by deployment, in CSV deployment order. This stack gives each
 * deployment one Service port (the AdmissionWebhook contract), so every webhook of a
 * deployment must use the same containerPort and targetPort; a mismatch is reported.
 */
export function webhooksByDeployment(
    operator: string,
    csv: ClusterServiceVersion,
    namespace: string,
): { byDeployment: Map<string, DeploymentWebhooks>; problems: WebhookMappingProblem[] } {
    const problems: WebhookMappingProblem[] = [];
    const byDeployment = new Map<string, DeploymentWebhooks>();
    const deployments = new Map<string, StrategyDeployment>(csv.spec.install.spec.deployments.map((d) => [d.name, d]));
    const firstPortUser = new Map<string, number>();

    (csv.spec.webhookdefinitions ?? []).forEach((webhook, index) => {
        const deployment = webhook.deploymentName === undefined ? undefined : deployments.get(webhook.deploymentName);
        if (!deployment) {
            return; // reported by webhookDescriptionProblems
        }
        const field = (...path: PropertyKey[]) => formatPath(["spec", "webhookdefinitions", index, ...path]);
        const ports = servicePortOf(webhook);
        let entry = byDeployment.get(deployment.name);
        if (!entry) {
            const matchLabels = deployment.spec.selector.matchLabels ?? {};
            if (Object.keys(matchLabels).length === 0) {
                problems.push({
                    field: field("deploymentName"),
                    message: `operator ${describeValue(operator)}: deployment ${describeValue(deployment.name)} has no spec.selector.matchLabels, so the webhook Service cannot select its pods`,
                });
            }
            entry = {
                backend: { deploymentName: deployment.name, namespace, matchLabels: podSelectorOf(deployment.name, matchLabels), ...ports },
                webhooks: [],
                conversions: [],
            };
            byDeployment.set(deployment.name, entry);
            firstPortUser.set(deployment.name, index);
        } else if (entry.backend.servicePort !== ports.servicePort || entry.backend.targetPort !== ports.targetPort) {
            const first = firstPortUser.get(deployment.name);
            problems.push({
                field: field("containerPort"),
                message: `operator ${describeValue(operator)}: webhook ${describeValue(webhook.generateName)} serves port ${ports.servicePort} → ${ports.targetPort}, but spec.webhookdefinitions[${first}] of the same deployment ${describeValue(deployment.name)} serves ${entry.backend.servicePort} → ${entry.backend.targetPort}; this stack gives each deployment one webhook Service port`,
            });
        }
        if (webhook.type === "ConversionWebhook") {
            for (const crd of webhook.conversionCRDs ?? []) {
                entry.conversions.push({
                    webhook: webhook.generateName,
                    crd,
                    deploymentName: deployment.name,
                    // OLM's default conversion path is "/", its port the containerPort.
                    service: {
                        namespace,
                        name: webhookServiceNameOf(deployment.name),
                        path: webhook.webhookPath ?? "/",
                        port: ports.servicePort,
                    },
                    conversionReviewVersions: webhook.admissionReviewVersions ?? [],
                });
            }
        } else {
            entry.webhooks.push(webhookDefinitionOf(webhook));
        }
    });

    // CSV deployment order, so webhooks follow the deployments that serve them.
    const ordered = new Map<string, DeploymentWebhooks>();
    for (const deployment of csv.spec.install.spec.deployments) {
        const entry = byDeployment.get(deployment.name);
        if (entry) {
            ordered.set(deployment.name, entry);
        }
    }
    return { byDeployment: ordered, problems };
}

/** Where an install's admission webhooks apply: the AdmissionWebhook component's scope arguments. */
export interface WebhookScope {
    /** Labelled target namespaces; undefined for every namespace (or a by-name scope). */
    targetNamespaces: string[] | undefined;
    /** Namespaces selected by name (`kubernetes.io/metadata.name In`); undefined when not confined by name. */
    namespaceNames?: string[];
    excludedNamespaces: string[];
}

/**
 * The webhooks' scope for an install in `namespace`. A targeted install sees its target
 * namespaces (labelled). An AllNamespaces install sees every namespace, unless `confinedTo` is
 * set (`olm.disableAllNamespacePermissionPromotion`: the operator watches and has Roles in
 * `rbacNamespaces` only), then it sees those namespaces by name, the label the API server sets on
 * every namespace (kubernetes `pkg/controller/namespace`, NamespaceDefaultLabelName), so nothing
 * has to be written to namespaces the stack may not own. The CSV has no selector of its own to
 * merge (operator-framework/api `pkg/operators/v1alpha1/clusterserviceversion.go`: `WebhookDescription` has no namespaceSelector, `GetValidatingWebhook` takes one; OLM fills it from
 * the OperatorGroup, `pkg/controller/install/webhook.go`); the stack's exclusions still apply, so
 * kube-system stays out and the operator's own namespace is seen only when `rbacNamespaces` lists
 * it, as for any targeted install (`requiredExclusions`). namespaceSelector does not apply to
 * cluster-scoped objects: a webhook on a cluster-scoped resource still sees every such object.
 */
export function webhookScopeOf(
    namespace: string,
    targetNamespaces: readonly string[],
    confinedTo: readonly string[] | undefined,
): WebhookScope {
    if (targetNamespaces.length > 0) {
        return { targetNamespaces: [...targetNamespaces], excludedNamespaces: requiredExclusions(namespace, targetNamespaces) };
    }
    if (confinedTo === undefined) {
        return { targetNamespaces: undefined, excludedNamespaces: requiredExclusions(namespace, undefined) };
    }
    return {
        targetNamespaces: undefined,
        namespaceNames: [...confinedTo],
        excludedNamespaces: requiredExclusions(namespace, confinedTo),
    };
}
