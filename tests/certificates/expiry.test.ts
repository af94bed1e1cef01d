/**
 * Certificate expiry in sight (components/certificates/expiry.ts) with real certificates signed
 * the way the tls provider signs them: the entries the `certificateExpiry` output lists, the
 * updates a CA rotation still needs, and the warnings preview and up print.
 */
import { X509Certificate } from "node:crypto";
import { caRotationRunsLeft, delegatedExpiry, expiryWarnings, selfSignedExpiry } from "../../components/certificates/expiry";
import { DAY, T0 } from "../helpers/clock";
import { certificateRequest, generateKey, selfSign, signRequest } from "../helpers/tls-signer";

async function ca(now: Date, days = 790): Promise<{ certPem: string; key: string }> {
    const key = (await generateKey()).privateKeyPem;
    const built = await selfSign(
        key,
        {
            subject: { commonName: "cluster-platform CA (test)", organization: "cluster-platform" },
            validityPeriodHours: days * 24,
            allowedUses: ["cert_signing"],
            isCaCertificate: true,
        },
        now,
    );
    return { certPem: built.certPem, key };
}

async function serving(authority: { certPem: string; key: string }, now: Date, days = 730): Promise<string> {
    const request = await certificateRequest((await generateKey()).privateKeyPem, { commonName: "svc.ns.svc" }, ["svc.ns.svc"]);
    const built = await signRequest(
        request,
        authority.certPem,
        authority.key,
        { validityPeriodHours: days * 24, allowedUses: ["server_auth"] },
        now,
    );
    return built.certPem;
}

describe("the certificateExpiry entries", () => {
    test("GIVEN a certificate the stack holds WHEN listed THEN it carries notAfter and the start of its renewal window, renewed by pulumi up", async () => {
        const authority = await ca(T0);
        expect(selfSignedExpiry("CA", "ca", authority.certPem, 30)).toEqual({
            name: "CA",
            kind: "ca",
            mode: "self-signed",
            notAfter: "2028-03-01T00:00:00.000Z",
            renewsFrom: "2028-01-31T00:00:00.000Z",
            renewedBy: "pulumi up",
        });
    });

    test("GIVEN the delegated modes WHEN listed THEN each names who renews it and where its live expiry is", () => {
        expect(delegatedExpiry("service-ca", "ns", "svc-cert")).toEqual({
            name: "ns/svc-cert",
            kind: "serving",
            mode: "service-ca",
            renewedBy: "OpenShift service-ca operator (on its own)",
            expiryIn: "Secret ns/svc-cert annotation service.beta.openshift.io/expiry",
        });
        expect(delegatedExpiry("cert-manager", "ns", "svc-cert", { duration: "17520h", renewBefore: "720h" })).toEqual({
            name: "ns/svc-cert",
            kind: "serving",
            mode: "cert-manager",
            renewedBy: "cert-manager (on its own, renewBefore from certificates.renewBeforeDays)",
            expiryIn: "Certificate ns/svc-cert status.notAfter and status.renewalTime",
            duration: "17520h",
            renewBefore: "720h",
        });
    });
});

describe("a CA rotation's remaining updates", () => {
    let certificates: Record<"first" | "leaf" | "renewed" | "leafOnRenewed", string>;
    beforeAll(async () => {
        const first = await ca(T0);
        const renewed = await ca(new Date(T0.getTime() + 761 * DAY));
        certificates = {
            first: first.certPem,
            leaf: await serving(first, T0),
            renewed: renewed.certPem,
            leafOnRenewed: await serving(renewed, new Date(T0.getTime() + 762 * DAY)),
        };
    });

    // The rows name the certificates, which are signed (asynchronously) once the tests run.
    test.each([
        ["before the CA's window", ["first"], "leaf", 700, 0],
        ["inside the CA's window, not yet renewed", ["first"], "leaf", 761, 3],
        ["after the update that published the renewed CA", ["renewed", "first"], "leaf", 761, 2],
        ["after the update that rolled the serving certificates", ["renewed", "first"], "leafOnRenewed", 762, 1],
        ["after the update that retired the previous CA", ["renewed"], "leafOnRenewed", 763, 0],
    ] as const)("GIVEN the stack %s WHEN its remaining updates are counted THEN they are as listed", (_what, bundle, served, day, runs) => {
        const caBundle = bundle.map((name) => certificates[name]);
        expect(
            caRotationRunsLeft({ caBundle, servingCertificates: { "ns/svc-cert": certificates[served] } }, T0.getTime() + day * DAY, 30),
        ).toBe(runs);
    });
});

describe("the expiry warnings", () => {
    let authority: { certPem: string; key: string };
    let live: { caBundle: string[]; servingCertificates: Record<string, string> };
    let caSubject: string;
    beforeAll(async () => {
        authority = await ca(T0);
        live = { caBundle: [authority.certPem], servingCertificates: { "ns/svc-cert": await serving(authority, T0) } };
        caSubject = new X509Certificate(authority.certPem).subject.replace(/\n/g, ", ");
    });

    test("GIVEN nothing near its window WHEN checked THEN no warning", () => {
        expect(expiryWarnings(live, T0.getTime() + 600 * DAY, 30)).toEqual([]);
        expect(expiryWarnings(undefined, T0.getTime(), 30)).toEqual([]);
    });

    test("GIVEN the serving certificate inside its window WHEN checked THEN it is named with its dates", () => {
        expect(expiryWarnings(live, T0.getTime() + 705 * DAY, 30)).toEqual([
            "serving certificate ns/svc-cert is inside its renewal window (since 2027-12-02T00:00:00.000Z) and expires on 2028-01-01T00:00:00.000Z, in 25 days: `pulumi up` renews it",
        ]);
    });

    test("GIVEN the CA inside its window and the serving certificate expired WHEN checked THEN the CA warning says three updates are needed, and the certificate is expired", () => {
        expect(expiryWarnings(live, T0.getTime() + 780 * DAY, 30)).toEqual([
            `the stack's CA (${caSubject}) is inside its renewal window (since 2028-01-31T00:00:00.000Z) and expires on 2028-03-01T00:00:00.000Z, in 10 days: run \`pulumi up\` 3 times (this update included) to complete its rotation before it expires; every fail-closed webhook and conversion webhook it serves fails once it has expired`,
            "serving certificate ns/svc-cert expired on 2028-01-01T00:00:00.000Z: `pulumi up` renews it",
        ]);
    });

    test("GIVEN a rotation under way WHEN checked THEN the warning says how many updates are left and by when", async () => {
        const renewed = await ca(new Date(T0.getTime() + 761 * DAY));
        const midRotation = {
            caBundle: [renewed.certPem, authority.certPem],
            servingCertificates: { "ns/svc-cert": await serving(authority, new Date(T0.getTime() + 701 * DAY)) },
        };
        expect(expiryWarnings(midRotation, T0.getTime() + 762 * DAY, 30)).toEqual([
            "a CA rotation is under way: it needs 2 more `pulumi up` runs (this update included), before the previous CA expires on 2028-03-01T00:00:00.000Z",
        ]);
    });

    test("GIVEN an expired CA WHEN checked THEN the warning says so", () => {
        expect(expiryWarnings(live, T0.getTime() + 800 * DAY, 30)[0]).toBe(
            `the stack's CA (${caSubject}) expired on 2028-03-01T00:00:00.000Z: run \`pulumi up\` 3 times (this update included) to complete its rotation before it expires; every fail-closed webhook and conversion webhook it serves fails once it has expired`,
        );
    });
});
