/**
 * The delegated modes: another controller issues serving certificates and writes `caBundle`
 * fields, so the stack only asks for them with annotations and never owns those fields
 * (they are left out of every object and listed in `ignoreChanges`, so `pulumi preview`
 * shows no drift when the controller writes them).
 *
 * - `service-ca` (OpenShift): the Service's `serving-cert-secret-name` annotation makes
 *   service-ca write the Secret; `inject-cabundle: "true"` makes it write `caBundle`.
 * - `cert-manager`: a `Certificate` per Service signed by the configured issuer, and
 *   `cert-manager.io/inject-ca-from: <ns>/<certificate>` for cainjector.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { platformLabels } from "../shared/labels";
import { CaBundleInjection, CaBundleKind, CertificateIssuer, ServingCertificate, ServingCertificateRequest } from "./contract";
import { CertificateExpiry, delegatedExpiry } from "./expiry";
import { bundleFieldPaths } from "./injection";
import { CERT_MANAGER_INJECT_CA_FROM, INJECT_CABUNDLE_BETA, IssuerReference, SERVING_CERT_SECRET_ANNOTATION } from "./rules";
import { servingCommonName, servingDnsNames } from "./serving";

const HOURS_PER_DAY = 24;

function delegatedInjection(annotations: Record<string, string>, injectorBundlePem?: string): CaBundleInjection {
    return {
        annotations,
        caBundle: undefined,
        caBundlePem: undefined,
        ...(injectorBundlePem === undefined ? {} : { injectorBundlePem }),
        ignoreChanges: (kind: CaBundleKind) =>
            injectorBundlePem !== undefined && WEBHOOK_CONFIGURATION_KINDS.has(kind) ? [] : bundleFieldPaths(kind),
    };
}

/** The kinds that get the injector's current bundle at creation (issue 28, point 6). */
const WEBHOOK_CONFIGURATION_KINDS: ReadonlySet<CaBundleKind> = new Set(["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);

/**
 * Where service-ca's current bundle can be read without reading a Secret: the ConfigMap OpenShift
 * publishes in every namespace with the inject annotation, whose `service-ca.crt` the injector
 * fills from the same bundle it writes into webhook configurations (openshift/service-ca-operator
 * pkg/controller/cabundleinjector/configmap.go and admissionwebhook.go, both from one `caBundle`).
 */
export const SERVICE_CA_BUNDLE_SOURCE = { namespace: "default", name: "openshift-service-ca.crt", key: "service-ca.crt" } as const;

/**
 * Mode `service-ca`: OpenShift's service-ca operator issues and injects.
 *
 * Webhook configurations get service-ca's current bundle (read by the pre-flight) in every
 * `caBundle` besides the inject annotation: the API server uses a configuration the moment it is
 * created, and without a bundle a fail-closed webhook refuses every call until the injector runs.
 * The stack then owns the field with the value the injector keeps: service-ca updates a webhook's
 * `caBundle` only when it differs from its bundle (admissionwebhook.go, `Sync`: `bytes.Equal`), so
 * it leaves the stack's equal value alone; after a rotation it writes the new bundle (an update,
 * which takes the field), and the next preview reads and declares that same bundle, a real change
 * the apply makes without conflict (equal values). The field is therefore not in `ignoreChanges`
 * for webhook configurations when the bundle was read; CRDs and APIServices keep the annotation only.
 */
export class ServiceCaIssuer implements CertificateIssuer {
    readonly mode = "service-ca" as const;
    private readonly issued: CertificateExpiry[] = [];

    /** `currentBundlePem`: service-ca's bundle as read, or undefined (not readable: annotation only). */
    constructor(private readonly currentBundlePem?: string) {}

    /** What can be known of the certificates service-ca issues for this stack (it renews them on its own). */
    expiry(): CertificateExpiry[] {
        return [...this.issued];
    }

    servingCertificate(request: ServingCertificateRequest, _parent: pulumi.Resource): ServingCertificate {
        this.issued.push(delegatedExpiry("service-ca", request.namespace, request.secretName));
        return {
            request,
            serviceAnnotations: { [SERVING_CERT_SECRET_ANNOTATION]: request.secretName },
            // service-ca renews the Secret in place; the stack never sees the certificate.
            podTemplateAnnotations: pulumi.output<Record<string, string>>({}),
            // The Secret appears once the annotated Service exists; pods wait for it to mount.
            dependencies: [],
        };
    }

    caBundleFor(_certificate: ServingCertificate): CaBundleInjection {
        return delegatedInjection({ [INJECT_CABUNDLE_BETA]: "true" }, this.currentBundlePem);
    }
}

export interface CertManagerIssuerArgs {
    /** The existing Issuer or ClusterIssuer that signs serving certificates. */
    readonly issuer: IssuerReference;
    /** `duration` of each Certificate, in days. */
    readonly certValidityDays: number;
    /** `renewBefore` of each Certificate, in days. */
    readonly renewBeforeDays: number;
    /**
     * Read the issuer before the first Certificate that uses it, so a misspelt issuer fails
     * `pulumi preview` instead of leaving Certificates unready (live clusters only).
     */
    readonly verifyIssuer: boolean;
}

/** The cert-manager Certificate object for `request` (pure). */
export function certManagerCertificate(request: ServingCertificateRequest, args: CertManagerIssuerArgs): Record<string, unknown> {
    return {
        apiVersion: "cert-manager.io/v1",
        kind: "Certificate",
        metadata: { name: request.secretName, namespace: request.namespace, labels: platformLabels("certificates") },
        spec: {
            secretName: request.secretName,
            secretTemplate: { labels: platformLabels("certificates") },
            commonName: servingCommonName(request),
            dnsNames: servingDnsNames(request),
            duration: `${args.certValidityDays * HOURS_PER_DAY}h`,
            renewBefore: `${args.renewBeforeDays * HOURS_PER_DAY}h`,
            privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
            usages: ["digital signature", "server auth"],
            issuerRef: { group: "cert-manager.io", kind: args.issuer.kind, name: args.issuer.name },
        },
    };
}

/** Mode `cert-manager`: a Certificate per Service from the configured issuer; cainjector injects. */
export class CertManagerIssuer implements CertificateIssuer {
    readonly mode = "cert-manager" as const;

    private readonly issuerReads = new Map<string, pulumi.Resource>();
    private readonly issued: CertificateExpiry[] = [];

    constructor(private readonly args: CertManagerIssuerArgs) {}

    /** What can be known of the Certificates cert-manager issues for this stack (it renews them on its own). */
    expiry(): CertificateExpiry[] {
        return [...this.issued];
    }

    /** The read of the issuer `request` uses (an Issuer lives in the Certificate's namespace), made once. */
    private readIssuer(request: ServingCertificateRequest, parent: pulumi.Resource): pulumi.Resource[] {
        if (!this.args.verifyIssuer) {
            return [];
        }
        const { kind, name } = this.args.issuer;
        const id = kind === "Issuer" ? `${request.namespace}/${name}` : name;
        let read = this.issuerReads.get(id);
        if (!read) {
            read = k8s.apiextensions.CustomResource.get(`cert-manager-${kind.toLowerCase()}-${id.replace("/", "-")}`, {
                apiVersion: "cert-manager.io/v1",
                kind,
                id,
                parent,
            });
            this.issuerReads.set(id, read);
        }
        return [read];
    }

    servingCertificate(request: ServingCertificateRequest, parent: pulumi.Resource): ServingCertificate {
        const { duration, renewBefore } = (
            certManagerCertificate(request, this.args) as { spec: { duration: string; renewBefore: string } }
        ).spec;
        this.issued.push(delegatedExpiry("cert-manager", request.namespace, request.secretName, { duration, renewBefore }));
        const issuer = this.readIssuer(request, parent);
        const certificate = new k8s.apiextensions.CustomResource(
            `${request.resourcePrefix}-certificate`,
            certManagerCertificate(request, this.args) as k8s.apiextensions.CustomResourceArgs,
            { parent, dependsOn: issuer },
        );
        return {
            request,
            serviceAnnotations: {},
            podTemplateAnnotations: pulumi.output<Record<string, string>>({}),
            dependencies: [certificate],
        };
    }

    caBundleFor(certificate: ServingCertificate): CaBundleInjection {
        const { namespace, secretName } = certificate.request;
        return delegatedInjection({ [CERT_MANAGER_INJECT_CA_FROM]: `${namespace}/${secretName}` });
    }
}
