/**
 * A CSV's owned APIServices (`spec.apiservicedefinitions.owned`) as OLM installs them
 * (operator-framework/operator-lifecycle-manager `pkg/controller/install/apiservice.go`,
 * `createOrUpdateAPIService`): the APIService `<version>.<group>` with groupPriorityMinimum 2000
 * and versionPriority 15, served by `<deployment>-service` on the containerPort (default 443), its
 * CA bundle from the deployment's serving certificate. A CSV may list one `<version>.<group>` under
 * several entries (one per kind it serves, say): OLM keys them by that name, the last entry
 * winning (operator-framework/api `pkg/operators/v1alpha1/clusterserviceversion_types.go`,
 * `GetOwnedAPIServiceDescriptions` and `GetAllAPIServiceDescriptions`, which its installer and
 * requirement check use), so one APIService is installed, from the last entry. Pre-flight rules are
 * OLM's, on that entry: the owner deployment must be in the CSV
 * (`pkg/controller/operators/olm/requirements.go`, status DeploymentNotFound), and a containerPort
 * of 0 or less means 443 (`pkg/controller/install/apiservice.go`, `createOrUpdateAPIService`;
 * `certresources.go`, `getServicePort`). Pure.
 */
import { isPort } from "../admission-webhook/structure";
import { platformLabels, OPERATOR_LABEL } from "../shared/labels";
import { byEntryKey } from "../shared/order";
import { describeValue, formatPath } from "../shared/problems";
import type { ClusterServiceVersion } from "./csv";
import { webhookServiceNameOf } from "./webhooks";

/** OLM's defaults for a new APIService (apiservice.go). */
export const APISERVICE_GROUP_PRIORITY_MINIMUM = 2000;
export const APISERVICE_VERSION_PRIORITY = 15;
/** OLM's containerPort of an APIService description that gives none, or 0 or less (certresources.go, `getServicePort`). */
export const DEFAULT_APISERVICE_PORT = 443;
/**
 * The Kubernetes provider awaits this condition before the APIService counts as created
 * (pulumi/pulumi-kubernetes `provider/pkg/await/condition/custom.go` reads the `pulumi.com/waitFor`
 * annotation, `kubectl.go` checks `status.conditions`), as OLM waits for Available
 * (`IsAPIServiceAvailable`) before the CSV succeeds.
 */
export const WAIT_FOR_ANNOTATION = "pulumi.com/waitFor";
export const WAIT_FOR_AVAILABLE = "condition=Available";

/** One owned APIService, planned. */
export interface ApiServicePlan {
    /** `<version>.<group>`, the APIService's name. */
    name: string;
    group: string;
    version: string;
    deploymentName: string;
    service: { namespace: string; name: string; port: number };
}

export interface ApiServiceMappingProblem {
    field: string;
    message: string;
}

/** Owned APIServices grouped by the deployment that serves them, in CSV order, and OLM's pre-flight problems. */
export function apiServicesByDeployment(
    operator: string,
    csv: ClusterServiceVersion,
    namespace: string,
): { byDeployment: Map<string, ApiServicePlan[]>; problems: ApiServiceMappingProblem[] } {
    const problems: ApiServiceMappingProblem[] = [];
    const byDeployment = new Map<string, ApiServicePlan[]>();
    const deployments = new Set(csv.spec.install.spec.deployments.map((d) => d.name));
    // OLM's set: one entry per `<version>.<group>`, the last one listed, in name order.
    const last = new Map<string, number>();
    const owned = csv.spec.apiservicedefinitions?.owned ?? [];
    owned.forEach((description, index) => last.set(`${description.version}.${description.group}`, index));
    for (const [name, index] of [...last].sort(byEntryKey)) {
        const description = owned[index];
        const field = (...path: PropertyKey[]) => formatPath(["spec", "apiservicedefinitions", "owned", index, ...path]);
        const who = `operator ${describeValue(operator)}: owned APIService ${describeValue(name)}`;
        if (description.deploymentName === undefined || !deployments.has(description.deploymentName)) {
            problems.push({
                field: field("deploymentName"),
                message: `${who}: deploymentName ${describeValue(description.deploymentName)} is not a deployment of spec.install.spec.deployments (OLM's requirement status DeploymentNotFound)`,
            });
            continue;
        }
        const port = (description.containerPort ?? 0) > 0 ? (description.containerPort as number) : DEFAULT_APISERVICE_PORT;
        if (!isPort(port)) {
            problems.push({
                field: field("containerPort"),
                message: `${who}: ${describeValue(port)} is not a port: must be an integer from 1 to 65535`,
            });
            continue;
        }
        const plan: ApiServicePlan = {
            name,
            group: description.group,
            version: description.version,
            deploymentName: description.deploymentName,
            service: { namespace, name: webhookServiceNameOf(description.deploymentName), port },
        };
        byDeployment.set(plan.deploymentName, [...(byDeployment.get(plan.deploymentName) ?? []), plan]);
    }
    const ordered = new Map<string, ApiServicePlan[]>();
    for (const deployment of csv.spec.install.spec.deployments) {
        const plans = byDeployment.get(deployment.name);
        if (plans) {
            ordered.set(deployment.name, plans);
        }
    }
    return { byDeployment: ordered, problems };
}

/** The APIService object OLM creates, before its CA bundle (added per certificate mode). */
export function apiServiceObject(plan: ApiServicePlan, operator: string): Record<string, unknown> & { metadata: Record<string, unknown> } {
    return {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: {
            name: plan.name,
            labels: platformLabels("operator", { [OPERATOR_LABEL]: operator }),
            annotations: { [WAIT_FOR_ANNOTATION]: WAIT_FOR_AVAILABLE },
        },
        spec: {
            group: plan.group,
            version: plan.version,
            groupPriorityMinimum: APISERVICE_GROUP_PRIORITY_MINIMUM,
            versionPriority: APISERVICE_VERSION_PRIORITY,
            service: { ...plan.service },
        },
    };
}
