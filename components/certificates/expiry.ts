/**
 * Certificate expiry in sight: what the stack issues or relies on, when each expires, when it
 * will be renewed and by whom, and the warnings `pulumi preview`/`up` print when one is inside
 * its renewal window or expired. Pure: node:crypto only.
 *
 * Self-signed certificates renew only when someone runs `pulumi up` (the tls provider replaces
 * a certificate once `earlyRenewalHours` before its notAfter is reached; the CA's rotation takes
 * three updates, trust.ts). The delegated modes renew on their own: service-ca writes the
 * serving Secret's expiry into its `service.beta.openshift.io/expiry` annotation (openshift/api
 * annotations.go, ServingCertExpiryAnnotation); cert-manager keeps it in the Certificate's
 * `status.notAfter` and `status.renewalTime` (cert-manager pkg/apis/certmanager/v1 types_certificate.go).
 */
import { X509Certificate } from "node:crypto";
import { issuerOf, TrustState } from "./trust";

const DAY_MS = 24 * 3600 * 1000;

/** The stack output listing every certificate: read by admins, reviews (outputs.json) and alerts. */
export const EXPIRY_OUTPUT = "certificateExpiry";

/** Updates a CA rotation takes from the one that renews the CA (trust.ts). */
export const CA_ROTATION_RUNS = 3;

export interface CertificateExpiry {
    /** `CA` for the stack's CA, else the serving Secret `<namespace>/<name>`. */
    name: string;
    kind: "ca" | "serving";
    mode: "self-signed" | "service-ca" | "cert-manager";
    /** ISO 8601; absent when the stack cannot know it (delegated modes). */
    notAfter?: string;
    /** ISO 8601: the first instant of the renewal window, from which the next `pulumi up` renews it. */
    renewsFrom?: string;
    /** Who renews it: `pulumi up`, or the controller that does it on its own. */
    renewedBy: string;
    /** Delegated modes: where the live expiry can be read. */
    expiryIn?: string;
    /** cert-manager: the Certificate's `duration` and `renewBefore`, as the stack declares them. */
    duration?: string;
    renewBefore?: string;
}

/** notAfter and the start of its renewal window, for a certificate the stack holds. */
export function selfSignedExpiry(name: string, kind: CertificateExpiry["kind"], pem: string, renewBeforeDays: number): CertificateExpiry {
    const notAfter = Date.parse(new X509Certificate(pem).validTo);
    return {
        name,
        kind,
        mode: "self-signed",
        notAfter: new Date(notAfter).toISOString(),
        renewsFrom: new Date(notAfter - renewBeforeDays * DAY_MS).toISOString(),
        renewedBy: "pulumi up",
    };
}

/** What can be known of a certificate another controller issues and renews. */
export function delegatedExpiry(
    mode: "service-ca" | "cert-manager",
    namespace: string,
    secretName: string,
    declared: { duration?: string; renewBefore?: string } = {},
): CertificateExpiry {
    return mode === "service-ca"
        ? {
              name: `${namespace}/${secretName}`,
              kind: "serving",
              mode,
              renewedBy: "OpenShift service-ca operator (on its own)",
              expiryIn: `Secret ${namespace}/${secretName} annotation service.beta.openshift.io/expiry`,
          }
        : {
              name: `${namespace}/${secretName}`,
              kind: "serving",
              mode,
              renewedBy: "cert-manager (on its own, renewBefore from certificates.renewBeforeDays)",
              expiryIn: `Certificate ${namespace}/${secretName} status.notAfter and status.renewalTime`,
              ...declared,
          };
}

/**
 * Updates still needed to finish a CA rotation, counting the next one: 3 when the live CA is due
 * (inside its renewal window or expired), 2 after the update that published a renewed CA beside
 * the previous one (serving certificates still on the previous CA), 1 when only retiring the
 * previous CA is left, 0 when no rotation is under way or due.
 */
export function caRotationRunsLeft(live: TrustState, now: number, renewBeforeDays: number): number {
    if (live.caBundle.length === 0) {
        return 0;
    }
    const [current, ...previous] = live.caBundle;
    if (previous.length > 0) {
        const stillOnPrevious = Object.values(live.servingCertificates).some((pem) => issuerOf(pem, [current]) === undefined);
        return stillOnPrevious ? 2 : 1;
    }
    const due = Date.parse(selfSignedExpiry("CA", "ca", current, renewBeforeDays).renewsFrom as string);
    return now >= due ? CA_ROTATION_RUNS : 0;
}

function describeWhen(entry: CertificateExpiry, now: number): string | undefined {
    const notAfter = Date.parse(entry.notAfter as string);
    const renewsFrom = Date.parse(entry.renewsFrom as string);
    if (now >= notAfter) {
        return `expired on ${entry.notAfter}`;
    }
    if (now >= renewsFrom) {
        const days = Math.ceil((notAfter - now) / DAY_MS);
        return `is inside its renewal window (since ${entry.renewsFrom}) and expires on ${entry.notAfter}, in ${days} day${days === 1 ? "" : "s"}`;
    }
    return undefined;
}

/**
 * The warnings for what is live now (the trust state the last update published: the certificates
 * pods serve and the bundle API servers hold), at instant `now`: each certificate inside its
 * renewal window or expired, by name, and how many updates the CA rotation still needs.
 */
export function expiryWarnings(live: TrustState | undefined, now: number, renewBeforeDays: number): string[] {
    if (live === undefined || live.caBundle.length === 0) {
        return [];
    }
    const warnings: string[] = [];
    const runs = caRotationRunsLeft(live, now, renewBeforeDays);
    const ca = selfSignedExpiry("CA", "ca", live.caBundle[0], renewBeforeDays);
    const caWhen = describeWhen(ca, now);
    if (caWhen !== undefined) {
        warnings.push(
            `the stack's CA (${new X509Certificate(live.caBundle[0]).subject.replace(/\n/g, ", ")}) ${caWhen}: run \`pulumi up\` ${runs} time${runs === 1 ? "" : "s"} (this update included) to complete its rotation before it expires; every fail-closed webhook and conversion webhook it serves fails once it has expired`,
        );
    } else if (runs > 0) {
        const previousExpiry = live.caBundle
            .slice(1)
            .map((pem) => Date.parse(new X509Certificate(pem).validTo))
            .sort((a, b) => a - b)[0];
        warnings.push(
            `a CA rotation is under way: it needs ${runs} more \`pulumi up\` run${runs === 1 ? "" : "s"} (this update included), before the previous CA expires on ${new Date(previousExpiry).toISOString()}`,
        );
    }
    for (const key of Object.keys(live.servingCertificates).sort()) {
        const entry = selfSignedExpiry(key, "serving", live.servingCertificates[key], renewBeforeDays);
        const when = describeWhen(entry, now);
        if (when !== undefined) {
            warnings.push(`serving certificate ${key} ${when}: \`pulumi up\` renews it`);
        }
    }
    return warnings;
}
