/**
 * The certificates capability (seed 001, and the certificate part of seed 002): issuers for
 * the three modes, CA bundle injection into declared and existing objects, and CA rotation
 * without downtime. index.ts makes one `Certificates` from `certificates` and `caInjection`
 * config and hands `issuer` / `issuerFor(...)` to the components that serve TLS.
 */
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget } from "../shared/cluster";
import { CaInjection } from "./ca-injection";
import type { CertificateIssuer } from "./contract";
import { CertManagerIssuer, ServiceCaIssuer } from "./delegated";
import { CaInjectionEntry, CertificateOverride, CertificateSettings, effectiveCertificateSettings } from "./rules";
import { CertificateAuthority, SelfSignedIssuer } from "./self-signed";
import { CertificateExpiry, EXPIRY_OUTPUT } from "./expiry";
import { carriedOutputs } from "../shared/previous-update";
import { TrustState } from "./trust";
import { byText } from "../shared/order";

export * from "./contract";
export { caBundleTransformation, injectCaBundle } from "./declared";
export { SERVING_CERT_HASH_ANNOTATION } from "./rules";
export { EXPIRY_OUTPUT } from "./expiry";

export interface CertificatesArgs {
    /** The stack's certificate settings (validated `certificates` config). */
    readonly settings: CertificateSettings;
    /** Existing objects that receive the CA bundle (validated `caInjection` config). */
    readonly caInjection: CaInjectionEntry[];
    /** The cluster: its name goes into the CA's subject; reads and patches need it live. */
    readonly cluster: ClusterTarget;
    /** The CA trust state the previous update published (components/shared/previous-update.ts), for CA rotation. */
    readonly previousTrust: TrustState | undefined;
    /**
     * service-ca's current bundle (PEM) as the pre-flight read it (components/composition/preflight.ts),
     * written into webhook configurations at creation in service-ca mode (delegated.ts).
     * @default undefined (not read: the webhook configurations get the inject annotation only)
     */
    readonly serviceCaBundle?: string;
}

/** The stack's issuers and CA bundle injection. */
export class Certificates extends pulumi.ComponentResource {
    /** The issuer in the stack's mode. */
    readonly issuer: CertificateIssuer;
    private readonly settings: CertificateSettings;
    private readonly cluster: ClusterTarget;
    private readonly serviceCaBundle: string | undefined;
    private readonly issuers = new Map<string, CertificateIssuer>();
    private readonly selfSigned: SelfSignedIssuer;
    private authority?: CertificateAuthority;
    private readonly caInjection: CaInjection;
    private readonly injectsExisting: boolean;
    /** Set once the stack outputs are taken: an issuer asked for later would be missing from them. */
    private closed = false;

    constructor(name: string, args: CertificatesArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:certificates:Certificates", name, {}, opts);
        this.settings = args.settings;
        this.cluster = args.cluster;
        this.serviceCaBundle = args.serviceCaBundle;
        this.injectsExisting = args.caInjection.length > 0 && args.cluster.live;
        // One CA per stack, shared by every self-signed certificate, made on first use.
        const authority = (): CertificateAuthority =>
            (this.authority ??= new CertificateAuthority(
                `${name}-ca`,
                {
                    clusterName: args.cluster.name,
                    caValidityDays: args.settings.caValidityDays,
                    renewBeforeDays: args.settings.renewBeforeDays,
                    previousTrust: args.previousTrust,
                },
                { parent: this },
            ));
        this.selfSigned = new SelfSignedIssuer({
            authority,
            certValidityDays: args.settings.certValidityDays,
            renewBeforeDays: args.settings.renewBeforeDays,
            cluster: args.cluster,
        });
        this.issuer = this.issuerFor(undefined);
        this.caInjection = new CaInjection(
            `${name}-ca-injection`,
            {
                entries: args.caInjection,
                mode: args.settings.mode,
                cluster: args.cluster,
                bundle: () => this.selfSigned.stackBundle(),
                issuer: this.selfSigned,
            },
            { parent: this },
        );
        this.registerOutputs({});
    }

    /** The issuer for an operator's `certificates` override (the stack's issuer without one). */
    issuerFor(override: CertificateOverride | undefined): CertificateIssuer {
        if (this.closed) {
            throw new pulumi.ResourceError(
                "an issuer was asked for after the certificates' stack outputs were taken: its certificates would be missing from certificateExpiry (components/composition/phases.ts takes them last)",
                this,
            );
        }
        const settings = effectiveCertificateSettings(this.settings, override);
        const key = `${settings.mode}|${settings.issuer?.kind ?? ""}|${settings.issuer?.name ?? ""}`;
        let issuer = this.issuers.get(key);
        if (!issuer) {
            issuer = this.makeIssuer(settings);
            this.issuers.set(key, issuer);
        }
        return issuer;
    }

    private makeIssuer(settings: CertificateSettings): CertificateIssuer {
        switch (settings.mode) {
            case "self-signed":
                return this.selfSigned;
            case "service-ca":
                return new ServiceCaIssuer(this.serviceCaBundle);
            case "cert-manager":
                if (!settings.issuer) {
                    throw new pulumi.ResourceError("cert-manager mode needs certificates.issuer (a config rule checks this)", this);
                }
                return new CertManagerIssuer({
                    issuer: settings.issuer,
                    certValidityDays: settings.certValidityDays,
                    renewBeforeDays: settings.renewBeforeDays,
                    verifyIssuer: this.cluster.live,
                });
        }
    }

    /**
     * Stack outputs to export: the trust state the next update reads back (only when the
     * stack's CA exists), and every certificate the stack issues or relies on with its expiry
     * (`certificateExpiry`, when there is any), and what each `caInjection` entry's patch does
     * (`caInjection`, when the stack patches any). Closes the issuers: asking for one afterwards throws.
     */
    stackOutputs(): Record<string, pulumi.Input<unknown>> {
        this.closed = true;
        this.selfSigned.close();
        const delegated = [...this.issuers.values()].flatMap((issuer) =>
            issuer instanceof ServiceCaIssuer || issuer instanceof CertManagerIssuer ? issuer.expiry() : [],
        );
        const selfSigned = this.authority ? this.selfSigned.expiry() : pulumi.output<CertificateExpiry[]>([]);
        const expiry = selfSigned.apply((own) => [...own, ...delegated.sort(byText((e) => e.name))]);
        return {
            ...carriedOutputs({ certificateTrust: this.authority ? this.selfSigned.trustState() : undefined }),
            ...(this.authority || delegated.length > 0 ? { [EXPIRY_OUTPUT]: expiry } : {}),
            ...(this.injectsExisting ? { caInjection: this.caInjection.outcomes } : {}),
        };
    }
}
