/**
 * The tests' one certificate toolkit, on @peculiar/x509 with node's WebCrypto (no DER written by
 * hand, no openssl):
 * - a stand-in for the @pulumi/tls provider that signs for real: keys, self-signed certificates,
 *   certificate requests and locally signed certificates built the way the provider builds them
 *   (Go's crypto/x509 templates: key usages and extended key usages from `allowedUses`, critical
 *   basic constraints, subject/authority key ids, SANs from the request, ECDSA-with-SHA256
 *   signatures). Plug it into `renderProgram({ preview: false, computed: tlsComputed(clock) })`,
 *   or call it directly;
 * - `inspect`, which reads a certificate's extensions back in the provider's vocabulary;
 * - a CA and the serving pairs it signs for the webhook's TLS tests, projected as kubelet does;
 * - a self-signed certificate written to files, for stand-in servers and CA bundles.
 */
import "reflect-metadata";
import { createPrivateKey, createPublicKey, KeyObject, randomBytes, webcrypto, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as x509 from "@peculiar/x509";
import type { ResourceCall, StateProducer } from "../../scripts/render/mocks";
import { DAY } from "./clock";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/** The only key type here, as the stack asks the tls provider for: ECDSA P-256, signing with SHA-256. */
const EC_P256 = { name: "ECDSA", namedCurve: "P-256" };
const ECDSA_SHA256 = { ...EC_P256, hash: "SHA-256" };

// ---------------------------------------------------------------- vocabulary of the tls provider

/** `allowedUses` values that are key usages, with their bit (RFC 5280 4.2.1.3). */
export const KEY_USAGE_BITS: Record<string, number> = {
    digital_signature: 0,
    content_commitment: 1,
    key_encipherment: 2,
    data_encipherment: 3,
    key_agreement: 4,
    cert_signing: 5,
    crl_signing: 6,
    encipher_only: 7,
    decipher_only: 8,
};

/** `allowedUses` values that are extended key usages, with their OID. */
export const EXTENDED_KEY_USAGES: Record<string, string> = {
    any_extended: "2.5.29.37.0",
    server_auth: "1.3.6.1.5.5.7.3.1",
    client_auth: "1.3.6.1.5.5.7.3.2",
    code_signing: "1.3.6.1.5.5.7.3.3",
    email_protection: "1.3.6.1.5.5.7.3.4",
    ipsec_end_system: "1.3.6.1.5.5.7.3.5",
    ipsec_tunnel: "1.3.6.1.5.5.7.3.6",
    ipsec_user: "1.3.6.1.5.5.7.3.7",
    timestamping: "1.3.6.1.5.5.7.3.8",
    ocsp_signing: "1.3.6.1.5.5.7.3.9",
};

const SUBJECT_ALT_NAME = "2.5.29.17";

/** Subject attributes in the order Go's pkix.Name writes them, each in its own RDN. */
const SUBJECT_ATTRIBUTES: [keyof Subject, string][] = [
    ["country", "2.5.4.6"],
    ["province", "2.5.4.8"],
    ["locality", "2.5.4.7"],
    ["organization", "2.5.4.10"],
    ["organizationalUnit", "2.5.4.11"],
    ["commonName", "2.5.4.3"],
];

export interface Subject {
    commonName?: string;
    organization?: string;
    organizationalUnit?: string;
    country?: string;
    province?: string;
    locality?: string;
}

// ---------------------------------------------------------------- building blocks

/**
 * `compute` remembered by key. @peculiar/x509 parses and re-serializes every structure it is
 * given (several milliseconds a certificate), so what the tests sign again and again (the
 * extensions of one template, a CA's name and key id, a request) is built once.
 */
function remembered<T>(compute: (key: string) => T): (key: string) => T {
    const known = new Map<string, T>();
    return (key) => {
        if (!known.has(key)) {
            known.set(key, compute(key));
        }
        return known.get(key)!;
    };
}

/** A name as Go's encoding/asn1 writes its strings: PrintableString when it can, else UTF8String. */
function name(subject: Subject | undefined): x509.Name {
    return new x509.Name(
        SUBJECT_ATTRIBUTES.filter(([key]) => subject?.[key]).map(([key, type]) => {
            const value = subject![key]!;
            return { [type]: [x509.Name.isPrintableString(value) ? { printableString: value } : { utf8String: value }] };
        }),
    );
}

/** The extensions `allowedUses` and `isCaCertificate` make, in the order Go's crypto/x509 writes them. */
const usageExtensions = remembered((key: string): x509.Extension[] => {
    const { uses, isCa } = JSON.parse(key) as { uses: string[]; isCa: boolean };
    const flags = uses.filter((u) => u in KEY_USAGE_BITS).reduce((all, u) => all | (1 << KEY_USAGE_BITS[u]), 0);
    const oids = uses.filter((u) => u in EXTENDED_KEY_USAGES).map((u) => EXTENDED_KEY_USAGES[u]);
    return [
        ...(flags === 0 ? [] : [new x509.KeyUsagesExtension(flags, true)]),
        ...(oids.length === 0 ? [] : [new x509.ExtendedKeyUsageExtension(oids, false)]),
        new x509.BasicConstraintsExtension(isCa, undefined, true),
    ];
});

/** DNS names first, then IP addresses, as Go writes a SAN. */
function sanExtension(dnsNames: string[], ipAddresses: string[] = []): x509.Extension | undefined {
    const names = [
        ...dnsNames.map((value) => ({ type: "dns" as const, value })),
        ...ipAddresses.map((value) => ({ type: "ip" as const, value })),
    ];
    return names.length === 0 ? undefined : new x509.SubjectAlternativeNameExtension(names, false);
}

/** PEM as Go's pem.Encode writes it (and the tls provider outputs it): ending in a newline, which @peculiar/x509 leaves off. */
const pem = (data: x509.X509Certificate | x509.Pkcs10CertificateRequest): string => `${data.toString("pem")}\n`;

/** The certificate's key pair in the PEM forms the tls provider outputs. */
export interface GeneratedKey {
    privateKeyPem: string;
    privateKeyPemPkcs8: string;
    publicKeyPem: string;
}

async function newKeyPair(): Promise<CryptoKeyPair> {
    return (await webcrypto.subtle.generateKey(EC_P256, true, ["sign", "verify"])) as CryptoKeyPair;
}

/**
 * The pairs generated here, by their private key PEMs: the PEMs come back as inputs of the
 * certificates they sign, and importing a PEM again (parse, convert, import) costs more than
 * the signing itself.
 */
const generated = new Map<string, CryptoKeyPair>();

function pems(keys: CryptoKeyPair): GeneratedKey {
    const privateKey = KeyObject.from(keys.privateKey);
    const key = {
        privateKeyPem: privateKey.export({ type: "sec1", format: "pem" }) as string,
        privateKeyPemPkcs8: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
        publicKeyPem: KeyObject.from(keys.publicKey).export({ type: "spki", format: "pem" }) as string,
    };
    generated.set(key.privateKeyPem, keys).set(key.privateKeyPemPkcs8, keys);
    return key;
}

/** A private key PEM (SEC1 as the provider writes EC keys, or PKCS#8) as a WebCrypto pair. */
async function keyPairOf(privateKeyPem: string): Promise<CryptoKeyPair> {
    const known = generated.get(privateKeyPem);
    if (known) {
        return known;
    }
    const key = createPrivateKey(privateKeyPem);
    const [privateKey, publicKey] = await Promise.all([
        webcrypto.subtle.importKey("pkcs8", key.export({ type: "pkcs8", format: "der" }), EC_P256, false, ["sign"]),
        webcrypto.subtle.importKey("spki", createPublicKey(key).export({ type: "spki", format: "der" }), EC_P256, true, ["verify"]),
    ]);
    return { privateKey, publicKey };
}

// ---------------------------------------------------------------- the provider's operations

/** tls.PrivateKey with algorithm ECDSA, curve P256 (SEC1 PEM, as the provider writes EC keys). */
export async function generateKey(): Promise<GeneratedKey> {
    return pems(await newKeyPair());
}

export interface CertificateTemplate {
    subject?: Subject;
    dnsNames?: string[];
    ipAddresses?: string[];
    validityPeriodHours: number;
    allowedUses: string[];
    isCaCertificate?: boolean;
    setSubjectKeyId?: boolean;
    setAuthorityKeyId?: boolean;
}

interface Built {
    certPem: string;
    validityStartTime: string;
    validityEndTime: string;
}

async function build(
    template: CertificateTemplate,
    subject: x509.Name,
    subjectKey: x509.PublicKey,
    issuer: { name: x509.Name; key: CryptoKey; keyId?: x509.AuthorityKeyIdentifierExtension },
    san: x509.Extension | undefined,
    now: Date,
): Promise<Built> {
    const notBefore = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const notAfter = new Date(notBefore.getTime() + template.validityPeriodHours * 3600 * 1000);
    const isCa = template.isCaCertificate ?? false;
    // Go generates a subject key id for CAs even when none is asked for.
    const ski = template.setSubjectKeyId || isCa ? await x509.SubjectKeyIdentifierExtension.create(subjectKey) : undefined;
    // 16 random bytes, the top bit cleared so the serial stays a positive 16-byte INTEGER.
    const serial = randomBytes(16);
    serial[0] &= 0x7f;
    const certificate = await x509.X509CertificateGenerator.create({
        serialNumber: serial.toString("hex"),
        subject,
        issuer: issuer.name,
        notBefore,
        notAfter,
        publicKey: subjectKey,
        signingKey: issuer.key,
        signingAlgorithm: ECDSA_SHA256,
        // In the order Go's crypto/x509 writes them.
        extensions: [...usageExtensions(JSON.stringify({ uses: template.allowedUses, isCa })), ski, issuer.keyId, san].filter(
            (e): e is x509.Extension => e !== undefined,
        ),
    });
    return {
        certPem: pem(certificate),
        validityStartTime: notBefore.toISOString().replace(".000Z", "Z"),
        validityEndTime: notAfter.toISOString().replace(".000Z", "Z"),
    };
}

/** tls.SelfSignedCert. */
export async function selfSign(privateKeyPem: string, template: CertificateTemplate, now: Date): Promise<Built> {
    const keys = await keyPairOf(privateKeyPem);
    const publicKey = await x509.PublicKey.create(keys.publicKey);
    const subject = name(template.subject);
    const keyId = template.setAuthorityKeyId ? await x509.AuthorityKeyIdentifierExtension.create(publicKey) : undefined;
    const san = sanExtension(template.dnsNames ?? [], template.ipAddresses);
    return build(template, subject, publicKey, { name: subject, key: keys.privateKey, keyId }, san, now);
}

/** tls.CertRequest: a PKCS#10 request with the SANs in an extensionRequest attribute. */
export function certificateRequest(privateKeyPem: string, subject: Subject | undefined, dnsNames: string[]): Promise<string> {
    return requests(JSON.stringify({ privateKeyPem, subject, dnsNames }));
}

/** The same request for the same key, subject and names, as a tls.CertRequest keeps it while its inputs stay. */
const requests = remembered(async (key: string): Promise<string> => {
    const { privateKeyPem, subject, dnsNames } = JSON.parse(key) as { privateKeyPem: string; subject?: Subject; dnsNames: string[] };
    const san = sanExtension(dnsNames);
    const request = await x509.Pkcs10CertificateRequestGenerator.create({
        name: name(subject),
        keys: await keyPairOf(privateKeyPem),
        signingAlgorithm: ECDSA_SHA256,
        extensions: san ? [san] : [],
    });
    return pem(request);
});

const parsedRequest = remembered((requestPem: string) => new x509.Pkcs10CertificateRequest(requestPem));

const dnsNamesOf = (san: x509.SubjectAlternativeNameExtension | null): string[] =>
    san ? san.names.items.filter((n) => n.type === "dns").map((n) => n.value) : [];

/** What signing needs of a CA certificate: its name, and its key id for the authority key id. */
const issuerOf = remembered(async (caCertPem: string) => {
    const ca = new x509.X509Certificate(caCertPem);
    return { name: ca.subjectName, keyId: await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey) };
});

/** tls.LocallySignedCert: subject, key and SANs from the request; issuer and key id from the CA. */
export async function signRequest(
    requestPem: string,
    caCertPem: string,
    caPrivateKeyPem: string,
    template: CertificateTemplate,
    now: Date,
): Promise<Built> {
    const request = parsedRequest(requestPem);
    const [caKeys, ca] = await Promise.all([keyPairOf(caPrivateKeyPem), issuerOf(caCertPem)]);
    // The request's SAN extension as it is (a request's extensions are looked up by OID only).
    const san = request.getExtension(SUBJECT_ALT_NAME) ?? undefined;
    return build(template, request.subjectName, request.publicKey, { ...ca, key: caKeys.privateKey }, san, now);
}

// ---------------------------------------------------------------- reading certificates back

export interface CertificateFacts {
    keyUsages: string[];
    extendedKeyUsages: string[];
    isCa: boolean;
    basicConstraintsCritical: boolean;
    dnsNames: string[];
    subjectKeyId?: string;
    authorityKeyId?: string;
}

/** The extensions of a certificate, in the tls provider's vocabulary. */
export function inspect(certificatePem: string): CertificateFacts {
    const certificate = new x509.X509Certificate(certificatePem);
    const keyUsage = certificate.getExtension(x509.KeyUsagesExtension);
    const extendedKeyUsage = certificate.getExtension(x509.ExtendedKeyUsageExtension);
    const basicConstraints = certificate.getExtension(x509.BasicConstraintsExtension);
    const subjectKeyId = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
    const authorityKeyId = certificate.getExtension(x509.AuthorityKeyIdentifierExtension);
    const oids = (extendedKeyUsage?.usages ?? []).map(String);
    return {
        keyUsages: Object.entries(KEY_USAGE_BITS)
            .filter(([, bit]) => (keyUsage?.usages ?? 0) & (1 << bit))
            .map(([use]) => use),
        extendedKeyUsages: Object.entries(EXTENDED_KEY_USAGES)
            .filter(([, oid]) => oids.includes(oid))
            .map(([use]) => use),
        isCa: basicConstraints?.ca ?? false,
        basicConstraintsCritical: basicConstraints?.critical ?? false,
        dnsNames: dnsNamesOf(certificate.getExtension(x509.SubjectAlternativeNameExtension)),
        ...(subjectKeyId ? { subjectKeyId: subjectKeyId.keyId } : {}),
        ...(authorityKeyId?.keyId ? { authorityKeyId: authorityKeyId.keyId } : {}),
    };
}

// ---------------------------------------------------------------- the mock's producers

/**
 * The call's inputs with their secrets unwrapped. The SDK's wire form of a secret is loaded on
 * first use, so the tests that only sign (the webhook's) do not load the Pulumi SDK.
 */
async function inputsOf(call: ResourceCall): Promise<Record<string, unknown>> {
    const { specialSecretSig, specialSigKey } = await import("@pulumi/pulumi/runtime/rpc");
    const isSecret = (value: unknown): value is { value: unknown } =>
        value !== null && typeof value === "object" && (value as Record<string, unknown>)[specialSigKey] === specialSecretSig;
    return Object.fromEntries(Object.entries(call.inputs).map(([key, value]) => [key, isSecret(value) ? value.value : value]));
}

function templateOf(inputs: Record<string, unknown>): CertificateTemplate {
    return {
        subject: inputs.subject as Subject | undefined,
        dnsNames: inputs.dnsNames as string[] | undefined,
        validityPeriodHours: inputs.validityPeriodHours as number,
        allowedUses: inputs.allowedUses as string[],
        isCaCertificate: inputs.isCaCertificate as boolean | undefined,
        setSubjectKeyId: inputs.setSubjectKeyId as boolean | undefined,
        setAuthorityKeyId: inputs.setAuthorityKeyId as boolean | undefined,
    };
}

/** A clock the producers read; tests move it to walk through renewals. */
export interface Clock {
    now: Date;
}

/** Producers of the tls resources' computed outputs, signing at `clock.now`. */
export function tlsComputed(clock: Clock): Record<string, StateProducer> {
    return {
        "tls:index/privateKey:PrivateKey": async () => ({ ...(await generateKey()), algorithm: "ECDSA", ecdsaCurve: "P256" }),
        "tls:index/selfSignedCert:SelfSignedCert": async (call) => {
            const inputs = await inputsOf(call);
            return {
                ...(await selfSign(inputs.privateKeyPem as string, templateOf(inputs), clock.now)),
                keyAlgorithm: "ECDSA",
                readyForRenewal: false,
            };
        },
        "tls:index/certRequest:CertRequest": async (call) => {
            const inputs = await inputsOf(call);
            return {
                certRequestPem: await certificateRequest(
                    inputs.privateKeyPem as string,
                    inputs.subject as Subject | undefined,
                    (inputs.dnsNames as string[] | undefined) ?? [],
                ),
                keyAlgorithm: "ECDSA",
            };
        },
        "tls:index/locallySignedCert:LocallySignedCert": async (call) => {
            const inputs = await inputsOf(call);
            return {
                ...(await signRequest(
                    inputs.certRequestPem as string,
                    inputs.caCertPem as string,
                    inputs.caPrivateKeyPem as string,
                    templateOf(inputs),
                    clock.now,
                )),
                caKeyAlgorithm: "ECDSA",
                readyForRenewal: false,
            };
        },
    };
}

/**
 * The tls provider with state across renders, as the engine keeps it between updates: a
 * resource whose inputs did not change keeps its outputs; one whose inputs changed, or that
 * a test replaces (as `earlyRenewalHours` or a `replacementTrigger` would), is created anew.
 */
export class TlsProviderState {
    private readonly resources = new Map<string, { inputs: string; outputs: Record<string, unknown> }>();

    constructor(readonly clock: Clock) {}

    /** Producers for `renderProgram({ preview: false, computed })`. */
    producers(): Record<string, StateProducer> {
        const fresh = tlsComputed(this.clock);
        return Object.fromEntries(
            Object.entries(fresh).map(([type, produce]) => [
                type,
                async (call: ResourceCall) => {
                    const key = `${type}::${call.name}`;
                    const revealed = await inputsOf(call);
                    const inputs = JSON.stringify(
                        Object.fromEntries(
                            Object.keys(revealed)
                                .sort()
                                .map((k) => [k, revealed[k]]),
                        ),
                    );
                    const known = this.resources.get(key);
                    if (known && known.inputs === inputs) {
                        return known.outputs;
                    }
                    const outputs = await produce(call);
                    this.resources.set(key, { inputs, outputs });
                    return outputs;
                },
            ]),
        );
    }

    /**
     * The certificates the tls provider would renew at `now`: those whose notAfter minus
     * `earlyRenewalHours` has passed (the provider's `readyForRenewal`, which makes the engine
     * replace them in that update).
     */
    dueForRenewal(now: Date): string[] {
        const due: string[] = [];
        for (const [key, { inputs, outputs }] of this.resources) {
            const certPem = outputs.certPem;
            const early = (JSON.parse(inputs) as { earlyRenewalHours?: number }).earlyRenewalHours;
            if (typeof certPem !== "string" || early === undefined) {
                continue;
            }
            if (Date.parse(new X509Certificate(certPem).validTo) - early * 3600 * 1000 <= now.getTime()) {
                due.push(key.split("::")[1]);
            }
        }
        return due.sort();
    }

    /** Forgets the named resources, so the next render replaces them. */
    replace(...names: string[]): void {
        for (const key of [...this.resources.keys()]) {
            if (names.includes(key.split("::")[1])) {
                this.resources.delete(key);
            }
        }
    }
}

// ---------------------------------------------------------------- the webhook's TLS tests

export interface Authority {
    cert: string;
    keys: CryptoKeyPair;
    name: string;
}

export interface ServingPair {
    cert: string;
    key: string;
    serialNumber: string;
}

/** A CA valid from a day ago for 30 days, that may only sign certificates. */
export async function createAuthority(name = "test-ca"): Promise<Authority> {
    const keys = await newKeyPair();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: "01",
        name: `CN=${name}`,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 30 * DAY),
        keys,
        signingAlgorithm: ECDSA_SHA256,
        extensions: [
            new x509.BasicConstraintsExtension(true, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
        ],
    });
    return { cert: cert.toString("pem"), keys, name };
}

/** Splits hosts into DNS names and IP addresses (IPv4), for a SAN. */
function hostNames(hosts: string[]): { dnsNames: string[]; ipAddresses: string[] } {
    const isIp = (host: string) => /^[0-9.]+$/.test(host);
    return { dnsNames: hosts.filter((h) => !isIp(h)), ipAddresses: hosts.filter(isIp) };
}

/** A serving certificate (TLS server only) for `hosts`, valid from a day ago for 7 days, with its PKCS#8 key. */
export async function issueServingPair(
    authority: Authority,
    serialNumber: string,
    hosts = ["localhost", "127.0.0.1"],
): Promise<ServingPair> {
    const keys = await newKeyPair();
    const { dnsNames, ipAddresses } = hostNames(hosts);
    const cert = await x509.X509CertificateGenerator.create({
        serialNumber,
        subject: "CN=subscription-webhook",
        issuer: `CN=${authority.name}`,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 7 * DAY),
        publicKey: keys.publicKey,
        signingKey: authority.keys.privateKey,
        signingAlgorithm: ECDSA_SHA256,
        extensions: [sanExtension(dnsNames, ipAddresses)!, new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth])],
    });
    return { cert: cert.toString("pem"), key: pems(keys).privateKeyPemPkcs8, serialNumber };
}

/** Writes the pair as kubelet does: tls.crt/tls.key → ..data/…, with ..data swapped by rename. */
export function projectPair(directory: string, pair: ServingPair, generation: number): void {
    fs.mkdirSync(directory, { recursive: true });
    const version = `..${generation}`;
    fs.mkdirSync(path.join(directory, version));
    fs.writeFileSync(path.join(directory, version, "tls.crt"), pair.cert);
    fs.writeFileSync(path.join(directory, version, "tls.key"), pair.key);
    fs.symlinkSync(version, path.join(directory, "..data_tmp"));
    fs.renameSync(path.join(directory, "..data_tmp"), path.join(directory, "..data"));
    for (const file of ["tls.crt", "tls.key"]) {
        if (!fs.existsSync(path.join(directory, file))) fs.symlinkSync(path.join("..data", file), path.join(directory, file));
    }
}

// ---------------------------------------------------------------- certificate files

export interface SelfSigned {
    readonly keyPath: string;
    readonly certPath: string;
}

/**
 * Writes `<name>.key` (PKCS#8) and `<name>.crt` under `dir`: a self-signed CA for `commonName`,
 * valid for a day, with `hosts` (DNS names or IPv4 addresses) as its SAN, for tests whose peers
 * need real TLS (a stand-in server's certificate) or a CA bundle to publish.
 */
export async function selfSignedCertificate(dir: string, name: string, commonName: string, hosts: string[] = []): Promise<SelfSigned> {
    const key = await generateKey();
    const { certPem } = await selfSign(
        key.privateKeyPem,
        {
            subject: { commonName },
            ...hostNames(hosts),
            validityPeriodHours: 24,
            allowedUses: [],
            isCaCertificate: true,
            setAuthorityKeyId: true,
        },
        new Date(),
    );
    const keyPath = path.join(dir, `${name}.key`);
    const certPath = path.join(dir, `${name}.crt`);
    fs.writeFileSync(keyPath, key.privateKeyPemPkcs8);
    fs.writeFileSync(certPath, certPem);
    return { keyPath, certPath };
}
