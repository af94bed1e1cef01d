/**
 * The contract of the generic AdmissionWebhook component (seed 002's webhook struct), used by
 * operator installs and by the subscription injection webhook. Consumers build these args;
 * `components/admission-webhook/` implements the component.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { CertificateIssuer, ServingCertificate } from "../certificates/contract";
import type { ClusterTarget } from "../shared/cluster";
import type { LabelSelector } from "../shared/label-selector";

/** A rule with operations, as in admissionregistration.k8s.io/v1 RuleWithOperations. */
export interface WebhookRule {
    operations: string[];
    apiGroups: string[];
    apiVersions: string[];
    resources: string[];
    scope?: "Cluster" | "Namespaced" | "*";
}

/** Every field of the seed's `Webhook` struct: what an author may set (never clientConfig or namespaceSelector). */
export interface WebhookDefinition {
    /** The webhook's name (OLM's `generateName`), a fully qualified name such as `vpod.example.io`. */
    name: string;
    type: "ValidatingAdmissionWebhook" | "MutatingAdmissionWebhook";
    rules: WebhookRule[];
    failurePolicy?: "Fail" | "Ignore";
    matchPolicy?: "Exact" | "Equivalent";
    objectSelector?: LabelSelector;
    sideEffects: "None" | "NoneOnDryRun" | "Some" | "Unknown";
    timeoutSeconds?: number;
    admissionReviewVersions: string[];
    reinvocationPolicy?: "Never" | "IfNeeded";
    /** Path on the Service (`clientConfig.service.path`). */
    path?: string;
}

/** How the component finds and exposes the backing Deployment. */
export interface WebhookBackend {
    /** The Deployment name; the Service is `<deployment>-service`. */
    deploymentName: string;
    namespace: string;
    /** The Deployment's `spec.selector.matchLabels`, used as the Service selector. */
    matchLabels: Record<string, string>;
    /** The Service port (OLM's containerPort, default 443). */
    servicePort: number;
    /** The container port or port name the Service forwards to (OLM's targetPort; default the servicePort). */
    targetPort: number | string;
}

export interface AdmissionWebhookArgs {
    /** Where requests go. */
    readonly backend: WebhookBackend;
    /** The webhooks served by that backend (one configuration object per type). */
    readonly webhooks: WebhookDefinition[];
    /**
     * Namespaces whose objects the webhooks see: each gets a label the namespaceSelector matches.
     * `undefined` means all namespaces (no label selector), as OLM does for AllNamespaces.
     */
    readonly targetNamespaces: string[] | undefined;
    /**
     * Namespaces the webhooks see, selected by name (`kubernetes.io/metadata.name In`, the label the
     * API server sets on every namespace), with no label written; `[]` selects no namespace.
     * Undefined: no such restriction. Used where the scope is a fixed list the stack does not
     * label, such as an AllNamespaces install confined to `rbacNamespaces` (operator/webhooks.ts).
     * @default undefined
     */
    readonly namespaceNames?: string[];
    /** Namespaces always excluded (e.g. the webhook's own and the control plane's), via `kubernetes.io/metadata.name NotIn`. @default [] */
    readonly excludedNamespaces?: string[];
    /**
     * Namespaces excluded by their labels: one `<label> NotIn <values>` expression per entry, so a
     * namespace carrying the label with one of the values is never seen (e.g. OpenShift's platform
     * namespaces, which no name prefix can select).
     * @default {}
     */
    readonly excludedNamespaceLabels?: Record<string, string[]>;
    /** Issues the CA bundle in the stack's (or the operator's) mode. */
    readonly certificates: CertificateIssuer;
    /**
     * The serving certificate the backend's pods mount. The consumer issues it (with
     * `certificates.servingCertificate`) before it declares the Deployment, mounting it with
     * `webhookCertificateVolumes`, because the Deployment needs the mounts and the webhook
     * configurations need the Deployment.
     */
    readonly servingCertificate: ServingCertificate;
    /** The backing Deployment: the webhook configurations are created only once it is ready. */
    readonly deployment: pulumi.Resource;
    /**
     * The cluster: with a live API server each target namespace gets the selector label by a
     * server-side-apply NamespacePatch; when the provider renders YAML to a directory there is
     * nothing to patch, so the selector names the namespaces (`kubernetes.io/metadata.name In`).
     */
    readonly cluster: ClusterTarget;
    /** Name of the webhook configuration object(s). @default `<namespace>.<deployment>` */
    readonly configurationName?: string;
    /** Resources that create target namespaces the stack declares itself, so labels are applied after them. @default [] */
    readonly targetNamespaceDependencies?: pulumi.Resource[];
}

/**
 * Where OLM mounts serving certificates: the webhook directory (`tls.crt`/`tls.key`) and the
 * APIService directory (`apiserver.crt`/`apiserver.key`); see `OLM_CERTIFICATE_LAYOUT` in build.ts.
 */
export const WEBHOOK_CERT_MOUNT_PATHS = ["/tmp/k8s-webhook-server/serving-certs", "/apiserver.local.config/certificates"] as const;
