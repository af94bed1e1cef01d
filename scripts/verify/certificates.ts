/**
 * Whether the certificate a backend serves is one the API server accepts with the `caBundle` an
 * object carries: the chain the server sent, from its leaf, must end at a certificate the bundle
 * holds, each link signed by the next (node's X509Certificate, OpenSSL underneath), and the leaf
 * must name the Service as the API server dials it (`<service>.<namespace>.svc`, the name
 * kube-apiserver verifies for a service reference: k8s.io/apiserver pkg/util/webhook
 * `serviceResolver`, and the aggregator's `ResolveEndpoint` for APIServices). Pure.
 */
import { X509Certificate } from "node:crypto";

export interface ChainVerdict {
    readonly ok: boolean;
    readonly why: string;
    /** The leaf's notAfter, when a leaf was read. */
    readonly expires?: Date;
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle (a `caBundle`, base64-decoded), or an error naming what is wrong. */
export function parseBundle(pem: string): X509Certificate[] {
    return (pem.match(PEM) ?? []).map((block) => new X509Certificate(block));
}

function subject(c: X509Certificate): string {
    return c.subject.replace(/\n/g, ", ");
}

const DAY = 86_400_000;

/**
 * The verdict on `served` (the chain the backend sent, leaf first) against `caBundle` (PEM) for
 * `host`, at `now`. Fails when the bundle is empty, the chain does not reach a bundle certificate,
 * the leaf does not name the host, or a certificate of the chain is outside its validity.
 */
export function verifyServedChain(served: readonly X509Certificate[], caBundle: string, host: string, now: Date): ChainVerdict {
    let anchors: X509Certificate[];
    try {
        anchors = parseBundle(caBundle);
    } catch (error) {
        return { ok: false, why: `the caBundle holds a certificate that does not parse: ${(error as Error).message}` };
    }
    if (anchors.length === 0) return { ok: false, why: "the caBundle is empty or holds no PEM certificate" };
    const [leaf] = served;
    if (!leaf) return { ok: false, why: "the backend sent no certificate" };
    const expires = new Date(leaf.validTo);
    for (const c of served) {
        if (new Date(c.validFrom) > now) return { ok: false, why: `${subject(c)} is not valid before ${c.validFrom}`, expires };
        if (new Date(c.validTo) < now) return { ok: false, why: `${subject(c)} expired on ${c.validTo}`, expires };
    }
    if (leaf.checkHost(host) === undefined) {
        return {
            ok: false,
            why: `the served certificate (${subject(leaf)}, SAN ${leaf.subjectAltName ?? "none"}) does not name ${host}`,
            expires,
        };
    }
    // Walk up: the current certificate is accepted once a bundle certificate signed it (or is it);
    // otherwise the next certificate the server sent must have signed it.
    let current = leaf;
    for (let depth = 0; depth <= served.length; depth++) {
        const anchor = anchors.find((a) => a.raw.equals(current.raw) || (current.checkIssued(a) && current.verify(a.publicKey)));
        if (anchor) {
            const days = Math.floor((expires.getTime() - now.getTime()) / DAY);
            return {
                ok: true,
                why: `chains to ${subject(anchor)} in the caBundle; expires ${expires.toISOString()} (${days} days)`,
                expires,
            };
        }
        const issuer = served.find((c) => c !== current && current.checkIssued(c) && current.verify(c.publicKey));
        if (!issuer) break;
        current = issuer;
    }
    return {
        ok: false,
        why: `the served certificate (issuer ${current.issuer.replace(/\n/g, ", ")}) does not chain to any of the caBundle's ${anchors.length} certificate(s) (${anchors.map(subject).join("; ")})`,
        expires,
    };
}
