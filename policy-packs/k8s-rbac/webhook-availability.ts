/**
 * A webhook that fails closed blocks every request it intercepts while its pods are down, so the
 * Deployment behind it must survive a pod restart (replicas) and a node drain (a PodDisruptionBudget).
 * A stack policy: it joins webhook configurations, Services, Deployments and budgets of the stack.
 */
import type { PolicyResource } from "@pulumi/policy";
import {
    DeploymentRef,
    DisruptionBudgetRef,
    failClosedBackendProblems,
    MIN_FAIL_CLOSED_REPLICAS,
    ServiceRef,
    WebhookConfigurationRef,
} from "../../components/admission-webhook/rules";
import type { LabelSelector } from "../../components/shared/label-selector";
import { ADMISSION_GROUP, CarriedObject, carriedObjects, identityOf, isKind, k8sTypeOf, WEBHOOK_CONFIGURATION_KINDS } from "../shared/k8s";
import { stackPolicy } from "../shared/policy";
import { asArray, asObject, knownEntries, knownStringMap, known, Obj, UNKNOWN } from "../shared/values";

interface AvailabilityConfig {
    minReplicas: number;
}

const DEFAULT_NAMESPACE = "default";

function namespaced(props: Obj, name: string): { namespace: string; name: string } {
    const identity = identityOf(props, name);
    return { namespace: identity.namespace ?? DEFAULT_NAMESPACE, name: identity.name };
}

function webhookConfiguration(resource: CarriedObject, kind: string): WebhookConfigurationRef {
    return {
        kind,
        name: identityOf(resource.props, resource.name).name,
        webhooks: asArray(resource.props.webhooks).map((w) => {
            const entry = asObject(w) ?? {};
            const service = asObject(asObject(entry.clientConfig)?.service);
            return {
                name: String(entry.name),
                ...(entry.failurePolicy === undefined ? {} : { failurePolicy: String(entry.failurePolicy) }),
                ...(service ? { service: { namespace: String(service.namespace ?? DEFAULT_NAMESPACE), name: String(service.name) } } : {}),
            };
        }),
    };
}

/** The parts of the stack's Services, Deployments and PodDisruptionBudgets the rule joins on. */
function workloadsOf(resources: readonly CarriedObject[]) {
    const services: ServiceRef[] = [];
    const deployments: DeploymentRef[] = [];
    const disruptionBudgets: DisruptionBudgetRef[] = [];
    for (const resource of resources) {
        const type = k8sTypeOf(resource.type);
        if (!type || type.patch) {
            continue;
        }
        const spec = () => asObject(resource.props.spec) ?? {};
        if (isKind(type, "", ["Service"])) {
            services.push({ ...namespaced(resource.props, resource.name), selector: knownEntries(knownStringMap(spec().selector)) });
        } else if (isKind(type, "apps", ["Deployment"])) {
            const replicas = known(() => spec().replicas);
            const template = asObject(spec().template);
            deployments.push({
                ...namespaced(resource.props, resource.name),
                ...(replicas === undefined ? {} : { replicas: replicas === UNKNOWN ? "unknown" : Number(replicas) }),
                podLabels: knownEntries(knownStringMap(asObject(template?.metadata)?.labels)),
            });
        } else if (isKind(type, "policy", ["PodDisruptionBudget"])) {
            const selector = spec().selector as LabelSelector | undefined;
            disruptionBudgets.push({ ...namespaced(resource.props, resource.name), ...(selector === undefined ? {} : { selector }) });
        }
    }
    return { services, deployments, disruptionBudgets };
}

export const webhookFailClosedAvailability = stackPolicy<AvailabilityConfig>(
    {
        name: "k8s-webhook-fail-closed-availability",
        description: `A webhook with failurePolicy Fail is served by a Deployment with at least ${MIN_FAIL_CLOSED_REPLICAS} replicas and a PodDisruptionBudget.`,
        severity: "high",
        remediationSteps:
            "Run the webhook's Deployment with at least 2 replicas (spread over nodes) and declare a PodDisruptionBudget selecting its pods (maxUnavailable: 1), or set the webhook's failurePolicy to Ignore if requests may pass unchecked while it is down.",
        config: {
            minReplicas: {
                type: "integer",
                minimum: 1,
                default: MIN_FAIL_CLOSED_REPLICAS,
                description: "Replicas the Deployment behind a fail-closed webhook must run.",
            },
        },
    },
    (args, config, report) => {
        const urns = new Map<WebhookConfigurationRef, string>();
        // Each object the stack declares, a list's items included, reported at the URN of the resource that carries it.
        const objects = args.resources.flatMap((resource: PolicyResource) =>
            carriedObjects(resource).map((object) => ({ object, urn: resource.urn })),
        );
        for (const { object, urn } of objects) {
            const type = k8sTypeOf(object.type);
            // Patches change webhooks this stack does not own (a CA bundle, say): their backends are not its to check.
            if (isKind(type, ADMISSION_GROUP, WEBHOOK_CONFIGURATION_KINDS) && !type.patch) {
                urns.set(webhookConfiguration(object, type.kind), urn);
            }
        }
        if (urns.size === 0) {
            return;
        }
        for (const problem of failClosedBackendProblems([...urns.keys()], workloadsOf(objects.map((o) => o.object)), config.minReplicas)) {
            report(problem.message, urns.get(problem.configuration));
        }
    },
);
