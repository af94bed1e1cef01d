/**
 * CA rotation without downtime, walked step by step with real certificates: at every step,
 * every serving certificate a pod may present chains (node:crypto checkIssued + verify) to a
 * CA, valid at that moment, in every bundle the API server may hold during that update.
 */
import { X509Certificate } from "node:crypto";
import fc from "fast-check";
import { certificateToServe, checkTrustState, publishedBundle, rotationStatus, TrustState } from "../../components/certificates/trust";
import { DAY, T0 } from "../helpers/clock";
import { certificateRequest, generateKey, GeneratedKey, selfSign, signRequest } from "../helpers/tls-signer";

/** The stack's CA and serving certificates as the tls provider holds them at one moment. */
interface TlsState {
    caKey: GeneratedKey;
    ca: string;
    leafKeys: Record<string, GeneratedKey>;
    leaves: Record<string, string>;
}

async function newCa(now: Date): Promise<Pick<TlsState, "caKey" | "ca">> {
    const caKey = await generateKey();
    const { certPem: ca } = await selfSign(
        caKey.privateKeyPem,
        {
            subject: { commonName: "cluster-platform CA (test)", organization: "cluster-platform" },
            validityPeriodHours: 790 * 24,
            allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
            isCaCertificate: true,
            setSubjectKeyId: true,
            setAuthorityKeyId: true,
        },
        now,
    );
    return { caKey, ca };
}

async function sign(state: Pick<TlsState, "caKey" | "ca">, key: GeneratedKey, service: string, now: Date): Promise<string> {
    const csr = await certificateRequest(key.privateKeyPem, { commonName: `${service}.policy.svc` }, [
        `${service}.policy`,
        `${service}.policy.svc`,
        `${service}.policy.svc.cluster.local`,
    ]);
    const { certPem } = await signRequest(
        csr,
        state.ca,
        state.caKey.privateKeyPem,
        { validityPeriodHours: 730 * 24, allowedUses: ["digital_signature", "server_auth"], setSubjectKeyId: true },
        now,
    );
    return certPem;
}

/** What one `pulumi up` publishes and serves, from the tls state and the previous update's outputs. */
function update(tls: TlsState, previous: TrustState | undefined): { state: TrustState; heldBack: string[]; warnings: string[] } {
    const served = Object.fromEntries(Object.entries(tls.leaves).map(([key, fresh]) => [key, certificateToServe(key, fresh, previous)]));
    return {
        state: {
            caBundle: publishedBundle(tls.ca, previous),
            servingCertificates: Object.fromEntries(Object.entries(served).map(([k, d]) => [k, d.certificate])),
        },
        heldBack: Object.entries(served)
            .filter(([, d]) => d.heldBack)
            .map(([k]) => k)
            .sort(),
        warnings: Object.values(served).flatMap((d) => (d.warning ? [d.warning] : [])),
    };
}

/** The CAs of `bundle` that `certificate` chains to, valid at `now` (leaf and CA alike). */
function anchors(certificate: string, bundle: string[], now: Date): string[] {
    const leaf = new X509Certificate(certificate);
    const within = (c: X509Certificate) => new Date(c.validFrom) <= now && now <= new Date(c.validTo);
    return bundle.filter((pem) => {
        const ca = new X509Certificate(pem);
        return within(leaf) && within(ca) && leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
    });
}

/**
 * The invariant during an update: until the webhook configurations are updated (after their
 * Deployment rolled) the API server holds the previous bundle; pods present the previous or the
 * new certificate while they roll. Every combination must verify.
 */
function expectNoOutage(previous: TrustState | undefined, next: TrustState, now: Date): void {
    const bundles = previous ? [previous.caBundle, next.caBundle] : [next.caBundle];
    const live = [...Object.values(previous?.servingCertificates ?? {}), ...Object.values(next.servingCertificates)];
    for (const bundle of bundles) {
        for (const certificate of live) {
            expect(anchors(certificate, bundle, now)).not.toEqual([]);
        }
    }
}

const subjectsOf = (bundle: string[]) => bundle.map((pem) => new X509Certificate(pem).fingerprint256);

describe("CA rotation, step by step", () => {
    test("GIVEN a CA renewed with a new key WHEN the stack updates three times THEN the bundle holds both CAs until every serving certificate is re-signed, with no outage at any step", async () => {
        // Step 0: first update. CA1 signs both serving certificates; they go live at once.
        const ca1 = await newCa(T0);
        const leafKeys = { "policy/a": await generateKey(), "policy/b": await generateKey() };
        const tls0: TlsState = {
            ...ca1,
            leafKeys,
            leaves: {
                "policy/a": await sign(ca1, leafKeys["policy/a"], "a", T0),
                "policy/b": await sign(ca1, leafKeys["policy/b"], "b", T0),
            },
        };
        const u0 = update(tls0, undefined);
        expect(subjectsOf(u0.state.caBundle)).toEqual(subjectsOf([ca1.ca]));
        expect(u0.state.servingCertificates).toEqual({ "policy/a": tls0.leaves["policy/a"], "policy/b": tls0.leaves["policy/b"] });
        expect(rotationStatus(tls0.ca, undefined)).toBeUndefined();
        expectNoOutage(undefined, u0.state, T0);

        // Day 701: the serving certificates reach their renewal window (730 - 30 days) first; the
        // tls provider re-signs them with CA1, which is published: they go live at once.
        const tRenew = new Date(T0.getTime() + 701 * DAY);
        const tls0b: TlsState = {
            ...tls0,
            leaves: {
                "policy/a": await sign(ca1, leafKeys["policy/a"], "a", tRenew),
                "policy/b": await sign(ca1, leafKeys["policy/b"], "b", tRenew),
            },
        };
        const u0b = update(tls0b, u0.state);
        expect(u0b.heldBack).toEqual([]);
        expect(u0b.state).toEqual({ caBundle: u0.state.caBundle, servingCertificates: tls0b.leaves });
        expectNoOutage(u0.state, u0b.state, tRenew);

        // Step 1, day 761: the CA's renewal window is reached (790 - 30 days): the tls provider
        // replaces the rotation clock, so the CA key and certificate, and re-signs both serving
        // certificates.
        const t1 = new Date(T0.getTime() + 761 * DAY);
        const ca2 = await newCa(t1);
        const tls1: TlsState = {
            ...ca2,
            leafKeys,
            leaves: {
                "policy/a": await sign(ca2, leafKeys["policy/a"], "a", t1),
                "policy/b": await sign(ca2, leafKeys["policy/b"], "b", t1),
            },
        };
        const u1 = update(tls1, u0b.state);
        expect(subjectsOf(u1.state.caBundle)).toEqual(subjectsOf([ca2.ca, ca1.ca]));
        expect(u1.heldBack).toEqual(["policy/a", "policy/b"]);
        expect(u1.state.servingCertificates).toEqual(u0b.state.servingCertificates);
        expect(rotationStatus(tls1.ca, u0b.state)).toMatch(
            /^CA rotation 1\/3: the stack's CA was renewed \(new key, valid until .+\); this update publishes it beside the previous CA/,
        );
        expectNoOutage(u0b.state, u1.state, t1);
        // The naive bundle (the current CA alone) would break every pod still serving CA1's certificate.
        expect(anchors(u0b.state.servingCertificates["policy/a"], [ca2.ca], t1)).toEqual([]);

        // Step 2: the next update. CA2 was published, so the re-signed certificates go live (pods roll)
        // while the bundle keeps CA1 for the pods not yet rolled.
        const t2 = new Date(t1.getTime() + DAY);
        const u2 = update(tls1, u1.state);
        expect(u2.heldBack).toEqual([]);
        expect(u2.state.servingCertificates).toEqual(tls1.leaves);
        expect(subjectsOf(u2.state.caBundle)).toEqual(subjectsOf([ca2.ca, ca1.ca]));
        expect(rotationStatus(tls1.ca, u1.state)).toBe(
            "CA rotation 2/3: serving certificates signed by the renewed CA go live in this update; the bundle keeps 1 previous CA(s) until every pod serves a certificate of the new one. Run `pulumi up` once more to retire them.",
        );
        expectNoOutage(u1.state, u2.state, t2);

        // Step 3: nothing live chains to CA1 any more: it leaves the bundle.
        const t3 = new Date(t2.getTime() + DAY);
        const u3 = update(tls1, u2.state);
        expect(subjectsOf(u3.state.caBundle)).toEqual(subjectsOf([ca2.ca]));
        expect(rotationStatus(tls1.ca, u2.state)).toBeUndefined();
        expectNoOutage(u2.state, u3.state, t3);
        // After CA1 expires, everything still verifies.
        expectNoOutage(u3.state, update(tls1, u3.state).state, new Date(T0.getTime() + 800 * DAY));
    });

    test("GIVEN a serving certificate renewed under the same CA WHEN the stack updates THEN it goes live at once and the bundle is unchanged", async () => {
        const ca = await newCa(T0);
        const key = await generateKey();
        const u0 = update({ ...ca, leafKeys: { k: key }, leaves: { k: await sign(ca, key, "a", T0) } }, undefined);
        const t1 = new Date(T0.getTime() + 701 * DAY);
        const renewed = await sign(ca, key, "a", t1);
        const u1 = update({ ...ca, leafKeys: { k: key }, leaves: { k: renewed } }, u0.state);
        expect(u1.state.servingCertificates).toEqual({ k: renewed });
        expect(u1.state.caBundle).toEqual(u0.state.caBundle);
        expectNoOutage(u0.state, u1.state, t1);
    });

    test("GIVEN a service added during a CA rotation WHEN the stack updates THEN its certificate goes live at once (its objects are created with the new bundle)", async () => {
        const ca1 = await newCa(T0);
        const a = await generateKey();
        const u0 = update({ ...ca1, leafKeys: { a }, leaves: { a: await sign(ca1, a, "a", T0) } }, undefined);
        const ca2 = await newCa(T0);
        const b = await generateKey();
        const fresh = await sign(ca2, b, "b", T0);
        const u1 = update({ ...ca2, leafKeys: { a, b }, leaves: { a: await sign(ca2, a, "a", T0), b: fresh } }, u0.state);
        expect(u1.heldBack).toEqual(["a"]);
        expect(u1.state.servingCertificates.b).toBe(fresh);
    });

    test("GIVEN a serving key replaced together with the CA WHEN the stack updates THEN the new certificate goes live and a warning names it", async () => {
        const ca1 = await newCa(T0);
        const u0 = update({ ...ca1, leafKeys: {}, leaves: { "policy/a": await sign(ca1, await generateKey(), "a", T0) } }, undefined);
        const ca2 = await newCa(T0);
        const u1 = update({ ...ca2, leafKeys: {}, leaves: { "policy/a": await sign(ca2, await generateKey(), "a", T0) } }, u0.state);
        expect(u1.heldBack).toEqual([]);
        expect(u1.warnings).toEqual([
            "serving certificate policy/a: its private key changed together with the CA, so the previous certificate cannot be kept while the new CA is published; callers may see TLS failures until this update completes",
        ]);
    });

    test("GIVEN any sequence of CA renewals, serving renewals and new services WHEN the stack updates after each THEN no update ever has an outage", async () => {
        type Event = "renew-ca" | "renew-serving" | "add-service" | "nothing";
        /** Every current leaf re-signed by `ca` at `now`. */
        const resign = async (
            leaves: Record<string, string>,
            ca: Pick<TlsState, "caKey" | "ca">,
            leafKeys: Record<string, GeneratedKey>,
            now: Date,
        ) => Object.fromEntries(await Promise.all(Object.keys(leaves).map(async (k) => [k, await sign(ca, leafKeys[k], k, now)])));
        await fc.assert(
            fc.asyncProperty(
                fc.array(fc.constantFrom<Event>("renew-ca", "renew-serving", "add-service", "nothing"), { minLength: 1, maxLength: 6 }),
                async (events) => {
                    let now = T0;
                    let ca = await newCa(now);
                    const leafKeys: Record<string, GeneratedKey> = { s0: await generateKey() };
                    let leaves: Record<string, string> = { s0: await sign(ca, leafKeys.s0, "s0", now) };
                    let previous = update({ ...ca, leafKeys, leaves }, undefined).state;
                    for (const event of events) {
                        now = new Date(now.getTime() + 10 * DAY);
                        if (event === "renew-ca") {
                            ca = await newCa(now);
                            leaves = await resign(leaves, ca, leafKeys, now);
                        } else if (event === "renew-serving") {
                            leaves = await resign(leaves, ca, leafKeys, now);
                        } else if (event === "add-service") {
                            const key = `s${Object.keys(leaves).length}`;
                            leafKeys[key] = await generateKey();
                            leaves = { ...leaves, [key]: await sign(ca, leafKeys[key], key, now) };
                        }
                        const next = update({ ...ca, leafKeys, leaves }, previous).state;
                        expectNoOutage(previous, next, now);
                        // A CA leaves the bundle only once nothing live chains to it.
                        expect(next.caBundle.length).toBeLessThanOrEqual(previous.caBundle.length + 1);
                        previous = next;
                    }
                },
            ),
            { numRuns: 25 },
        );
    });
});

describe("the previous update's trust state", () => {
    test("GIVEN no previous output WHEN checked THEN there is no state and no warning", () => {
        expect(checkTrustState(undefined)).toEqual({});
    });

    test("GIVEN a previous state with a broken certificate WHEN checked THEN it is not trusted and a warning says rotation starts afresh", () => {
        expect(checkTrustState({ caBundle: ["not a certificate"], servingCertificates: {} }).warning).toMatch(
            /^the previous update's certificateTrust output holds a certificate that does not parse \(.+\); CA rotation starts afresh$/,
        );
    });
});
