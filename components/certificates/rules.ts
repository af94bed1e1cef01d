/**
 * The rules of CA bundle injection (seed 001) and of certificate settings, shared by the
 * config validator, the certificates components and policy packs. Pure: no Pulumi imports.
 */
import { describeValue, formatPath, Problem } from "../shared/problems";

/** service-ca's injection request annotations (seed 001). */
export const INJECT_CABUNDLE_ALPHA = "service.alpha.openshift.io/inject-cabundle";
export const INJECT_CABUNDLE_BETA = "service.beta.openshift.io/inject-cabundle";
/** On a Service: service-ca writes a serving certificate for it into the named Secret. */
export const SERVING_CERT_SECRET_ANNOTATION = "service.beta.openshift.io/serving-cert-secret-name";
/** cert-manager's cainjector: inject the CA of the Certificate `<namespace>/<name>`. */
export const CERT_MANAGER_INJECT_CA_FROM = "cert-manager.io/inject-ca-from";
/**
 * On a pod template: a hash of the serving certificate and CA bundle the pods mount, so a
 * renewal rolls them (the stack's counterpart of OLM's `olmcahash`).
 */
export const SERVING_CERT_HASH_ANNOTATION = "cluster-platform.io/serving-cert-hash";
/** The ConfigMap key service-ca (and this stack) writes the PEM bundle to. */
export const CONFIGMAP_BUNDLE_KEY = "service-ca.crt";

export type CertificateModeName = "self-signed" | "service-ca" | "cert-manager";

/** Where each kind that receives a CA bundle keeps it, and which request annotations it honours. */
export const INJECTION_TARGETS = {
    APIService: {
        apiVersion: "apiregistration.k8s.io/v1",
        namespaced: false,
        annotations: [INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA],
        field: "spec.caBundle",
    },
    ConfigMap: {
        apiVersion: "v1",
        namespaced: true,
        annotations: [INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA],
        field: `data["${CONFIGMAP_BUNDLE_KEY}"]`,
    },
    CustomResourceDefinition: {
        apiVersion: "apiextensions.k8s.io/v1",
        namespaced: false,
        annotations: [INJECT_CABUNDLE_BETA],
        field: "spec.conversion.webhook.clientConfig.caBundle",
    },
    MutatingWebhookConfiguration: {
        apiVersion: "admissionregistration.k8s.io/v1",
        namespaced: false,
        annotations: [INJECT_CABUNDLE_BETA],
        field: "webhooks[].clientConfig.caBundle",
    },
    ValidatingWebhookConfiguration: {
        apiVersion: "admissionregistration.k8s.io/v1",
        namespaced: false,
        annotations: [INJECT_CABUNDLE_BETA],
        field: "webhooks[].clientConfig.caBundle",
    },
} as const;

export type InjectableKind = keyof typeof INJECTION_TARGETS;
export const INJECTABLE_KINDS = Object.keys(INJECTION_TARGETS) as InjectableKind[];

export function isInjectableKind(kind: string): kind is InjectableKind {
    return Object.prototype.hasOwnProperty.call(INJECTION_TARGETS, kind);
}

/**
 * Whether `annotations` ask for the service CA bundle on an object of `kind`: an annotation
 * the kind honours (alpha and beta for APIService and ConfigMap, beta only for the rest)
 * whose value is "true", compared case-insensitively as service-ca does.
 */
export function requestsInjection(kind: InjectableKind, annotations: Record<string, unknown> | undefined): boolean {
    if (!annotations) {
        return false;
    }
    return INJECTION_TARGETS[kind].annotations.some((key) => {
        const value = annotations[key];
        return typeof value === "string" && value.toLowerCase() === "true";
    });
}

/** The request annotations present on an object (honoured or not), e.g. to strip them. */
export function injectionAnnotationsPresent(annotations: Record<string, unknown> | undefined): string[] {
    return [INJECT_CABUNDLE_ALPHA, INJECT_CABUNDLE_BETA].filter((key) => annotations?.[key] !== undefined);
}

// ---------------------------------------------------------------- certificate settings

export interface IssuerReference {
    kind: "Issuer" | "ClusterIssuer";
    name: string;
}

export interface CertificateSettings {
    mode: CertificateModeName;
    caValidityDays: number;
    certValidityDays: number;
    renewBeforeDays: number;
    issuer?: IssuerReference;
}

export interface CertificateOverride {
    mode?: CertificateModeName;
    issuer?: IssuerReference;
}

/**
 * The settings an operator's webhooks get: its `certificates` override on top of the stack's.
 * The stack's issuer carries over only while the mode stays cert-manager.
 */
export function effectiveCertificateSettings(stack: CertificateSettings, override?: CertificateOverride): CertificateSettings {
    const mode = override?.mode ?? stack.mode;
    const issuer = override?.issuer ?? (mode === "cert-manager" && stack.mode === "cert-manager" ? stack.issuer : undefined);
    return { ...stack, mode, issuer };
}

/** The `caInjection` entry shape these rules need (the config schema owns the full one). */
export interface CaInjectionEntry {
    kind: InjectableKind;
    name: string;
    namespace?: string;
    certificate?: string;
}

export function describeEntry(entry: Pick<CaInjectionEntry, "kind" | "name" | "namespace">): string {
    return `${entry.kind} ${describeValue(entry.namespace ? `${entry.namespace}/${entry.name}` : entry.name)}`;
}

/**
 * Rules between `caInjection` entries and the certificate mode, for the config validator:
 * cert-manager's cainjector injects from a named Certificate and never into ConfigMaps.
 */
export function caInjectionModeProblems(mode: CertificateModeName, entries: ReadonlyArray<CaInjectionEntry>): Problem[] {
    const problems: Problem[] = [];
    entries.forEach((entry, i) => {
        if (mode === "cert-manager" && entry.kind === "ConfigMap") {
            problems.push({
                path: formatPath(["caInjection", i, "kind"]),
                message: `${describeEntry(entry)}: cert-manager's cainjector does not inject ConfigMaps (certificates.mode is "cert-manager"); distribute the CA with trust-manager, or use mode self-signed or service-ca`,
            });
        } else if (mode === "cert-manager" && entry.certificate === undefined) {
            problems.push({
                path: formatPath(["caInjection", i, "certificate"]),
                message: `${describeEntry(entry)}: is required when certificates.mode is "cert-manager": the "<namespace>/<name>" of the Certificate whose CA cainjector injects`,
            });
        }
        if (mode !== "cert-manager" && entry.certificate !== undefined) {
            problems.push({
                path: formatPath(["caInjection", i, "certificate"]),
                message: `${describeEntry(entry)}: is only used when certificates.mode is "cert-manager" (mode is ${describeValue(mode)})`,
            });
        }
    });
    return problems;
}

/** `<namespace>/<name>` of a namespaced object, as cert-manager's inject-ca-from takes it. */
export const NAMESPACED_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
export const NAMESPACED_NAME_RULE = 'must be "<namespace>/<name>" (a DNS-1123 label, a slash, a DNS-1123 subdomain)';
