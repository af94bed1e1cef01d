/**
 * A stand-in for the @pulumi/tls provider that signs for real (node:crypto, DER by hand):
 * keys, self-signed certificates, certificate requests and locally signed certificates built
 * the way the provider builds them (Go's crypto/x509 templates: key usages and extended key
 * usages from `allowedUses`, critical basic constraints, subject/authority key ids, SANs
 * from the request, ECDSA-with-SHA256 signatures). Plug it into
 * `renderProgram({ preview: false, computed: tlsComputed(clock) })`, or call it directly.
 */
import {
    createHash,
    createPrivateKey,
    createPublicKey,
    generateKeyPairSync,
    KeyObject,
    randomBytes,
    sign,
    X509Certificate,
} from "node:crypto";
import { specialSecretSig, specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import type { ResourceCall, StateProducer } from "../../scripts/render/mocks";
import * as der from "./der";

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

const OID = {
    ecdsaWithSha256: "1.2.840.10045.4.3.2",
    keyUsage: "2.5.29.15",
    extKeyUsage: "2.5.29.37",
    basicConstraints: "2.5.29.19",
    subjectKeyId: "2.5.29.14",
    authorityKeyId: "2.5.29.35",
    subjectAltName: "2.5.29.17",
    extensionRequest: "1.2.840.113549.1.9.14",
};

/** Subject attributes in the order Go's pkix.Name writes them. */
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

function name(subject: Subject | undefined): Buffer {
    const rdns = SUBJECT_ATTRIBUTES.filter(([key]) => subject?.[key]).map(([key, type]) =>
        der.set(der.sequence(der.oid(type), der.directoryString(subject![key]!))),
    );
    return der.sequence(...rdns);
}

function spkiDer(key: KeyObject): Buffer {
    return key.export({ type: "spki", format: "der" }) as Buffer;
}

/** The subject key id Go computes: SHA-1 of the subjectPublicKey bits. */
export function subjectKeyId(publicKey: KeyObject): Buffer {
    const spki = der.children(der.read(spkiDer(publicKey)));
    return createHash("sha1").update(spki[1].content.subarray(1)).digest();
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
    return der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

function keyUsageExtension(uses: string[]): Buffer | undefined {
    const bits = uses.filter((u) => u in KEY_USAGE_BITS).map((u) => KEY_USAGE_BITS[u]);
    if (bits.length === 0) {
        return undefined;
    }
    const highest = Math.max(...bits);
    const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
    for (const bit of bits) {
        bytes[Math.floor(bit / 8)] |= 0x80 >> (bit % 8);
    }
    return extension(OID.keyUsage, true, der.bitString(bytes, 7 - (highest % 8)));
}

function extendedKeyUsageExtension(uses: string[]): Buffer | undefined {
    const oids = uses.filter((u) => u in EXTENDED_KEY_USAGES).map((u) => der.oid(EXTENDED_KEY_USAGES[u]));
    return oids.length === 0 ? undefined : extension(OID.extKeyUsage, false, der.sequence(...oids));
}

function sanExtension(dnsNames: string[]): Buffer | undefined {
    return dnsNames.length === 0
        ? undefined
        : extension(OID.subjectAltName, false, der.sequence(...dnsNames.map((n) => der.implicitPrimitive(2, Buffer.from(n, "ascii")))));
}

function signed(tbs: Buffer, signer: KeyObject): Buffer {
    const signature = sign("sha256", tbs, signer);
    return der.sequence(tbs, der.sequence(der.oid(OID.ecdsaWithSha256)), der.bitString(signature));
}

// ---------------------------------------------------------------- the provider's operations

export interface GeneratedKey {
    privateKeyPem: string;
    privateKeyPemPkcs8: string;
    publicKeyPem: string;
}

/** tls.PrivateKey with algorithm ECDSA, curve P256 (SEC1 PEM, as the provider writes EC keys). */
export function generateKey(): GeneratedKey {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return {
        privateKeyPem: privateKey.export({ type: "sec1", format: "pem" }) as string,
        privateKeyPemPkcs8: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
        publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) as string,
    };
}

export interface CertificateTemplate {
    subject?: Subject;
    dnsNames?: string[];
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

function build(
    template: CertificateTemplate,
    subjectName: Buffer,
    subjectKey: KeyObject,
    issuer: { name: Buffer; key: KeyObject; keyId?: Buffer },
    now: Date,
): Built {
    const notBefore = new Date(Math.floor(now.getTime() / 1000) * 1000);
    const notAfter = new Date(notBefore.getTime() + template.validityPeriodHours * 3600 * 1000);
    const isCa = template.isCaCertificate ?? false;
    // Go generates a subject key id for CAs even when none is asked for.
    const ski = template.setSubjectKeyId || isCa ? subjectKeyId(subjectKey) : undefined;
    const extensions = [
        keyUsageExtension(template.allowedUses),
        extendedKeyUsageExtension(template.allowedUses),
        extension(OID.basicConstraints, true, der.sequence(...(isCa ? [der.boolean(true)] : []))),
        ski ? extension(OID.subjectKeyId, false, der.octetString(ski)) : undefined,
        issuer.keyId ? extension(OID.authorityKeyId, false, der.sequence(der.implicitPrimitive(0, issuer.keyId))) : undefined,
        sanExtension(template.dnsNames ?? []),
    ].filter((e): e is Buffer => e !== undefined);
    const serial = randomBytes(16);
    serial[0] &= 0x7f;
    const tbs = der.sequence(
        der.explicit(0, der.integer(Buffer.from([2]))),
        der.integer(serial),
        der.sequence(der.oid(OID.ecdsaWithSha256)),
        issuer.name,
        der.sequence(der.time(notBefore), der.time(notAfter)),
        subjectName,
        spkiDer(subjectKey),
        der.explicit(3, der.sequence(...extensions)),
    );
    return {
        certPem: der.pem("CERTIFICATE", signed(tbs, issuer.key)),
        validityStartTime: notBefore.toISOString().replace(".000Z", "Z"),
        validityEndTime: notAfter.toISOString().replace(".000Z", "Z"),
    };
}

/** tls.SelfSignedCert. */
export function selfSign(privateKeyPem: string, template: CertificateTemplate, now: Date): Built {
    const key = createPrivateKey(privateKeyPem);
    const publicKey = createPublicKey(key);
    const subject = name(template.subject);
    const keyId = template.setAuthorityKeyId ? subjectKeyId(publicKey) : undefined;
    return build(template, subject, publicKey, { name: subject, key, keyId }, now);
}

/** tls.CertRequest: a PKCS#10 request with the SANs in an extensionRequest attribute. */
export function certificateRequest(privateKeyPem: string, subject: Subject | undefined, dnsNames: string[]): string {
    const key = createPrivateKey(privateKeyPem);
    const san = sanExtension(dnsNames);
    const attributes = san ? [der.sequence(der.oid(OID.extensionRequest), der.set(der.sequence(san)))] : [];
    const info = der.sequence(
        der.integer(Buffer.from([0])),
        name(subject),
        spkiDer(createPublicKey(key)),
        der.explicit(0, Buffer.concat(attributes)),
    );
    return der.pem("CERTIFICATE REQUEST", signed(info, key));
}

interface ParsedRequest {
    subject: Buffer;
    publicKey: KeyObject;
    dnsNames: string[];
}

function dnsNamesOf(sanValue: Buffer): string[] {
    return der
        .children(der.read(sanValue))
        .filter((n) => n.tag === 0x82)
        .map((n) => n.content.toString("ascii"));
}

function parseRequest(requestPem: string): ParsedRequest {
    const [info] = der.children(der.read(der.unpem(requestPem)));
    const [, subject, spki, attributes] = der.children(info);
    let dnsNames: string[] = [];
    for (const attribute of attributes ? der.children(attributes) : []) {
        const [type, values] = der.children(attribute);
        if (der.oidText(type) !== OID.extensionRequest) {
            continue;
        }
        for (const ext of der.children(der.children(values)[0])) {
            const parts = der.children(ext);
            if (der.oidText(parts[0]) === OID.subjectAltName) {
                dnsNames = dnsNamesOf(parts[parts.length - 1].content);
            }
        }
    }
    return { subject: subject.raw, publicKey: createPublicKey({ key: spki.raw, format: "der", type: "spki" }), dnsNames };
}

/** The raw subject Name of a certificate. */
function subjectOf(certificatePem: string): Buffer {
    const [tbs] = der.children(der.read(der.unpem(certificatePem)));
    const fields = der.children(tbs);
    const offset = fields[0].tag === 0xa0 ? 1 : 0;
    return fields[offset + 4].raw;
}

/** tls.LocallySignedCert: subject, key and SANs from the request; issuer and key id from the CA. */
export function signRequest(
    requestPem: string,
    caCertPem: string,
    caPrivateKeyPem: string,
    template: CertificateTemplate,
    now: Date,
): Built {
    const request = parseRequest(requestPem);
    const ca = new X509Certificate(caCertPem);
    return build(
        { ...template, dnsNames: request.dnsNames },
        request.subject,
        request.publicKey,
        { name: subjectOf(caCertPem), key: createPrivateKey(caPrivateKeyPem), keyId: subjectKeyId(ca.publicKey) },
        now,
    );
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
    const [tbs] = der.children(der.read(der.unpem(certificatePem)));
    const fields = der.children(tbs);
    const extensions = fields.find((f) => f.tag === 0xa3);
    const facts: CertificateFacts = { keyUsages: [], extendedKeyUsages: [], isCa: false, basicConstraintsCritical: false, dnsNames: [] };
    for (const ext of extensions ? der.children(der.children(extensions)[0]) : []) {
        const parts = der.children(ext);
        const id = der.oidText(parts[0]);
        const critical = parts.length === 3 && parts[1].content[0] === 0xff;
        const value = parts[parts.length - 1].content;
        if (id === OID.keyUsage) {
            const bits = der.read(value).content.subarray(1);
            facts.keyUsages = Object.entries(KEY_USAGE_BITS)
                .filter(([, bit]) => (bits[Math.floor(bit / 8)] ?? 0) & (0x80 >> (bit % 8)))
                .map(([use]) => use);
        } else if (id === OID.extKeyUsage) {
            const oids = der.children(der.read(value)).map(der.oidText);
            facts.extendedKeyUsages = Object.entries(EXTENDED_KEY_USAGES)
                .filter(([, o]) => oids.includes(o))
                .map(([use]) => use);
        } else if (id === OID.basicConstraints) {
            const inner = der.children(der.read(value));
            facts.isCa = inner.length > 0 && inner[0].tag === der.TAG.boolean && inner[0].content[0] === 0xff;
            facts.basicConstraintsCritical = critical;
        } else if (id === OID.subjectAltName) {
            facts.dnsNames = dnsNamesOf(value);
        } else if (id === OID.subjectKeyId) {
            facts.subjectKeyId = der.read(value).content.toString("hex");
        } else if (id === OID.authorityKeyId) {
            facts.authorityKeyId = der.children(der.read(value))[0].content.toString("hex");
        }
    }
    return facts;
}

// ---------------------------------------------------------------- the mock's producers

function unsecret(value: unknown): unknown {
    if (value !== null && typeof value === "object" && (value as Record<string, unknown>)[specialSigKey] === specialSecretSig) {
        return (value as { value: unknown }).value;
    }
    return value;
}

function input<T>(call: ResourceCall, key: string): T {
    return unsecret(call.inputs[key]) as T;
}

function templateOf(call: ResourceCall): CertificateTemplate {
    return {
        subject: input<Subject | undefined>(call, "subject"),
        dnsNames: input<string[] | undefined>(call, "dnsNames"),
        validityPeriodHours: input<number>(call, "validityPeriodHours"),
        allowedUses: input<string[]>(call, "allowedUses"),
        isCaCertificate: input<boolean | undefined>(call, "isCaCertificate"),
        setSubjectKeyId: input<boolean | undefined>(call, "setSubjectKeyId"),
        setAuthorityKeyId: input<boolean | undefined>(call, "setAuthorityKeyId"),
    };
}

/** A clock the producers read; tests move it to walk through renewals. */
export interface Clock {
    now: Date;
}

/** Producers of the tls resources' computed outputs, signing at `clock.now`. */
export function tlsComputed(clock: Clock): Record<string, StateProducer> {
    return {
        "tls:index/privateKey:PrivateKey": () => ({ ...generateKey(), algorithm: "ECDSA", ecdsaCurve: "P256" }),
        "tls:index/selfSignedCert:SelfSignedCert": (call) => ({
            ...selfSign(input<string>(call, "privateKeyPem"), templateOf(call), clock.now),
            keyAlgorithm: "ECDSA",
            readyForRenewal: false,
        }),
        "tls:index/certRequest:CertRequest": (call) => ({
            certRequestPem: certificateRequest(
                input<string>(call, "privateKeyPem"),
                input<Subject | undefined>(call, "subject"),
                input<string[] | undefined>(call, "dnsNames") ?? [],
            ),
            keyAlgorithm: "ECDSA",
        }),
        "tls:index/locallySignedCert:LocallySignedCert": (call) => ({
            ...signRequest(
                input<string>(call, "certRequestPem"),
                input<string>(call, "caCertPem"),
                input<string>(call, "caPrivateKeyPem"),
                templateOf(call),
                clock.now,
            ),
            caKeyAlgorithm: "ECDSA",
            readyForRenewal: false,
        }),
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
                (call: ResourceCall) => {
                    const key = `${type}::${call.name}`;
                    const inputs = JSON.stringify(
                        Object.fromEntries(
                            Object.keys(call.inputs)
                                .sort()
                                .map((k) => [k, unsecret(call.inputs[k])]),
                        ),
                    );
                    const known = this.resources.get(key);
                    if (known && known.inputs === inputs) {
                        return known.outputs;
                    }
                    const outputs = produce(call);
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
