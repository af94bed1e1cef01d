/**
 * What OLM lets an operator's webhooks intercept, and what a CSV's `webhookdefinitions[]` must
 * hold, as pure checks (no Pulumi imports) shared by the operator pre-flight (before anything is
 * registered) and the k8s-rbac policy pack (which judges rendered webhook configurations with
 * the same functions). The component's own structural rules are in `structure.ts`; both use its
 * port, side-effect, review-version and timeout rules.
 *
 * The forbidden-rule texts are OLM's own (`pkg/controller/install/webhook.go`,
 * `ValidWebhookRules`), so an admin who knows OLM recognises them. Unlike OLM, the webhook
 * configuration check also matches the plural resource names the API server actually uses
 * (`mutatingwebhookconfigurations`), subresource forms and `*\/*`: OLM compares only `*` and the
 * Kind spellings, so a rule on `mutatingwebhookconfigurations` slips through it.
 *
 * The last section holds what a rendered webhook configuration must look like to be safe on a
 * shared cluster (a short timeout, no side effects, the control plane and the webhook's own
 * namespace shut out by name, and a fail-closed webhook's backend surviving a restart and a
 * drain), which the k8s-rbac pack judges on every webhook configuration of a stack.
 */
import { KNOWN_PLURALS } from "../shared/api-resources";
import { DNS1123_SUBDOMAIN_RULE, isDns1123Subdomain } from "../shared/k8s-names";
import { LabelSelector, selectorExcludesNamespace, selectorMatches } from "../shared/label-selector";
import { describeValue, formatPath } from "../shared/problems";
import { ADMISSION_REVIEW_VERSIONS, isPort, isPortName, webhookSideEffectsProblem, webhookTimeoutProblem } from "./structure";

export const OLM_GROUP = "operators.coreos.com";
export const ADMISSION_GROUP = "admissionregistration.k8s.io";

/** OLM's messages, verbatim. */
export const FORBIDDEN_RULE_MESSAGES = {
    allGroups: "Webhook rules cannot include all groups",
    olmGroup: "Webhook rules cannot include the OLM group",
    webhookConfigurations: "Webhook rules cannot include MutatingWebhookConfiguration or ValidatingWebhookConfiguration resources",
} as const;

/**
 * The platform's own rule beside OLM's (OLM does not check it): no webhook on the admission
 * policies and their bindings. A webhook that intercepts them, and is down or wrong, keeps
 * administrators from fixing the policies that guard the cluster: a lock-out. The API server
 * exempts the same kinds as the webhook configurations from webhooks
 * (kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules/rules.go,
 * `IsExemptAdmissionConfigurationResource`), but only from the release that added it; a webhook
 * asking for them is a mistake everywhere.
 */
export const ADMISSION_POLICY_RULE_MESSAGE =
    "Webhook rules cannot include ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, MutatingAdmissionPolicy or MutatingAdmissionPolicyBinding resources: a webhook on them can lock administrators out of fixing admission policies";

/**
 * How a rule may name a kind's objects (any case): its resource (plural), its singular and its
 * Kind, from the API server's discovery (components/shared/api-resources.ts). The admission
 * policies may not be served where their feature is off (MutatingAdmissionPolicy is beta in
 * v1.36): those names are k8s.io/api's (admissionregistration/v1beta1 types.go, the `+resource`
 * names `mutatingadmissionpolicies`, `mutatingadmissionpolicybindings`).
 */
function namesOf(kind: string, unserved: readonly string[] = []): string[] {
    const resource = KNOWN_PLURALS.resourceOf(ADMISSION_GROUP, kind);
    return [...new Set([...(resource ? [resource.plural, resource.singular] : unserved), kind.toLowerCase()].filter((n) => n !== ""))];
}

/** Resource names (any case, singular or plural, Kind or resource) of the admission policies and their bindings. */
const ADMISSION_POLICY_RESOURCES = new Set([
    ...namesOf("ValidatingAdmissionPolicy"),
    ...namesOf("ValidatingAdmissionPolicyBinding"),
    ...namesOf("MutatingAdmissionPolicy", ["mutatingadmissionpolicies"]),
    ...namesOf("MutatingAdmissionPolicyBinding", ["mutatingadmissionpolicybindings"]),
]);

/** Whether a rule's resource entry reaches the admission policies or their bindings (`*` and `*\/*` too). */
export function coversAdmissionPolicies(resource: string): boolean {
    const lower = resource.toLowerCase();
    return lower === "*" || lower === "*/*" || ADMISSION_POLICY_RESOURCES.has(lower.split("/")[0]);
}

/** Resource names (any case, singular or plural, Kind or resource) of the webhook configurations. */
const WEBHOOK_CONFIGURATION_RESOURCES = new Set([...namesOf("MutatingWebhookConfiguration"), ...namesOf("ValidatingWebhookConfiguration")]);

/** The part of a RuleWithOperations the forbidden-rule checks read. */
export interface RuleScope {
    apiGroups?: string[];
    resources?: string[];
}

/** One broken rule: which field of the rule and OLM's message. */
export interface RuleViolation {
    field: "apiGroups" | "resources";
    message: string;
}

/** Whether a rule's resource entry reaches the webhook configurations (`*`, `*\/*`, plurals, Kinds, subresources). */
export function coversWebhookConfigurations(resource: string): boolean {
    const lower = resource.toLowerCase();
    if (lower === "*" || lower === "*/*") {
        return true;
    }
    const base = lower.split("/")[0];
    return WEBHOOK_CONFIGURATION_RESOURCES.has(base);
}

/** OLM's `ValidWebhookRules` for one rule, and the admission-policy rule above, reporting every violation rather than the first. */
export function forbiddenRuleViolations(rule: RuleScope): RuleViolation[] {
    const groups = rule.apiGroups ?? [];
    const violations: RuleViolation[] = [];
    if (groups.includes("*")) {
        violations.push({ field: "apiGroups", message: FORBIDDEN_RULE_MESSAGES.allGroups });
    }
    if (groups.includes(OLM_GROUP)) {
        violations.push({ field: "apiGroups", message: FORBIDDEN_RULE_MESSAGES.olmGroup });
    }
    if (groups.includes(ADMISSION_GROUP) && (rule.resources ?? []).some(coversWebhookConfigurations)) {
        violations.push({ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations });
    }
    if (
        groups.includes(ADMISSION_GROUP) &&
        (rule.resources ?? []).some((r) => coversAdmissionPolicies(r) && !coversWebhookConfigurations(r))
    ) {
        violations.push({ field: "resources", message: ADMISSION_POLICY_RULE_MESSAGE });
    }
    return violations;
}

// ---------------------------------------------------------------- webhook descriptions

export type CsvWebhookType = "ValidatingAdmissionWebhook" | "MutatingAdmissionWebhook" | "ConversionWebhook";

/** The fields of OLM's WebhookDescription these checks read (a CSV's `spec.webhookdefinitions[]`). */
export interface WebhookDescriptionInput {
    generateName: string;
    type: CsvWebhookType;
    deploymentName?: string;
    containerPort?: number;
    targetPort?: number | string;
    rules?: RuleScope[];
    sideEffects?: string;
    timeoutSeconds?: number;
    admissionReviewVersions?: string[];
    reinvocationPolicy?: string;
    conversionCRDs?: string[];
}

/** What the checks need to know about the CSV around the webhooks. */
export interface WebhookContext {
    /** The operator install's name, for messages. */
    operator: string;
    /** The CSV's deployments, in order, with their containers' named ports. */
    deployments: { name: string; portNames: string[] }[];
    /** Names of the CRDs the CSV owns (`spec.customresourcedefinitions.owned[].name`). */
    ownedCrds: string[];
    /** Whether AllNamespaces is the CSV's only supported install mode (OLM's `isSingletonOperator`). */
    allNamespacesOnly: boolean;
}

/** A problem in one webhook description: the CSV field and the full message. */
export interface WebhookProblem {
    field: string;
    message: string;
}

export const MIN_PORT = 1;
export const MAX_PORT = 65535;
/** The containerPort OLM uses when a description omits it. */
export const DEFAULT_CONTAINER_PORT = 443;

/**
 * The targetPort a description's Service forwards to, or undefined for the Service port. OLM copies
 * the description's targetPort into the Service as it is, and the API server defaults a targetPort
 * of 0 or "" to the port (kubernetes pkg/apis/core/v1/defaults.go, `SetDefaults_Service`), so those
 * mean what an absent one means.
 */
export function givenTargetPort(targetPort: number | string | undefined): number | string | undefined {
    return targetPort === 0 || targetPort === "" ? undefined : targetPort;
}

/** `operator "x": webhook "y" (spec.webhookdefinitions[2].sideEffects): text`. */
export function webhookMessage(operator: string, webhook: string, field: string, text: string): string {
    return `operator ${describeValue(operator)}: webhook ${describeValue(webhook)} (${field}): ${text}`;
}

/**
 * Every problem in a CSV's webhook descriptions, checked before anything is registered:
 * OLM's forbidden rules, repeated names, unknown deployments, ports, the v1 admission API's
 * required fields, and OLM's constraints on conversion webhooks.
 */
export function webhookDescriptionProblems(webhooks: ReadonlyArray<WebhookDescriptionInput>, context: WebhookContext): WebhookProblem[] {
    const problems: WebhookProblem[] = [];
    const deployments = new Map(context.deployments.map((d) => [d.name, d]));
    const owned = new Set(context.ownedCrds);
    const firstByName = new Map<string, number>();
    const conversionOwner = new Map<string, string>();

    webhooks.forEach((webhook, index) => {
        const at = (...path: PropertyKey[]) => formatPath(["spec", "webhookdefinitions", index, ...path]);
        const report = (field: string, text: string) =>
            problems.push({ field, message: webhookMessage(context.operator, webhook.generateName, field, text) });

        // Names: unique across every type, as OLM requires (pkg/controller/operators/olm/operator.go:
        // "CSV contains repeated WebhookDescription name", whatever the types), and valid object names.
        const first = firstByName.get(webhook.generateName);
        if (first !== undefined) {
            report(
                at("generateName"),
                `repeated webhook name ${describeValue(webhook.generateName)} (already at spec.webhookdefinitions[${first}], type ${describeValue(webhooks[first].type)}): OLM fails such a CSV ("CSV contains repeated WebhookDescription name"), whatever the types`,
            );
        } else {
            firstByName.set(webhook.generateName, index);
        }
        if (!isDns1123Subdomain(webhook.generateName)) {
            report(at("generateName"), `${describeValue(webhook.generateName)} ${DNS1123_SUBDOMAIN_RULE}`);
        } else if (webhook.type !== "ConversionWebhook" && webhook.generateName.split(".").length < 3) {
            report(
                at("generateName"),
                `${describeValue(webhook.generateName)} must be a domain with at least three segments separated by dots (admissionregistration.k8s.io/v1)`,
            );
        }

        // The backing deployment and its ports.
        const deployment = webhook.deploymentName === undefined ? undefined : deployments.get(webhook.deploymentName);
        if (webhook.deploymentName === undefined || webhook.deploymentName === "") {
            report(at("deploymentName"), "is required: it names the CSV deployment that serves the webhook");
        } else if (!deployment) {
            report(
                at("deploymentName"),
                `references non-existent deployment ${describeValue(webhook.deploymentName)} (the CSV's deployments: ${context.deployments.map((d) => d.name).join(", ")})`,
            );
        }
        const containerPort = webhook.containerPort ?? DEFAULT_CONTAINER_PORT;
        if (!isPort(containerPort)) {
            report(at("containerPort"), `${containerPort} is out of range: a Service port must be ${MIN_PORT}-${MAX_PORT}`);
        }
        const target = givenTargetPort(webhook.targetPort);
        if (typeof target === "number" && !isPort(target)) {
            report(at("targetPort"), `${target} is out of range: a container port must be ${MIN_PORT}-${MAX_PORT}`);
        }
        if (typeof target === "string") {
            if (!isPortName(target)) {
                report(
                    at("targetPort"),
                    `${describeValue(target)} is not a valid port name: at most 15 lowercase letters, digits or '-', with at least one letter`,
                );
            } else if (deployment && !deployment.portNames.includes(target)) {
                const names = deployment.portNames.length > 0 ? deployment.portNames.join(", ") : "none";
                report(
                    at("targetPort"),
                    `${describeValue(target)} is not a port name of deployment ${describeValue(deployment.name)} (its named ports: ${names})`,
                );
            }
        }

        // Review versions: admission reviews, or conversion reviews for ConversionWebhook.
        const versions = webhook.admissionReviewVersions;
        if (versions === undefined || versions.length === 0) {
            report(
                at("admissionReviewVersions"),
                `is required: list the review versions the webhook understands (${ADMISSION_REVIEW_VERSIONS.join(", ")})`,
            );
        } else if (!versions.some((v) => (ADMISSION_REVIEW_VERSIONS as readonly string[]).includes(v))) {
            report(
                at("admissionReviewVersions"),
                `${describeValue(versions)} must include at least one of ${ADMISSION_REVIEW_VERSIONS.join(", ")}`,
            );
        }

        if (webhook.type === "ConversionWebhook") {
            conversionProblems(webhook, context, owned, conversionOwner, at, report);
            return;
        }

        // Admission webhooks: the v1 API's required fields and OLM's forbidden rules.
        const sideEffects = webhookSideEffectsProblem(webhook.sideEffects);
        if (sideEffects !== undefined) {
            report(at("sideEffects"), sideEffects);
        }
        const timeout = webhookTimeoutProblem(webhook.timeoutSeconds);
        if (timeout !== undefined) {
            report(at("timeoutSeconds"), timeout);
        }
        if (webhook.reinvocationPolicy !== undefined && webhook.type !== "MutatingAdmissionWebhook") {
            report(at("reinvocationPolicy"), "is only valid for MutatingAdmissionWebhook");
        }
        if (webhook.conversionCRDs !== undefined && webhook.conversionCRDs.length > 0) {
            report(at("conversionCRDs"), `is only valid for ConversionWebhook (type is ${describeValue(webhook.type)})`);
        }
        (webhook.rules ?? []).forEach((rule, r) => {
            for (const violation of forbiddenRuleViolations(rule)) {
                report(at("rules", r, violation.field), violation.message);
            }
        });
    });
    return problems;
}

function conversionProblems(
    webhook: WebhookDescriptionInput,
    context: WebhookContext,
    owned: Set<string>,
    conversionOwner: Map<string, string>,
    at: (...path: PropertyKey[]) => string,
    report: (field: string, text: string) => void,
): void {
    if (!context.allNamespacesOnly) {
        // operator-framework/api's message for the same constraint.
        report(
            at("type"),
            "only AllNamespaces InstallModeType is supported when conversionCRDs is present: a conversion webhook serves every namespace, so the CSV's installModes must support AllNamespaces and nothing else",
        );
    }
    const crds = webhook.conversionCRDs ?? [];
    if (crds.length === 0) {
        report(at("conversionCRDs"), "is required: a ConversionWebhook must name at least one owned CRD");
    }
    crds.forEach((crd, c) => {
        if (!owned.has(crd)) {
            report(
                at("conversionCRDs", c),
                `references custom resource definition ${describeValue(crd)} not owned by the CSV (spec.customresourcedefinitions.owned)`,
            );
        }
        const other = conversionOwner.get(crd);
        if (other !== undefined && other !== webhook.generateName) {
            report(
                at("conversionCRDs", c),
                `custom resource definition ${describeValue(crd)} is already converted by webhook ${describeValue(other)}`,
            );
        } else {
            conversionOwner.set(crd, webhook.generateName);
        }
    });
}

// ---------------------------------------------------------------- rendered webhook configurations

export {
    DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
    MAX_WEBHOOK_TIMEOUT_SECONDS,
    webhookSideEffectsProblem,
    webhookTimeoutProblem,
} from "./structure";
/** Namespaces no webhook may intercept, besides its own: a webhook there can keep the control plane from healing. */
export const ALWAYS_EXCLUDED_NAMESPACES = ["kube-system"] as const;
/** Replicas a webhook that fails closed needs, so that one pod's restart does not block what it intercepts. */
export const MIN_FAIL_CLOSED_REPLICAS = 2;

/**
 * What a webhook backend in `namespace` must shut out by name: the control plane's namespaces,
 * and its own unless the install targets it (an OwnNamespace operator's webhook exists to see
 * it; the k8s-rbac pack then reports it, for the admin to judge).
 */
export function requiredExclusions(namespace: string, targetNamespaces: readonly string[] | undefined): string[] {
    return [...ALWAYS_EXCLUDED_NAMESPACES, ...(targetNamespaces?.includes(namespace) ? [] : [namespace])];
}

/**
 * The namespaces of `ALWAYS_EXCLUDED_NAMESPACES`, `ownNamespace` and `alsoExcluded` that the
 * namespaceSelector does not shut out by name, in that order, without repeats.
 */
export function unexcludedNamespaces(
    selector: LabelSelector | undefined,
    ownNamespace: string | undefined,
    alsoExcluded: readonly string[] = [],
): string[] {
    const required = [...ALWAYS_EXCLUDED_NAMESPACES, ...(ownNamespace === undefined ? [] : [ownNamespace]), ...alsoExcluded];
    return [...new Set(required)].filter((namespace) => !selectorExcludesNamespace(selector, namespace));
}

// ---------------------------------------------------------------- fail-closed backends

/** The parts of a webhook entry the availability rule reads. */
export interface WebhookEntryRef {
    name: string;
    failurePolicy?: string;
    /** `clientConfig.service`; undefined when the webhook is called by URL. */
    service?: { namespace: string; name: string };
}

export interface WebhookConfigurationRef {
    kind: string;
    name: string;
    webhooks: readonly WebhookEntryRef[];
}

export interface ServiceRef {
    namespace: string;
    name: string;
    selector?: Readonly<Record<string, string>>;
}

export interface DeploymentRef {
    namespace: string;
    name: string;
    /** `spec.replicas`; undefined means 1; "unknown" (a preview) is judged once it is known. */
    replicas?: number | "unknown";
    /** The pod template's labels. */
    podLabels: Readonly<Record<string, string>>;
}

export interface DisruptionBudgetRef {
    namespace: string;
    name: string;
    selector?: LabelSelector;
}

export interface StackWorkloads {
    services: readonly ServiceRef[];
    deployments: readonly DeploymentRef[];
    disruptionBudgets: readonly DisruptionBudgetRef[];
}

/** admissionregistration.k8s.io/v1 fails closed when failurePolicy is unset. */
export function failsClosed(webhook: Pick<WebhookEntryRef, "failurePolicy">): boolean {
    return webhook.failurePolicy === undefined || webhook.failurePolicy === "Fail";
}

const key = (o: { namespace: string; name: string }) => `${o.namespace}/${o.name}`;

/** One problem, and the configuration whose webhook needs it fixed. */
export interface FailClosedProblem {
    configuration: WebhookConfigurationRef;
    message: string;
}

/**
 * For every webhook that fails closed and is served by a Service: the Deployment behind that
 * Service must run at least `minReplicas` pods and be covered by a PodDisruptionBudget, or a
 * single pod restart or node drain blocks every request the webhook intercepts. Each problem is
 * reported once per webhook.
 */
export function failClosedBackendProblems(
    configurations: readonly WebhookConfigurationRef[],
    workloads: StackWorkloads,
    minReplicas: number = MIN_FAIL_CLOSED_REPLICAS,
): FailClosedProblem[] {
    const services = new Map(workloads.services.map((s) => [key(s), s]));
    const inNamespace = <T extends { namespace: string }>(items: readonly T[]) => {
        const by = new Map<string, T[]>();
        for (const item of items) {
            by.set(item.namespace, [...(by.get(item.namespace) ?? []), item]);
        }
        return (namespace: string) => by.get(namespace) ?? [];
    };
    const deploymentsIn = inNamespace(workloads.deployments);
    const budgetsIn = inNamespace(workloads.disruptionBudgets);
    const problems: FailClosedProblem[] = [];
    for (const configuration of configurations) {
        const seen = new Set<string>();
        const add = (message: string) => {
            if (!seen.has(message)) {
                seen.add(message);
                problems.push({ configuration, message });
            }
        };
        for (const webhook of configuration.webhooks.filter((w) => failsClosed(w) && w.service)) {
            const ref = webhook.service as { namespace: string; name: string };
            const who = `${configuration.kind} ${JSON.stringify(configuration.name)} webhook ${JSON.stringify(webhook.name)} fails closed (failurePolicy Fail)`;
            const service = services.get(key(ref));
            if (!service) {
                add(
                    `${who}: its Service ${JSON.stringify(key(ref))} is not declared in this stack, so the Deployment behind it cannot be checked for ${minReplicas} replicas and a PodDisruptionBudget`,
                );
                continue;
            }
            if (!service.selector || Object.keys(service.selector).length === 0) {
                add(`${who}: its Service ${JSON.stringify(key(ref))} has no selector, so no Deployment of this stack backs it`);
                continue;
            }
            const backends = deploymentsIn(service.namespace).filter((d) =>
                selectorMatches({ matchLabels: service.selector }, d.podLabels),
            );
            if (backends.length === 0) {
                add(
                    `${who}: no Deployment in namespace ${JSON.stringify(service.namespace)} runs the pods its Service ${JSON.stringify(key(ref))} selects`,
                );
            }
            for (const deployment of backends) {
                const replicas = deployment.replicas ?? 1;
                if (replicas !== "unknown" && replicas < minReplicas) {
                    add(
                        `${who}: its Deployment ${JSON.stringify(key(deployment))} runs ${replicas} replica${replicas === 1 ? "" : "s"}; at least ${minReplicas} are needed so that one pod's restart does not block every request the webhook intercepts`,
                    );
                }
                const budgets = budgetsIn(deployment.namespace).filter(
                    (b) => b.selector !== undefined && selectorMatches(b.selector, deployment.podLabels),
                );
                if (budgets.length === 0) {
                    add(
                        `${who}: no PodDisruptionBudget in namespace ${JSON.stringify(deployment.namespace)} selects the pods of its Deployment ${JSON.stringify(key(deployment))}, so a node drain may evict them all at once`,
                    );
                }
            }
        }
    }
    return problems;
}
