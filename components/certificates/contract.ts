/**
 * The contract between the certificates capability and the components that need serving
 * certificates or CA bundles (admission webhooks, operators, subscription injection).
 * Consumers depend only on these types; `components/certificates/` implements them for the
 * three modes (self-signed, service-ca, cert-manager).
 */
import * as pulumi from "@pulumi/pulumi";
import type { CertificateMode } from "./rules";

export type { CertificateMode };

/** A serving certificate for one Service. */
export interface ServingCertificateRequest {
    /** The Service name; SANs are `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`. */
    serviceName: string;
    /** The Service's (and Secret's) namespace. */
    namespace: string;
    /** The `kubernetes.io/tls` Secret that holds `tls.crt`, `tls.key` (and `ca.crt` where the mode provides it). */
    secretName: string;
    /** Logical-name prefix for the resources made for this certificate (unique in the stack). */
    resourcePrefix: string;
}

/** What a workload needs to serve with the certificate, whatever the mode. */
export interface ServingCertificate {
    readonly request: ServingCertificateRequest;
    /** Annotations the Service must carry (service-ca: `service.beta.openshift.io/serving-cert-secret-name`). */
    readonly serviceAnnotations: Record<string, string>;
    /**
     * Annotations for the pod template that change whenever the certificate or its CA changes,
     * so a renewal rolls the pods that mount it (as OLM's `olmcahash`). Empty in modes where
     * the stack does not see the certificate (service-ca, cert-manager).
     */
    readonly podTemplateAnnotations: pulumi.Output<Record<string, string>>;
    /** Resources a workload mounting the Secret must wait for (the Secret, or the cert-manager Certificate). */
    readonly dependencies: pulumi.Resource[];
}

/** How an object with `caBundle` fields (webhook configurations, CRD conversion, APIService) trusts a serving certificate. */
export interface CaBundleInjection {
    /** Annotations to set on the object (service-ca's inject-cabundle, cert-manager's inject-ca-from). */
    readonly annotations: Record<string, string>;
    /** The base64-encoded PEM bundle for `caBundle` fields when the stack owns them (self-signed); undefined when delegated. */
    readonly caBundle: pulumi.Output<string> | undefined;
    /** The same bundle as PEM text (for a ConfigMap's `service-ca.crt`); undefined when delegated. */
    readonly caBundlePem: pulumi.Output<string> | undefined;
    /**
     * Delegated modes: the injector's current bundle (PEM) as the pre-flight read it, written into
     * webhook configurations so that they are verified from their creation on (delegated.ts);
     * undefined when it cannot be read (cert-manager keeps it in a Secret) or in self-signed mode.
     */
    readonly injectorBundlePem?: string;
    /**
     * `ignoreChanges` paths of the caBundle field(s) of an object of `kind` (every webhook's, by
     * wildcard), so a delegated injector's writes never show as drift; empty when the stack owns them.
     */
    ignoreChanges(kind: CaBundleKind): string[];
}

export type CaBundleKind =
    "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" | "CustomResourceDefinition" | "APIService" | "ConfigMap";

/**
 * Issues serving certificates and CA bundles in one mode. index.ts creates the stack's issuer
 * from `certificates` config and hands it to components; an operator with its own
 * `certificates` override gets an issuer for that mode.
 */
export interface CertificateIssuer {
    readonly mode: CertificateMode;
    /** Declares what the mode needs for `request` (a Secret, a cert-manager Certificate, or nothing), as children of `parent`. */
    servingCertificate(request: ServingCertificateRequest, parent: pulumi.Resource): ServingCertificate;
    /** How objects that call the Service of `certificate` trust it. */
    caBundleFor(certificate: ServingCertificate): CaBundleInjection;
}
