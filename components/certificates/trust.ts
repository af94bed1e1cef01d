/**
 * CA rotation without downtime, as pure functions of what the stack published in its last
 * update (read back through a StackReference to itself) and what the tls provider holds now.
 *
 * The invariant: at every moment of an update, every serving certificate a pod may present
 * chains to a CA in the bundle the API server holds. Webhook configurations are updated only
 * after their Deployment has rolled, so the bundle an update publishes reaches the API server
 * after the new certificates are live. Hence:
 *
 *  1. The published bundle is the current CA plus the CA of every serving certificate that
 *     was live after the last update (so nothing live loses its trust anchor).
 *  2. A freshly signed serving certificate goes live only if it chains to a CA the last update
 *     already published; otherwise (the update that renews the CA) the Secret keeps serving the
 *     previous certificate, which the still-published bundle trusts.
 *
 * A CA renewal therefore takes three updates: publish new + previous CA (certificates held),
 * roll the certificates signed by the new CA (bundle unchanged), drop the previous CA.
 *
 * No Pulumi imports: node:crypto only (and a type).
 */
import { createHash, X509Certificate } from "node:crypto";
import type { Carried } from "../shared/previous-update";

/** What the stack remembers of its last update: its `certificateTrust` stack output (components/shared/previous-update.ts). */
export type TrustState = Carried["certificateTrust"];

/**
 * The previous TrustState if every certificate in it parses; one that does not is reported, not
 * trusted. (Its shape is checked where it is read, components/shared/previous-update.ts.)
 */
export function checkTrustState(state: TrustState | undefined): { state?: TrustState; warning?: string } {
    if (state === undefined) {
        return {};
    }
    try {
        [...state.caBundle, ...Object.values(state.servingCertificates)].forEach((pem) => new X509Certificate(pem));
    } catch (error) {
        return {
            warning: `the previous update's certificateTrust output holds a certificate that does not parse (${(error as Error).message}); CA rotation starts afresh`,
        };
    }
    return { state: { caBundle: [...state.caBundle], servingCertificates: { ...state.servingCertificates } } };
}

function sameCertificate(a: X509Certificate, b: X509Certificate): boolean {
    return a.raw.equals(b.raw);
}

/** The CA (of `cas`) that issued `certificate`: names match and the signature verifies with its key. */
export function issuerOf(certificate: string, cas: ReadonlyArray<string>): string | undefined {
    const leaf = new X509Certificate(certificate);
    return cas.find((pem) => {
        const ca = new X509Certificate(pem);
        return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
    });
}

function dedupe(pems: ReadonlyArray<string>): string[] {
    const out: { pem: string; cert: X509Certificate }[] = [];
    for (const pem of pems) {
        const cert = new X509Certificate(pem);
        if (!out.some((o) => sameCertificate(o.cert, cert))) {
            out.push({ pem: normalizePem(pem), cert });
        }
    }
    return out.map((o) => o.pem);
}

function normalizePem(pem: string): string {
    return `${pem.trim()}\n`;
}

/** Rule 1: the CAs to publish: the current CA, then each CA a previously live serving certificate chains to. */
export function publishedBundle(currentCa: string, previous: TrustState | undefined): string[] {
    const stillNeeded = previous
        ? Object.keys(previous.servingCertificates)
              .sort()
              .map((key) => issuerOf(previous.servingCertificates[key], previous.caBundle))
              .filter((pem): pem is string => pem !== undefined)
        : [];
    // Keep the previous bundle's order among the CAs still needed, so the output is stable.
    const ordered = previous ? previous.caBundle.filter((pem) => stillNeeded.includes(pem)) : [];
    return dedupe([currentCa, ...ordered]);
}

export interface ServingDecision {
    /** The certificate (PEM) the Secret serves in this update. */
    certificate: string;
    /** True when the previous certificate is kept because the fresh one's CA is not yet published. */
    heldBack: boolean;
    /** Why a fresh certificate goes live although its CA was not published before (a possible brief failure). */
    warning?: string;
}

/**
 * Rule 2: which certificate the Secret `key` serves: the freshly signed one when a CA the
 * last update published issued it (or on the first update); otherwise the previous one,
 * provided it belongs to the same private key and chains to that published bundle.
 */
export function certificateToServe(key: string, fresh: string, previous: TrustState | undefined): ServingDecision {
    if (!previous || issuerOf(fresh, previous.caBundle) !== undefined) {
        return { certificate: normalizePem(fresh), heldBack: false };
    }
    const before = previous.servingCertificates[key];
    if (before === undefined) {
        // A new Secret: the objects that trust it are created with this update's bundle.
        return { certificate: normalizePem(fresh), heldBack: false };
    }
    const sameKey = new X509Certificate(before).publicKey.equals(new X509Certificate(fresh).publicKey);
    if (!sameKey) {
        return {
            certificate: normalizePem(fresh),
            heldBack: false,
            warning: `serving certificate ${key}: its private key changed together with the CA, so the previous certificate cannot be kept while the new CA is published; callers may see TLS failures until this update completes`,
        };
    }
    if (issuerOf(before, previous.caBundle) === undefined) {
        return {
            certificate: normalizePem(fresh),
            heldBack: false,
            warning: `serving certificate ${key}: the previous certificate does not chain to the previously published bundle, so the new one goes live at once`,
        };
    }
    return { certificate: normalizePem(before), heldBack: true };
}

/**
 * Where a rotation stands, for the operator running the update (undefined when there is none):
 * phase 1 publishes the new CA beside the previous one and holds serving certificates back;
 * phase 2 rolls them while both CAs stay published; phase 3 (no message) drops the previous CA.
 */
export function rotationStatus(currentCa: string, previous: TrustState | undefined): string | undefined {
    if (!previous || previous.caBundle.length === 0) {
        return undefined;
    }
    const current = new X509Certificate(currentCa);
    const published = previous.caBundle.some((pem) => sameCertificate(new X509Certificate(pem), current));
    if (!published) {
        return `CA rotation 1/3: the stack's CA was renewed (new key, valid until ${current.validTo}); this update publishes it beside the previous CA and keeps serving certificates on the previous one. Run \`pulumi up\` again to roll them (well before the previous CA expires), then once more to retire it.`;
    }
    const bundle = publishedBundle(currentCa, previous);
    if (bundle.length > 1) {
        return `CA rotation 2/3: serving certificates signed by the renewed CA go live in this update; the bundle keeps ${bundle.length - 1} previous CA(s) until every pod serves a certificate of the new one. Run \`pulumi up\` once more to retire them.`;
    }
    return undefined;
}

/** The PEM bundle text for `data["service-ca.crt"]` and `ca.crt`. */
export function bundlePem(cas: ReadonlyArray<string>): string {
    return cas.map(normalizePem).join("");
}

/** The value of `caBundle` fields: the PEM bundle, base64-encoded (they are `[]byte` in the API). */
export function bundleBase64(cas: ReadonlyArray<string>): string {
    return Buffer.from(bundlePem(cas), "utf8").toString("base64");
}

/** The pod-template hash: changes whenever the mounted certificate or CA bundle changes. */
export function servingCertificateHash(certificate: string, caBundle: string): string {
    return createHash("sha256").update(certificate).update("\0").update(caBundle).digest("hex");
}
