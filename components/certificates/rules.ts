/**
 * The rules of CA bundle injection (seed 001) and of certificate settings, shared by the
 * config validator, the certificates components and policy packs. Pure: no Pulumi imports.
 */
import type { RequiredObject } from "../shared/object-refs";
import { describeValue, formatPath, Problem } from "../shared/problems";
import { asRecord } from "../shared/records";

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

/** The three ways the stack can obtain serving certificates (`certificates.mode`). */
export const CERTIFICATE_MODES = ["self-signed", "service-ca", "cert-manager"] as const;
export type CertificateMode = (typeof CERTIFICATE_MODES)[number];

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
    mode: CertificateMode;
    caValidityDays: number;
    certValidityDays: number;
    renewBeforeDays: number;
    issuer?: IssuerReference;
}

export interface CertificateOverride {
    mode?: CertificateMode;
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

/**
 * Where the right CA of an existing object comes from, in self-signed mode (`caInjection[].caSource`):
 * - `issue`: the stack issues the serving certificate of the object's backend Service
 *   (`<namespace>/<name>`) into the Secret `secretName` beside it, so the stack's CA is the right one;
 * - `configMap`: the CA is the PEM under `key` of the ConfigMap `<namespace>/<name>` (another
 *   team's CA, published for trust). A Secret is not offered: reading one would copy it (a
 *   private key beside the CA, often) into the state.
 */
export interface CaSource {
    /** Exactly one of `issue` and `configMap` (the config schema checks it). */
    issue?: { service: string; secretName: string };
    configMap?: { name: string; key: string };
}

/** The `caInjection` entry shape these rules need (the config schema owns the full one). */
export interface CaInjectionEntry {
    kind: InjectableKind;
    name: string;
    namespace?: string;
    certificate?: string;
    caSource?: CaSource;
}

/** One backend an existing object calls: a Service (`<namespace>/<name>`) or a URL, and where it is named. */
export interface Backend {
    /** `spec.service`, `spec.conversion.webhook.clientConfig`, or `webhook "<name>"`. */
    where: string;
    service?: string;
    url?: string;
}

type Loose = Record<string, unknown>;
const looseAt = (value: unknown, key: string): Loose => {
    const inner = value !== null && typeof value === "object" ? (value as Loose)[key] : undefined;
    return asRecord(inner) ?? {};
};
const serviceName = (service: Loose): string | undefined =>
    typeof service.name === "string"
        ? `${typeof service.namespace === "string" ? service.namespace : "default"}/${service.name}`
        : undefined;
function clientConfigBackend(where: string, clientConfig: Loose): Backend {
    const service = serviceName(looseAt(clientConfig, "service"));
    return service ? { where, service } : { where, url: typeof clientConfig.url === "string" ? clientConfig.url : "(none)" };
}

/** The backends an existing object of `kind` calls (a ConfigMap has none). */
export function backendsOf(kind: InjectableKind, live: Loose): Backend[] {
    switch (kind) {
        case "APIService": {
            const service = serviceName(looseAt(looseAt(live, "spec"), "service"));
            return service ? [{ where: "spec.service", service }] : [];
        }
        case "CustomResourceDefinition":
            return [
                clientConfigBackend(
                    "spec.conversion.webhook.clientConfig",
                    looseAt(looseAt(looseAt(looseAt(live, "spec"), "conversion"), "webhook"), "clientConfig"),
                ),
            ];
        case "MutatingWebhookConfiguration":
        case "ValidatingWebhookConfiguration": {
            const webhooks = Array.isArray(live.webhooks) ? (live.webhooks as Loose[]) : [];
            return webhooks.map((w) => clientConfigBackend(`webhook ${describeValue(w.name)}`, looseAt(w, "clientConfig")));
        }
        case "ConfigMap":
            return [];
    }
}

/**
 * Self-signed mode, an object that calls backends and has no `caSource`: the stack cannot know
 * its right CA (the backends are read from the live object, so this is checked on the read,
 * before any patch is declared). Undefined when there is a source or no backend.
 */
export function missingSourceProblem(entry: CaInjectionEntry, live: Loose): string | undefined {
    const backends = backendsOf(entry.kind, live);
    if (entry.caSource || backends.length === 0) {
        return undefined;
    }
    const served = backends.map((b) => `${b.where} is served by ${b.service ? `Service ${b.service}` : `URL ${b.url}`}`).join(", ");
    return `${describeEntry(entry)}: ${served}, and caInjection[].caSource does not say where its CA comes from; in self-signed mode the stack writes its own CA only where it issues the backend's certificate ({issue: {service: "<namespace>/<name>", secretName}}) or into the CA a ConfigMap names ({configMap: {name: "<namespace>/<name>", key}}), never into another team's backend by default`;
}

/**
 * Why the stack's CA would be the wrong one for `live`, when `caSource.issue` names a Service:
 * every backend the object calls must be that Service (served with the certificate the stack
 * issues). Undefined when they all are, or when the source is a named CA.
 */
export function issuedSourceMismatch(entry: CaInjectionEntry, live: Loose): string | undefined {
    const issued = entry.caSource?.issue?.service;
    if (issued === undefined) {
        return undefined;
    }
    const others = backendsOf(entry.kind, live).filter((b) => b.service !== issued);
    if (others.length === 0) {
        return undefined;
    }
    const served = others.map((b) => `${b.where} is served by ${b.service ? `Service ${b.service}` : `URL ${b.url}`}`).join(", ");
    return `${describeEntry(entry)}: ${served}, not by caSource.issue.service ${describeValue(issued)}, whose certificate the stack issues; the stack's CA would be the wrong one there (list the object once per backend it trusts, or name the CA it needs with caSource.configMap)`;
}

export function describeEntry(entry: Pick<CaInjectionEntry, "kind" | "name" | "namespace">): string {
    return `${entry.kind} ${describeValue(entry.namespace ? `${entry.namespace}/${entry.name}` : entry.name)}`;
}

/**
 * Rules between `caInjection` entries and the certificate mode, for the config validator:
 * cert-manager's cainjector injects from a named Certificate and never into ConfigMaps.
 */
export function caInjectionModeProblems(mode: CertificateMode, entries: ReadonlyArray<CaInjectionEntry>): Problem[] {
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
        problems.push(...caSourceProblems(mode, entry, i));
    });
    return problems;
}

/**
 * Self-signed mode writes a CA into objects whose backends someone else may serve: only where
 * the config says the CA is the right one. A trust-bundle ConfigMap has no backend (it needs
 * none); in the delegated modes the injector knows the CA (no source).
 */
function caSourceProblems(mode: CertificateMode, entry: CaInjectionEntry, i: number): Problem[] {
    const path = formatPath(["caInjection", i, "caSource"]);
    if (entry.kind === "ConfigMap" && entry.caSource) {
        return [
            {
                path,
                message: `${describeEntry(entry)}: a ConfigMap is a trust bundle with no backend: it receives the stack's CA, so caSource does not apply`,
            },
        ];
    }
    if (mode !== "self-signed" && entry.caSource) {
        return [
            {
                path,
                message: `${describeEntry(entry)}: is only used when certificates.mode is "self-signed" (mode is ${describeValue(mode)}: the injector knows the CA)`,
            },
        ];
    }
    return [];
}

/** `<namespace>/<name>` of a namespaced object, as cert-manager's inject-ca-from takes it. */
export const NAMESPACED_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
export const NAMESPACED_NAME_RULE = 'must be "<namespace>/<name>" (a DNS-1123 label, a slash, a DNS-1123 subdomain)';

/**
 * Self-signed mode: the namespace of each Service whose certificate `caSource.issue` asks for must
 * exist (the stack writes the Secret there and never creates the namespace), once per namespace.
 */
export function requiredCaSourceObjects(mode: CertificateMode, entries: ReadonlyArray<CaInjectionEntry>): RequiredObject[] {
    if (mode !== "self-signed") {
        return [];
    }
    const seen = new Set<string>();
    return entries.flatMap((entry, i) => {
        const issue = entry.caSource?.issue;
        const namespace = issue?.service.split("/")[0];
        if (!issue || namespace === undefined || seen.has(namespace)) {
            return [];
        }
        seen.add(namespace);
        return [
            {
                ref: { apiVersion: "v1", kind: "Namespace", plural: "namespaces", name: namespace },
                path: formatPath(["caInjection", i, "caSource", "issue", "service"]),
                why: `the stack writes the serving certificate of Service ${describeValue(issue.service)} to Secret ${describeValue(`${namespace}/${issue.secretName}`)} there, and never creates the namespace`,
            },
        ];
    });
}
