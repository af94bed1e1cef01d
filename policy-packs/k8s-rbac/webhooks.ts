/**
 * Mutating and validating webhook configurations: what each webhook may intercept, how long the
 * API server waits for it, whether it has side effects, and which namespaces it must never see.
 */
import type { ResourceValidationArgs } from "@pulumi/policy";
import {
    forbiddenRuleViolations,
    MAX_WEBHOOK_TIMEOUT_SECONDS,
    RuleScope,
    unexcludedNamespaces,
    webhookSideEffectsProblem,
    webhookTimeoutProblem,
} from "../../components/admission-webhook/rules";
import type { LabelSelector } from "../../components/shared/label-selector";
import {
    ADMISSION_GROUP,
    describeObject,
    identityOf,
    isKind,
    K8sType,
    k8sTypeOf,
    objectPolicy,
    WEBHOOK_CONFIGURATION_KINDS,
} from "../shared/k8s";
import { stringList } from "../shared/policy";
import { asArray, asObject, Obj } from "../shared/values";

/** One webhook entry of a configuration, with who it is for messages. */
export interface WebhookEntry {
    /** `MutatingWebhookConfiguration "name" webhook "w.example.io"`. */
    who: string;
    index: number;
    entry: Obj;
    /** True for `…Patch` objects: fields they leave out are not judged. */
    patch: boolean;
}

/** The webhooks of a Mutating/ValidatingWebhookConfiguration (or a patch of one); [] for other types. */
export function webhookEntries(args: Pick<ResourceValidationArgs, "type" | "props" | "name">): WebhookEntry[] {
    const type: K8sType | undefined = k8sTypeOf(args.type);
    if (!isKind(type, ADMISSION_GROUP, WEBHOOK_CONFIGURATION_KINDS)) {
        return [];
    }
    const configuration = describeObject(type.kind, identityOf(args.props, args.name));
    return asArray(args.props.webhooks).map((webhook, index) => {
        const entry = asObject(webhook) ?? {};
        return { who: `${configuration} webhook ${JSON.stringify(entry.name)} (webhooks[${index}])`, index, entry, patch: type.patch };
    });
}

export const webhookForbiddenRules = objectPolicy(
    {
        name: "k8s-webhook-forbidden-rules",
        description:
            "No admission webhook intercepts all API groups (*), OLM's group operators.coreos.com, or the webhook configurations themselves.",
        severity: "critical",
        remediationSteps:
            "Name the API groups and resources the webhook needs. A webhook on every group or on the webhook configurations can lock administrators out of fixing it; one on OLM's group can block operator installs and upgrades (ClusterServiceVersions, Subscriptions). These are OLM's own rules for operator webhooks, applied to every webhook of the stack.",
    },
    (args, _config, report) => {
        for (const webhook of webhookEntries(args)) {
            asArray(webhook.entry.rules).forEach((rule, index) => {
                for (const violation of forbiddenRuleViolations((asObject(rule) ?? {}) as RuleScope)) {
                    report(`${webhook.who} rules[${index}].${violation.field}: ${violation.message}`);
                }
            });
        }
    },
);

interface TimeoutConfig {
    maxTimeoutSeconds: number;
}

export const webhookTimeout = objectPolicy<TimeoutConfig>(
    {
        name: "k8s-webhook-timeout",
        description:
            "Admission webhooks time out within the platform's limit (the one the operator pre-flight and the stack config apply).",
        severity: "high",
        remediationSteps:
            "Set timeoutSeconds to at most the limit (the API server's default is 10). Every request the webhook intercepts waits this long when the webhook is slow or down. The default limit is the operator pre-flight's (30 s, the API's maximum); set maxTimeoutSeconds to hold the stack to a tighter one.",
        config: {
            maxTimeoutSeconds: {
                type: "integer",
                minimum: 1,
                maximum: MAX_WEBHOOK_TIMEOUT_SECONDS,
                default: MAX_WEBHOOK_TIMEOUT_SECONDS,
                description: `The longest timeoutSeconds a webhook may have (1-${MAX_WEBHOOK_TIMEOUT_SECONDS}; default: the platform's limit, which the operator pre-flight applies).`,
            },
        },
    },
    (args, config, report) => {
        for (const webhook of webhookEntries(args)) {
            if (webhook.patch && webhook.entry.timeoutSeconds === undefined) {
                continue;
            }
            const problem = webhookTimeoutProblem(webhook.entry.timeoutSeconds, config.maxTimeoutSeconds);
            if (problem) {
                report(`${webhook.who}: timeoutSeconds ${problem}`);
            }
        }
    },
);

export const webhookSideEffects = objectPolicy(
    {
        name: "k8s-webhook-side-effects",
        description: "Admission webhooks declare sideEffects None or NoneOnDryRun.",
        severity: "medium",
        remediationSteps:
            "Set sideEffects to None (or NoneOnDryRun if the webhook skips its side effects when the request's dryRun is true). Dry-run requests, which pulumi preview and kubectl --dry-run=server send, are refused by webhooks with other values.",
    },
    (args, _config, report) => {
        for (const webhook of webhookEntries(args)) {
            if (webhook.patch && webhook.entry.sideEffects === undefined) {
                continue;
            }
            const problem = webhookSideEffectsProblem(webhook.entry.sideEffects);
            if (problem) {
                report(`${webhook.who}: sideEffects ${problem}`);
            }
        }
    },
);

interface ExclusionConfig {
    alsoExcluded: string[];
}

export const webhookNamespaceExclusions = objectPolicy<ExclusionConfig>(
    {
        name: "k8s-webhook-namespace-exclusions",
        description: "Admission webhooks' namespaceSelector shuts out kube-system and the webhook's own namespace by name.",
        severity: "high",
        remediationSteps:
            "Add a namespaceSelector expression {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, <the webhook's namespace>, ...]}. A webhook that intercepts its own namespace cannot restart itself when it is down, and one that intercepts kube-system can keep the control plane from healing. Label-based selectors do not count: anyone who may label a namespace could opt it back in.",
        config: {
            alsoExcluded: stringList("Further namespaces every webhook must shut out by name (for example openshift-etcd)."),
        },
    },
    (args, config, report) => {
        for (const webhook of webhookEntries(args)) {
            const selector = webhook.entry.namespaceSelector as LabelSelector | undefined;
            if (webhook.patch && selector === undefined) {
                continue;
            }
            const service = asObject(asObject(webhook.entry.clientConfig)?.service);
            const own = typeof service?.namespace === "string" ? service.namespace : undefined;
            const missing = unexcludedNamespaces(selector, own, config.alsoExcluded);
            if (missing.length > 0) {
                const list = missing.map((n) => JSON.stringify(n)).join(", ");
                report(
                    `${webhook.who}: its namespaceSelector does not shut out ${list} by name; add {key: kubernetes.io/metadata.name, operator: NotIn, values: [${missing.join(", ")}]}`,
                );
            }
        }
    },
);
