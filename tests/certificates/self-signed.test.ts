/**
 * Mode self-signed with real certificates: the program runs with `up` semantics and a tls
 * provider stand-in that signs as the provider does and keeps state between updates, so the
 * certificates, Secrets and bundles can be checked for real, and a CA rotation walked through
 * consecutive updates, each reading back the previous one's outputs.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from "node:crypto";
import * as path from "node:path";
import { servingCertificateHash } from "../../components/certificates/trust";
import { plaintextKeyWarning } from "../../components/certificates/self-signed";
import { flattenConfig } from "../../scripts/render/config-file";
import { renderProgram } from "../../scripts/render/render";
import { DAY, expectNoOutage, rotationWarnings, split, T0, up, Update } from "../helpers/certificate-updates";
import { inspect, TlsProviderState } from "../helpers/tls-signer";

describe("self-signed certificates, for real", () => {
    let first: Update;
    beforeAll(async () => {
        first = await up(new TlsProviderState({ now: T0 }));
    });

    test("GIVEN a webhook Service WHEN its certificate is issued THEN it names the Service three ways, serves TLS only, and chains to the stack's CA", () => {
        const leaf = new X509Certificate(first.tlsCrt);
        const [ca] = split(first.caCrt);
        expect(leaf.subject).toBe("O=cluster-platform\nCN=policy-webhook-service.policy.svc");
        expect(inspect(first.tlsCrt)).toEqual({
            keyUsages: ["digital_signature"],
            extendedKeyUsages: ["server_auth"],
            isCa: false,
            basicConstraintsCritical: true,
            dnsNames: [
                "policy-webhook-service.policy",
                "policy-webhook-service.policy.svc",
                "policy-webhook-service.policy.svc.cluster.local",
            ],
            subjectKeyId: expect.stringMatching(/^[0-9a-f]{40}$/),
            authorityKeyId: inspect(first.caCrt).subjectKeyId,
        });
        expect(leaf.checkHost("policy-webhook-service.policy.svc")).toBe("policy-webhook-service.policy.svc");
        expect(leaf.checkIssued(ca)).toBe(true);
        expect(leaf.verify(ca.publicKey)).toBe(true);
        expect(leaf.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: "prime256v1" });
    });

    test("GIVEN the stack's CA WHEN inspected THEN it is an ECDSA P-256 CA that may only sign", () => {
        const [ca] = split(first.caCrt);
        expect(ca.subject).toBe("O=cluster-platform\nCN=cluster-platform CA (test)");
        expect(ca.ca).toBe(true);
        expect(ca.verify(ca.publicKey)).toBe(true);
        expect(ca.publicKey.asymmetricKeyDetails).toEqual({ namedCurve: "prime256v1" });
        expect(inspect(first.caCrt)).toMatchObject({
            keyUsages: ["digital_signature", "cert_signing", "crl_signing"],
            extendedKeyUsages: [],
            isCa: true,
            basicConstraintsCritical: true,
        });
    });

    test("GIVEN the configured validity WHEN certificates are issued THEN the CA lasts 790 days and the serving certificate 730, from issue", () => {
        const leaf = new X509Certificate(first.tlsCrt);
        const [ca] = split(first.caCrt);
        expect([new Date(leaf.validFrom), new Date(leaf.validTo)]).toEqual([T0, new Date(T0.getTime() + 730 * DAY)]);
        expect([new Date(ca.validFrom), new Date(ca.validTo)]).toEqual([T0, new Date(T0.getTime() + 790 * DAY)]);
    });

    test("GIVEN the serving Secret WHEN read THEN tls.key is the certificate's key, ca.crt the CA, and every caBundle that CA", () => {
        expect(createPublicKey(createPrivateKey(first.tlsKey)).equals(new X509Certificate(first.tlsCrt).publicKey)).toBe(true);
        expect(first.tlsKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
        expect(split(first.caCrt)).toHaveLength(1);
        expect(first.caBundles).toEqual([first.caCrt, first.caCrt, first.caCrt]);
        expect(first.podAnnotations).toEqual({
            "cluster-platform.io/serving-cert-hash": servingCertificateHash(first.tlsCrt, first.caCrt),
        });
        expect(first.trust).toEqual({ caBundle: [first.caCrt], servingCertificates: { "policy/policy-webhook-cert": first.tlsCrt } });
    });

    test("GIVEN the stack's Secret data WHEN rendered THEN no key or certificate text appears in the output", () => {
        const rendered = JSON.stringify({ resources: first.result.resources, manifests: first.result.manifests });
        expect(rendered).not.toContain("PRIVATE KEY");
        expect(rendered).not.toContain(Buffer.from(first.tlsKey).toString("base64").slice(0, 40));
    });
});

describe("CA rotation across updates", () => {
    test("GIVEN the CA's renewal window WHEN the stack updates until the rotation is done THEN no update has an outage, and the bundle holds both CAs until the pods serve the new one", async () => {
        const clock = { now: T0 };
        const tls = new TlsProviderState(clock);
        const u0 = await up(tls);

        // Nothing changed: nothing rolls.
        clock.now = new Date(T0.getTime() + 10 * DAY);
        const u1 = await up(tls, u0);
        expect([u1.tlsCrt, u1.caCrt, u1.podAnnotations]).toEqual([u0.tlsCrt, u0.caCrt, u0.podAnnotations]);
        expect(rotationWarnings(u1)).toEqual([]);
        expectNoOutage(u0, u1, clock.now);

        // Day 701: the serving certificate reaches its renewal window (730 - 30 days): the tls
        // provider re-signs it with the same CA, which is published, so it goes live at once.
        clock.now = new Date(T0.getTime() + 701 * DAY);
        tls.replace("policy-webhook-serving-cert");
        const u1b = await up(tls, u1);
        expect(u1b.tlsCrt).not.toBe(u1.tlsCrt);
        expect(u1b.caCrt).toBe(u1.caCrt);
        expect(u1b.podAnnotations).not.toEqual(u1.podAnnotations);
        expect(rotationWarnings(u1b)).toEqual([]);
        expectNoOutage(u1, u1b, clock.now);

        // Day 761: the rotation clock renews, so the CA key and certificate are replaced (and the
        // serving certificate re-signed by the tls provider). Pods keep the certificate they serve;
        // the bundle gains the new CA.
        clock.now = new Date(T0.getTime() + 761 * DAY);
        tls.replace("certificates-ca-rotation-clock", "certificates-ca-key", "certificates-ca");
        const u2 = await up(tls, u1b);
        expect(u2.tlsCrt).toBe(u1b.tlsCrt);
        expect(split(u2.caCrt).map((c) => c.fingerprint256)).toEqual([expect.any(String), split(u1b.caCrt)[0].fingerprint256]);
        expect(u2.caBundles.every((b) => b === u2.caCrt)).toBe(true);
        expect(rotationWarnings(u2)).toEqual([
            `CA rotation 1/3: the stack's CA was renewed (new key, valid until ${split(u2.caCrt)[0].validTo}); this update publishes it beside the previous CA and keeps serving certificates on the previous one. Run \`pulumi up\` again to roll them (well before the previous CA expires), then once more to retire it.`,
        ]);
        expectNoOutage(u1b, u2, clock.now);

        // Next update: the certificate signed by the new CA goes live; the pods roll.
        clock.now = new Date(clock.now.getTime() + DAY);
        const u3 = await up(tls, u2);
        const [newCa, oldCa] = split(u2.caCrt);
        expect(new X509Certificate(u3.tlsCrt).checkIssued(newCa)).toBe(true);
        expect(new X509Certificate(u3.tlsCrt).verify(newCa.publicKey)).toBe(true);
        expect(u3.caCrt).toBe(u2.caCrt);
        expect(u3.podAnnotations).not.toEqual(u2.podAnnotations);
        expect(rotationWarnings(u3)).toEqual([
            "CA rotation 2/3: serving certificates signed by the renewed CA go live in this update; the bundle keeps 1 previous CA(s) until every pod serves a certificate of the new one. Run `pulumi up` once more to retire them.",
        ]);
        expectNoOutage(u2, u3, clock.now);

        // Last update: nothing live chains to the previous CA: it leaves the bundle.
        clock.now = new Date(clock.now.getTime() + DAY);
        const u4 = await up(tls, u3);
        expect(split(u4.caCrt).map((c) => c.fingerprint256)).toEqual([newCa.fingerprint256]);
        expect(u4.tlsCrt).toBe(u3.tlsCrt);
        expect(rotationWarnings(u4)).toEqual([]);
        expectNoOutage(u3, u4, clock.now);
        // And the old CA is gone for good: its certificate no longer verifies against the bundle.
        expect(split(u4.caBundles[0]).some((c) => c.fingerprint256 === oldCa.fingerprint256)).toBe(false);
    });
});

describe("self-signed certificates rendered to a directory", () => {
    test("GIVEN renderYamlToDirectory WHEN a serving certificate is issued THEN a warning says its Secret's key is written in plaintext", async () => {
        const { warnings } = await renderProgram({
            config: flattenConfig({ cluster: { name: "test", platform: "kubernetes", renderYamlToDirectory: "out/yaml" } }),
            program: path.join(__dirname, "..", "fixtures", "certificates", "webhook-program"),
        });
        expect(warnings.filter((w) => w.includes("private key"))).toEqual([plaintextKeyWarning("policy/policy-webhook-cert")]);
    });
});

describe("certificate expiry in sight", () => {
    test("GIVEN an update WHEN it completes THEN the certificateExpiry output lists the CA and each serving certificate with notAfter and the start of its renewal window", async () => {
        const issued = new Date("2026-03-01T00:00:00Z");
        const u = await up(new TlsProviderState({ now: issued }));
        expect(u.result.stackOutputs.certificateExpiry).toEqual([
            {
                name: "CA",
                kind: "ca",
                mode: "self-signed",
                notAfter: "2028-04-29T00:00:00.000Z",
                renewsFrom: "2028-03-30T00:00:00.000Z",
                renewedBy: "pulumi up",
            },
            {
                name: "policy/policy-webhook-cert",
                kind: "serving",
                mode: "self-signed",
                notAfter: "2028-02-29T00:00:00.000Z",
                renewsFrom: "2028-01-30T00:00:00.000Z",
                renewedBy: "pulumi up",
            },
        ]);
    });

    test("GIVEN a live CA 20 days from expiry and a serving certificate expired WHEN the next update runs THEN it warns, naming both, and says the rotation needs three updates", async () => {
        // Issued 770 days before the real clock: the program compares what is live with the time it runs at.
        const issued = new Date(Date.now() - 770 * DAY);
        const clock = { now: issued };
        const tls = new TlsProviderState(clock);
        const before = await up(tls);
        clock.now = new Date();
        const after = await up(tls, before);
        const [liveCa] = split(before.caCrt);
        const expiryWarnings = after.result.warnings.filter(
            (w) => w.startsWith("the stack's CA") || w.startsWith("serving certificate policy/"),
        );
        expect(expiryWarnings).toEqual([
            expect.stringMatching(
                new RegExp(
                    `^the stack's CA \\(O=cluster-platform, CN=cluster-platform CA \\(test\\)\\) is inside its renewal window \\(since .+\\) and expires on ${new Date(liveCa.validTo).toISOString()}, in 20 days: run \`pulumi up\` 3 times \\(this update included\\)`,
                ),
            ),
            `serving certificate policy/policy-webhook-cert expired on ${new Date(new X509Certificate(before.tlsCrt).validTo).toISOString()}: \`pulumi up\` renews it`,
        ]);
    });
});
