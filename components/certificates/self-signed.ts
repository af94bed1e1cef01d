/**
 * Mode `self-signed`: the stack's own CA (@pulumi/tls, ECDSA P-256) signs a serving
 * certificate per Service and the stack writes every `caBundle` itself.
 *
 * Renewal is the tls provider's: each certificate carries `earlyRenewalHours`, so once its
 * renewal window is reached `pulumi preview` shows it replaced. The CA's private key rotates
 * with the CA: a small "rotation clock" certificate with the CA's validity is the key's
 * `replacementTrigger` (the CA certificate itself cannot be, it depends on the key).
 * Rotation without downtime is `trust.ts`: the stack reads back what it published last time
 * (components/shared/previous-update.ts).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as tls from "@pulumi/tls";
import type { ClusterTarget } from "../shared/cluster";
import { platformLabels } from "../shared/labels";
import { attributedTo } from "../shared/resource-errors";
import { CaBundleInjection, CertificateIssuer, ServingCertificate, ServingCertificateRequest } from "./contract";
import { CertificateExpiry, expiryWarnings, selfSignedExpiry } from "./expiry";
import { SERVING_CERT_HASH_ANNOTATION } from "./rules";
import { servingDnsNames, servingCommonName } from "./serving";
import {
    bundleBase64,
    bundlePem,
    certificateToServe,
    checkTrustState,
    publishedBundle,
    rotationStatus,
    servingCertificateHash,
    TrustState,
} from "./trust";

const HOURS_PER_DAY = 24;
const ORGANIZATION = "cluster-platform";

export interface CertificateAuthorityArgs {
    /** The cluster's name, in the CA's subject so CAs of different clusters are told apart. */
    readonly clusterName: string;
    /** Validity of the CA certificate, in days. */
    readonly caValidityDays: number;
    /** Re-issue the CA (with a new key) this many days before it expires. */
    readonly renewBeforeDays: number;
    /** The trust state the previous update published (its shape checked), if any. */
    readonly previousTrust: TrustState | undefined;
}

/** The stack's CA, and the trust state it publishes. */
export class CertificateAuthority extends pulumi.ComponentResource {
    /** The current CA certificate (PEM). */
    readonly certificatePem: pulumi.Output<string>;
    /** The CA's private key (PEM; secret). */
    readonly privateKeyPem: pulumi.Output<string>;
    /** What the last update published, if anything. */
    readonly previous: pulumi.Output<TrustState | undefined>;
    /** The CAs this update publishes (PEM), current first. */
    readonly bundle: pulumi.Output<string[]>;

    constructor(name: string, args: CertificateAuthorityArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:certificates:CertificateAuthority", name, {}, opts);
        const validityPeriodHours = args.caValidityDays * HOURS_PER_DAY;
        const earlyRenewalHours = args.renewBeforeDays * HOURS_PER_DAY;

        const clockKey = new tls.PrivateKey(`${name}-rotation-clock-key`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, { parent: this });
        const clock = new tls.SelfSignedCert(
            `${name}-rotation-clock`,
            {
                privateKeyPem: clockKey.privateKeyPem,
                subject: { commonName: `${ORGANIZATION} CA rotation clock (${args.clusterName})`, organization: ORGANIZATION },
                validityPeriodHours,
                earlyRenewalHours,
                allowedUses: ["digital_signature"],
            },
            { parent: this },
        );
        const key = new tls.PrivateKey(
            `${name}-key`,
            { algorithm: "ECDSA", ecdsaCurve: "P256" },
            { parent: this, replacementTrigger: clock.certPem },
        );
        const certificate = new tls.SelfSignedCert(
            name,
            {
                privateKeyPem: key.privateKeyPem,
                isCaCertificate: true,
                setSubjectKeyId: true,
                setAuthorityKeyId: true,
                subject: { commonName: `${ORGANIZATION} CA (${args.clusterName})`, organization: ORGANIZATION },
                validityPeriodHours,
                earlyRenewalHours,
                allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
            },
            { parent: this },
        );

        this.certificatePem = certificate.certPem;
        this.privateKeyPem = pulumi.secret(key.privateKeyPem);
        // The certificate parsing below can throw (node:crypto); such an error names this component.
        this.previous = pulumi.output(args.previousTrust).apply((value) =>
            attributedTo(this, () => {
                const { state, warning } = checkTrustState(value);
                if (warning) {
                    pulumi.log.warn(warning, this);
                }
                // What is live now is what the last update published: warn while there is time to act.
                for (const expiry of expiryWarnings(state, Date.now(), args.renewBeforeDays)) {
                    pulumi.log.warn(expiry, this);
                }
                return state;
            }),
        );
        this.bundle = pulumi.all([this.certificatePem, this.previous]).apply(([current, previous]) =>
            attributedTo(this, () => {
                const status = rotationStatus(current, previous);
                if (status) {
                    pulumi.log.warn(status, this);
                }
                return publishedBundle(current, previous);
            }),
        );
        this.registerOutputs({ certificatePem: this.certificatePem, bundle: this.bundle });
    }
}

export interface SelfSignedIssuerArgs {
    /** The stack's CA, made on first use (a stack without webhooks needs none). */
    readonly authority: () => CertificateAuthority;
    /** Validity of each serving certificate, in days. */
    readonly certValidityDays: number;
    /** Renew a serving certificate this many days before it expires. */
    readonly renewBeforeDays: number;
    /** The cluster: when the provider renders YAML to a directory, a Secret's key is written there in plaintext. */
    readonly cluster: ClusterTarget;
}

/** The warning for a serving Secret that a directory render would write out with its private key. */
export function plaintextKeyWarning(secret: string): string {
    return `Secret ${secret} holds a private key, and with cluster.renderYamlToDirectory the Kubernetes provider writes Secrets to that directory in plaintext: keep the directory private, or use certificates.mode service-ca or cert-manager so that no key is rendered`;
}

/** Issues serving certificates from the stack's CA and remembers what each Secret serves. */
export class SelfSignedIssuer implements CertificateIssuer {
    readonly mode = "self-signed" as const;
    private readonly served = new Map<string, pulumi.Output<string>>();
    /** Set once the trust state and expiry are taken: a certificate issued later would be missing from them. */
    private closed = false;

    constructor(private readonly args: SelfSignedIssuerArgs) {}

    /** Ends issuing: the stack outputs (trust state, expiry) are being taken. */
    close(): void {
        this.closed = true;
    }

    servingCertificate(request: ServingCertificateRequest, parent: pulumi.Resource): ServingCertificate {
        const secretKey = `${request.namespace}/${request.secretName}`;
        if (this.closed) {
            throw new pulumi.ResourceError(
                `serving certificate ${secretKey} is issued after the certificates' stack outputs were taken: the next update would not know it (components/composition/phases.ts takes them last)`,
                parent,
            );
        }
        if (this.served.has(secretKey)) {
            throw new pulumi.ResourceError(
                `serving certificate ${secretKey} is issued twice (resource prefix ${request.resourcePrefix})`,
                parent,
            );
        }
        const ca = this.args.authority();
        const prefix = request.resourcePrefix;
        const key = new tls.PrivateKey(`${prefix}-serving-key`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, { parent });
        const csr = new tls.CertRequest(
            `${prefix}-serving-csr`,
            {
                privateKeyPem: key.privateKeyPem,
                subject: { commonName: servingCommonName(request), organization: ORGANIZATION },
                dnsNames: servingDnsNames(request),
            },
            { parent },
        );
        const signed = new tls.LocallySignedCert(
            `${prefix}-serving-cert`,
            {
                certRequestPem: csr.certRequestPem,
                caCertPem: ca.certificatePem,
                caPrivateKeyPem: ca.privateKeyPem,
                validityPeriodHours: this.args.certValidityDays * HOURS_PER_DAY,
                earlyRenewalHours: this.args.renewBeforeDays * HOURS_PER_DAY,
                allowedUses: ["digital_signature", "server_auth"],
                setSubjectKeyId: true,
            },
            { parent },
        );
        const decision = pulumi.all([signed.certPem, ca.previous]).apply(([fresh, previous]) =>
            attributedTo(parent, () => {
                const served = certificateToServe(secretKey, fresh, previous);
                if (served.warning) {
                    pulumi.log.warn(served.warning, parent);
                }
                return served;
            }),
        );
        const certificatePem = decision.certificate;
        const caPem = ca.bundle.apply(bundlePem);
        const encode = (text: pulumi.Input<string>) => pulumi.output(text).apply((t) => Buffer.from(t, "utf8").toString("base64"));
        const secret = new k8s.core.v1.Secret(
            `${prefix}-serving-secret`,
            {
                metadata: { name: request.secretName, namespace: request.namespace, labels: platformLabels("certificates") },
                type: "kubernetes.io/tls",
                data: pulumi.secret({
                    "ca.crt": encode(caPem),
                    "tls.crt": encode(certificatePem),
                    "tls.key": encode(key.privateKeyPemPkcs8),
                }),
            },
            { parent },
        );
        if (!this.args.cluster.live) {
            pulumi.log.warn(plaintextKeyWarning(secretKey), secret);
        }
        this.served.set(secretKey, certificatePem);
        return {
            request,
            serviceAnnotations: {},
            podTemplateAnnotations: pulumi.all([certificatePem, caPem]).apply(([cert, bundle]): Record<string, string> => ({
                [SERVING_CERT_HASH_ANNOTATION]: servingCertificateHash(cert, bundle),
            })),
            dependencies: [secret],
        };
    }

    caBundleFor(_certificate: ServingCertificate): CaBundleInjection {
        const ca = this.args.authority();
        return {
            annotations: {},
            caBundle: ca.bundle.apply(bundleBase64),
            caBundlePem: ca.bundle.apply(bundlePem),
            ignoreChanges: () => [],
        };
    }

    /** The stack's bundle for objects not tied to one certificate (caInjection). */
    stackBundle(): { pem: pulumi.Output<string>; base64: pulumi.Output<string> } {
        const ca = this.args.authority();
        return { pem: ca.bundle.apply(bundlePem), base64: ca.bundle.apply(bundleBase64) };
    }

    /** The CA and every serving certificate this update issues, with notAfter and the start of the renewal window. */
    expiry(): pulumi.Output<CertificateExpiry[]> {
        const ca = this.args.authority();
        const keys = [...this.served.keys()].sort();
        return pulumi
            .all([ca.certificatePem, ...keys.map((k) => this.served.get(k)!)])
            .apply(([caPem, ...pems]) => [
                selfSignedExpiry("CA", "ca", caPem, this.args.renewBeforeDays),
                ...keys.map((k, i) => selfSignedExpiry(k, "serving", pems[i], this.args.renewBeforeDays)),
            ]);
    }

    /** What this update publishes, for the next one to read back (the `certificateTrust` output). */
    trustState(): pulumi.Output<TrustState> {
        const ca = this.args.authority();
        const keys = [...this.served.keys()].sort();
        const certificates = pulumi.all(keys.map((k) => this.served.get(k)!));
        return pulumi.all([ca.bundle, certificates]).apply(([caBundle, pems]) => ({
            caBundle,
            servingCertificates: Object.fromEntries(keys.map((k, i) => [k, pems[i]])),
        }));
    }
}
