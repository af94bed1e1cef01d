/**
 * Consecutive `pulumi up`s of the certificates fixture program (a policy webhook, mode
 * self-signed) with real certificates: a tls provider stand-in that signs as the provider does
 * and keeps state between updates, each update reading back the previous one's outputs; and the
 * checks that no update leaves a served certificate without a trust anchor.
 */
import { X509Certificate } from "node:crypto";
import * as path from "node:path";
import { flattenConfig } from "../../scripts/render/config-file";
import { renderProgram, RenderResult } from "../../scripts/render/render";
import { Capture } from "./capture";
import { TlsProviderState } from "./tls-signer";

const program = path.join(__dirname, "..", "fixtures", "certificates", "webhook-program");
export const CERTIFICATES_CONFIG = flattenConfig({
    cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
    certificates: { mode: "self-signed" },
});
export { DAY, T0 } from "./clock";

/** One `pulumi up`: what the Secret, the pod template and the webhook configurations received. */
export interface Update {
    result: RenderResult;
    tlsCrt: string;
    tlsKey: string;
    caCrt: string;
    caBundles: string[];
    podAnnotations: Record<string, string>;
    trust: { caBundle: string[]; servingCertificates: Record<string, string> };
}

export async function up(tls: TlsProviderState, previous?: Update): Promise<Update> {
    const capture = new Capture();
    const result = await renderProgram({
        config: CERTIFICATES_CONFIG,
        program,
        preview: false,
        stackOutputs: previous?.result.stackOutputs,
        computed: {
            ...tls.producers(),
            ...capture.producers(
                "kubernetes:core/v1:Secret",
                "kubernetes:apps/v1:Deployment",
                "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
                "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
            ),
        },
    });
    expect(result.errors).toEqual([]);
    const data = capture.get("policy-webhook-serving-secret").data as Record<string, string>;
    const decode = (b64: string) => Buffer.from(b64, "base64").toString("utf8");
    const webhooks = [
        ...(capture.get("policy-webhook-mutating").webhooks as { clientConfig: { caBundle: string } }[]),
        ...(capture.get("policy-webhook-validating").webhooks as { clientConfig: { caBundle: string } }[]),
    ];
    const deployment = capture.get("policy-webhook") as { spec: { template: { metadata: { annotations: Record<string, string> } } } };
    return {
        result,
        tlsCrt: decode(data["tls.crt"]),
        tlsKey: decode(data["tls.key"]),
        caCrt: decode(data["ca.crt"]),
        caBundles: webhooks.map((w) => decode(w.clientConfig.caBundle)),
        podAnnotations: deployment.spec.template.metadata.annotations,
        trust: result.stackOutputs.certificateTrust as Update["trust"],
    };
}

/** The warnings about CA rotation (the fixture's CRD without webhook conversion warns on every update). */
export const rotationWarnings = (u: Update) => u.result.warnings.filter((w) => w.startsWith("CA rotation"));

/** The certificates of a PEM bundle. */
export function split(bundle: string): X509Certificate[] {
    return (bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((pem) => new X509Certificate(pem));
}

export function chainsTo(certificate: string, bundle: string, now: Date): boolean {
    const leaf = new X509Certificate(certificate);
    const within = (c: X509Certificate) => new Date(c.validFrom) <= now && now <= new Date(c.validTo);
    return split(bundle).some((ca) => within(leaf) && within(ca) && leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
}

/** During an update pods present the previous or the new certificate; the API server holds the previous or the new bundle. */
export function expectNoOutage(before: Update | undefined, after: Update, now: Date): void {
    const certificates = [before?.tlsCrt, after.tlsCrt].filter((c): c is string => c !== undefined);
    const bundles = [...(before?.caBundles ?? []), ...after.caBundles];
    for (const bundle of bundles) {
        for (const certificate of certificates) {
            expect(chainsTo(certificate, bundle, now)).toBe(true);
        }
    }
}
