/**
 * The objects of an admission webhook, as pure functions of its description: the Service
 * in front of the Deployment, the namespace label and selector, the webhook configuration
 * entries with their generated `clientConfig`, and the certificate mounts. No Pulumi imports.
 */
import { createHash } from "node:crypto";
import { NAMESPACE_NAME_LABEL } from "../shared/label-selector";
import { platformLabels } from "../shared/labels";
import type { LabelSelector, SelectorRequirement } from "../shared/label-selector";
import { WEBHOOK_CERT_MOUNT_PATHS, WebhookBackend, WebhookDefinition } from "./contract";
import { byEntryKey } from "../shared/order";

type Obj = Record<string, unknown>;

export { NAMESPACE_NAME_LABEL };
/** Prefix of the label the stack puts on a webhook's target namespaces. */
export const TARGET_NAMESPACE_LABEL_PREFIX = "webhooks.cluster-platform.io";
const LABEL_NAME_MAX = 63;

/** OLM's Service name for a webhook's Deployment. */
export function webhookServiceName(backend: Pick<WebhookBackend, "deploymentName">): string {
    return `${backend.deploymentName}-service`;
}

/** The default name of the webhook configuration object(s): `<namespace>.<deployment>`. */
export function defaultConfigurationName(backend: Pick<WebhookBackend, "deploymentName" | "namespace">): string {
    return `${backend.namespace}.${backend.deploymentName}`;
}

/**
 * The label key that marks a namespace as a target of one backend's webhooks:
 * `webhooks.cluster-platform.io/<namespace>.<deployment>`, shortened with a hash when the
 * name part would exceed 63 characters. One key per backend, so webhooks of different
 * operators never share a selector.
 */
export function targetNamespaceLabel(backend: Pick<WebhookBackend, "deploymentName" | "namespace">): string {
    const full = `${backend.namespace}.${backend.deploymentName}`;
    if (full.length <= LABEL_NAME_MAX) {
        return `${TARGET_NAMESPACE_LABEL_PREFIX}/${full}`;
    }
    const hash = createHash("sha256").update(full).digest("hex").slice(0, 10);
    const head = full.slice(0, LABEL_NAME_MAX - hash.length - 1).replace(/[^a-z0-9]+$/, "");
    return `${TARGET_NAMESPACE_LABEL_PREFIX}/${head}-${hash}`;
}

export interface SelectorInput {
    backend: Pick<WebhookBackend, "deploymentName" | "namespace">;
    /** Target namespaces; undefined for all namespaces. */
    targetNamespaces: string[] | undefined;
    /** Namespaces selected by name (`In`); `[]` selects none (`DoesNotExist` on the name label every namespace has). */
    namespaceNames?: string[];
    excludedNamespaces?: string[];
    /** Label → values whose namespaces are excluded (one NotIn expression per label). */
    excludedNamespaceLabels?: Record<string, string[]>;
    /** True when target namespaces carry the label (live cluster); false: name them instead. */
    labelled: boolean;
}

/**
 * The webhooks' namespaceSelector: the backend's label on each target namespace (or, when
 * namespaces cannot be labelled, their names), minus the excluded namespaces by name and by label.
 * Undefined (every namespace) for all namespaces with nothing excluded.
 */
export function namespaceSelector(input: SelectorInput): LabelSelector | undefined {
    const expressions: SelectorRequirement[] = [];
    let matchLabels: Record<string, string> | undefined;
    if (input.targetNamespaces !== undefined) {
        if (input.labelled) {
            matchLabels = { [targetNamespaceLabel(input.backend)]: "true" };
        } else {
            expressions.push({ key: NAMESPACE_NAME_LABEL, operator: "In", values: [...new Set(input.targetNamespaces)].sort() });
        }
    }
    if (input.namespaceNames !== undefined) {
        // An `In` with no values is invalid (apimachinery validation); no namespace lacks its name label.
        expressions.push(
            input.namespaceNames.length > 0
                ? { key: NAMESPACE_NAME_LABEL, operator: "In", values: [...new Set(input.namespaceNames)].sort() }
                : { key: NAMESPACE_NAME_LABEL, operator: "DoesNotExist" },
        );
    }
    const excluded = [...new Set(input.excludedNamespaces ?? [])].sort();
    if (excluded.length > 0) {
        expressions.push({ key: NAMESPACE_NAME_LABEL, operator: "NotIn", values: excluded });
    }
    for (const [key, values] of Object.entries(input.excludedNamespaceLabels ?? {}).sort(byEntryKey)) {
        expressions.push({ key, operator: "NotIn", values: [...new Set(values)].sort() });
    }
    if (!matchLabels && expressions.length === 0) {
        return undefined;
    }
    return { ...(matchLabels ? { matchLabels } : {}), ...(expressions.length > 0 ? { matchExpressions: expressions } : {}) };
}

function withoutUndefined(object: Obj): Obj {
    return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined));
}

/** The Service in front of the Deployment: selector = its matchLabels, port = servicePort → targetPort. */
export function webhookService(backend: WebhookBackend, annotations: Record<string, string>): Obj {
    return {
        apiVersion: "v1",
        kind: "Service",
        metadata: withoutUndefined({
            name: webhookServiceName(backend),
            namespace: backend.namespace,
            labels: platformLabels("admission-webhook"),
            annotations: Object.keys(annotations).length > 0 ? annotations : undefined,
        }),
        spec: {
            selector: { ...backend.matchLabels },
            ports: [{ name: "https", protocol: "TCP", port: backend.servicePort, targetPort: backend.targetPort }],
        },
    };
}

export type WebhookConfigurationKind = "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration";

export const CONFIGURATION_KIND: Record<WebhookDefinition["type"], WebhookConfigurationKind> = {
    MutatingAdmissionWebhook: "MutatingWebhookConfiguration",
    ValidatingAdmissionWebhook: "ValidatingWebhookConfiguration",
};

/**
 * One webhook entry: the author's fields (seed 002's Webhook struct) plus the generated
 * clientConfig (the Service, its port and the path) and namespaceSelector. Authors cannot
 * set either: only the fields named here are read from the definition.
 */
export function webhookEntry(definition: WebhookDefinition, backend: WebhookBackend, selector: LabelSelector | undefined): Obj {
    const mutating = definition.type === "MutatingAdmissionWebhook";
    return withoutUndefined({
        name: definition.name,
        clientConfig: {
            service: withoutUndefined({
                name: webhookServiceName(backend),
                namespace: backend.namespace,
                path: definition.path,
                port: backend.servicePort,
            }),
        },
        rules: definition.rules.map((rule) => withoutUndefined({ ...rule })),
        failurePolicy: definition.failurePolicy,
        matchPolicy: definition.matchPolicy,
        namespaceSelector: selector,
        objectSelector: definition.objectSelector,
        sideEffects: definition.sideEffects,
        timeoutSeconds: definition.timeoutSeconds,
        admissionReviewVersions: [...definition.admissionReviewVersions],
        reinvocationPolicy: mutating ? definition.reinvocationPolicy : undefined,
    });
}

/** The webhook configuration objects, one per type present, webhooks in the author's order. */
export function webhookConfigurations(
    name: string,
    definitions: ReadonlyArray<WebhookDefinition>,
    backend: WebhookBackend,
    selector: LabelSelector | undefined,
): { kind: WebhookConfigurationKind; object: Obj }[] {
    const kinds: WebhookConfigurationKind[] = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"];
    return kinds
        .map((kind) => ({ kind, definitions: definitions.filter((d) => CONFIGURATION_KIND[d.type] === kind) }))
        .filter(({ definitions: defs }) => defs.length > 0)
        .map(({ kind, definitions: defs }) => ({
            kind,
            object: {
                apiVersion: "admissionregistration.k8s.io/v1",
                kind,
                metadata: { name, labels: platformLabels("admission-webhook") },
                webhooks: defs.map((d) => webhookEntry(d, backend, selector)),
            },
        }));
}

/**
 * A PodDisruptionBudget for the backend's pods, for webhooks that fail closed: at most one pod
 * evicted at a time, so a node drain never takes every replica at once; unhealthy pods may
 * always be evicted, so a drain never waits on a pod that cannot become ready. Named after the
 * Deployment. Consumers that declare their own budget (the subscription webhook) do not add it:
 * the eviction API refuses pods that two budgets select.
 */
export function webhookDisruptionBudget(backend: Pick<WebhookBackend, "deploymentName" | "namespace" | "matchLabels">): Obj {
    return {
        apiVersion: "policy/v1",
        kind: "PodDisruptionBudget",
        metadata: { name: backend.deploymentName, namespace: backend.namespace, labels: platformLabels("admission-webhook") },
        spec: { maxUnavailable: 1, selector: { matchLabels: { ...backend.matchLabels } }, unhealthyPodEvictionPolicy: "AlwaysAllow" },
    };
}

/** A pod volume from a Secret (the shape of core/v1 Volume this helper fills in). */
export interface SecretVolume {
    name: string;
    secret: { secretName: string; items: { key: string; path: string }[] };
}

export interface CertificateVolumeMount {
    name: string;
    mountPath: string;
}

export interface CertificateVolumes {
    volumes: SecretVolume[];
    volumeMounts: CertificateVolumeMount[];
}

/** The volume of OLM's APIService layout (`apiserver.crt`/`apiserver.key`). */
export const APISERVICE_CERT_VOLUME = "apiservice-cert";
/** The volume of OLM's webhook layout (`tls.crt`/`tls.key`, where controller-runtime looks). */
export const WEBHOOK_CERT_VOLUME = "webhook-cert";

/**
 * OLM's two certificate volumes, in the order OLM adds them (operator-framework/
 * operator-lifecycle-manager `pkg/controller/install/certresources.go`,
 * `AddDefaultCertVolumeAndVolumeMounts`): the serving Secret's `tls.crt`/`tls.key` as
 * `apiserver.crt`/`apiserver.key` under `/apiserver.local.config/certificates` (the default
 * `--cert-dir` and pair name of a Kubernetes generic API server), and as `tls.crt`/`tls.key`
 * under `/tmp/k8s-webhook-server/serving-certs` (controller-runtime's default CertDir).
 */
export const OLM_CERTIFICATE_LAYOUT = [
    {
        volume: APISERVICE_CERT_VOLUME,
        mountPath: WEBHOOK_CERT_MOUNT_PATHS[1],
        items: [
            { key: "tls.crt", path: "apiserver.crt" },
            { key: "tls.key", path: "apiserver.key" },
        ],
    },
    {
        volume: WEBHOOK_CERT_VOLUME,
        mountPath: WEBHOOK_CERT_MOUNT_PATHS[0],
        items: [
            { key: "tls.crt", path: "tls.crt" },
            { key: "tls.key", path: "tls.key" },
        ],
    },
] as const;

/**
 * The serving certificate Secret as OLM mounts it (`OLM_CERTIFICATE_LAYOUT`): two volumes of the
 * same Secret and one mount each, for the backend's pod template (merge them with OLM's rules,
 * `withCertificateMount` in components/operator/deployments.ts, or add them to a pod spec the
 * consumer writes itself). OLM's mounts carry no `readOnly` (Secret volumes are read-only anyway).
 */
export function webhookCertificateVolumes(secretName: string): CertificateVolumes {
    return {
        volumes: OLM_CERTIFICATE_LAYOUT.map((layout) => ({
            name: layout.volume,
            secret: { secretName, items: layout.items.map((item) => ({ ...item })) },
        })),
        volumeMounts: OLM_CERTIFICATE_LAYOUT.map((layout) => ({ name: layout.volume, mountPath: layout.mountPath })),
    };
}
