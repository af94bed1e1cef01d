/**
 * The delegated modes' counterpart of self-signed mode's `caSource` check (rules.ts,
 * `issuedSourceMismatch`): a `caInjection` target gets the injector's CA only where every backend
 * it calls serves a certificate from that injector, else the injected CA is the wrong one and the
 * API server's calls fail TLS. Checked in the pre-flight, on objects read whole (never a Secret).
 *
 * - service-ca: the backend Service must carry `service.beta.openshift.io/serving-cert-secret-name`
 *   (or the alpha spelling): service-ca issues a certificate only for a Service so annotated,
 *   for `<service>.<namespace>.svc` (openshift/service-ca-operator
 *   `pkg/controller/servingcert/controller/secret_creating_controller.go`,
 *   `requiresCertGeneration`, `MakeServingCert`), signed by the CA its cabundle injector writes
 *   (`pkg/controller/cabundleinjector/admissionwebhook.go`, `apiservice.go`, `crd.go`).
 * - cert-manager: cainjector injects the `ca.crt` of the Secret of the Certificate the target
 *   names (cert-manager `pkg/controller/cainjector/sources.go`, `certificateDataSource.ReadCA`);
 *   that Certificate must be for the backend: in the Service's namespace (a pod mounts Secrets of
 *   its own namespace only) and naming `<service>.<namespace>.svc` in `spec.dnsNames`, the name
 *   the API server verifies when it calls a Service.
 * A URL backend is refused in both modes: neither injector certifies a URL.
 */
import type { ObjectRead, ObjectReader } from "../shared/object-presence";
import type { ObjectRef } from "../shared/object-refs";
import { describeValue, formatPath, Problem } from "../shared/problems";
import { planExistingInjection } from "./injection";
import { Backend, backendsOf, CaInjectionEntry, CertificateMode, describeEntry, InjectableKind, INJECTION_TARGETS } from "./rules";

/** service-ca's serving-certificate request annotations on a Service (beta first, as it reads them). */
export const SERVING_CERT_SECRET_ANNOTATIONS = [
    "service.beta.openshift.io/serving-cert-secret-name",
    "service.alpha.openshift.io/serving-cert-secret-name",
] as const;

const PLURALS: Record<InjectableKind, string> = {
    APIService: "apiservices",
    ConfigMap: "configmaps",
    CustomResourceDefinition: "customresourcedefinitions",
    MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
    ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
};

type Obj = Record<string, unknown>;

function targetRef(entry: CaInjectionEntry): ObjectRef {
    const { apiVersion } = INJECTION_TARGETS[entry.kind];
    return {
        apiVersion,
        kind: entry.kind,
        plural: PLURALS[entry.kind],
        name: entry.name,
        ...(entry.namespace ? { namespace: entry.namespace } : {}),
    };
}

function namespacedRef(apiVersion: string, kind: string, plural: string, namespacedName: string): ObjectRef {
    const [namespace, name] = namespacedName.split("/");
    return { apiVersion, kind, plural, namespace, name };
}

const serviceRef = (service: string) => namespacedRef("v1", "Service", "services", service);
const certificateRef = (certificate: string) => namespacedRef("cert-manager.io/v1", "Certificate", "certificates", certificate);

const annotationsOf = (object: Obj): Record<string, unknown> =>
    ((object.metadata as Obj | undefined)?.annotations as Record<string, unknown> | undefined) ?? {};

/** The DNS name a Service is called by: `<name>.<namespace>.svc`. */
const serviceDnsName = (service: string) => {
    const [namespace, name] = service.split("/");
    return `${name}.${namespace}.svc`;
};

function serviceCaProblem(entry: CaInjectionEntry, backend: Backend, service: ObjectRead): string | undefined {
    const who = `${describeEntry(entry)}: ${backend.where} is served by Service ${describeValue(backend.service)}`;
    if (service === "unknown") {
        return undefined;
    }
    if (service === "absent") {
        return `${who}, which does not exist, so service-ca issues it no certificate and the service CA injected there would verify nothing`;
    }
    const annotations = annotationsOf(service);
    if (SERVING_CERT_SECRET_ANNOTATIONS.some((key) => typeof annotations[key] === "string" && annotations[key] !== "")) {
        return undefined;
    }
    return `${who}, which has no ${SERVING_CERT_SECRET_ANNOTATIONS[0]} annotation: its certificate is not issued by service-ca, so the service CA injected there would not verify it (have service-ca issue the backend's certificate, or remove the entry)`;
}

function certManagerProblem(entry: CaInjectionEntry, backend: Backend, certificate: Obj): string | undefined {
    const name = entry.certificate!;
    const [namespace] = name.split("/");
    const [serviceNamespace] = backend.service!.split("/");
    const who = `${describeEntry(entry)}: ${backend.where} is served by Service ${describeValue(backend.service)}`;
    if (namespace !== serviceNamespace) {
        return `${who}, but Certificate ${describeValue(name)} is in namespace ${describeValue(namespace)}: its Secret cannot be mounted by that Service's pods, so the CA cainjector injects from it is not that backend's`;
    }
    const spec = (certificate.spec as Obj | undefined) ?? {};
    const dnsNames = Array.isArray(spec.dnsNames) ? (spec.dnsNames as unknown[]).filter((n): n is string => typeof n === "string") : [];
    const wanted = serviceDnsName(backend.service!);
    if (dnsNames.includes(wanted)) {
        return undefined;
    }
    return `${who}, but Certificate ${describeValue(name)} does not name ${describeValue(wanted)} in spec.dnsNames (${dnsNames.length > 0 ? dnsNames.map((n) => describeValue(n)).join(", ") : "none"}), the name the API server verifies: it is not that backend's certificate, so the CA cainjector injects from it would be the wrong one`;
}

/**
 * Every `caInjection` target, in the delegated modes, whose backends are not served by a
 * certificate from the mode's injector: one problem per backend, in entry order. Targets and
 * objects the reader cannot ask (`unknown`) or that do not exist are not judged here (the
 * injection's own read of the target reports a missing one).
 */
export async function delegatedBackendProblems(
    mode: CertificateMode,
    platform: "openshift" | "kubernetes",
    entries: readonly CaInjectionEntry[],
    read: ObjectReader,
): Promise<Problem[]> {
    if (mode === "self-signed") {
        return [];
    }
    const targets = entries.map((entry, index) => ({ entry, index })).filter(({ entry }) => entry.kind !== "ConfigMap");
    if (targets.length === 0) {
        return [];
    }
    const lives = await read(targets.map(({ entry }) => targetRef(entry)));
    const judged = targets.flatMap(({ entry, index }, i) => {
        const live = lives[i];
        // Only where the injection writes: a target with nothing to trust, or whose bundle another
        // injector writes, gets nothing from this mode (and a warning from the injection).
        return typeof live === "object" && planExistingInjection(entry, live, { mode, platform }).writes
            ? [{ entry, index, backends: backendsOf(entry.kind, live) }]
            : [];
    });
    // Second round: the Services (service-ca) or Certificates (cert-manager) those backends need, each read once.
    const wanted = [
        ...new Set(
            judged.flatMap(({ entry, backends }) =>
                mode === "service-ca"
                    ? backends.flatMap((b) => (b.service ? [b.service] : []))
                    : entry.certificate
                      ? [entry.certificate]
                      : [],
            ),
        ),
    ].sort();
    const reads = await read(wanted.map((name) => (mode === "service-ca" ? serviceRef(name) : certificateRef(name))));
    const byName = new Map(wanted.map((name, i) => [name, reads[i]]));

    const problems: Problem[] = [];
    for (const { entry, index, backends } of judged) {
        const path = formatPath(["caInjection", index]);
        const injector = mode === "service-ca" ? "service-ca" : "cert-manager";
        const certificate = mode === "cert-manager" && entry.certificate ? byName.get(entry.certificate) : undefined;
        if (mode === "cert-manager" && certificate === "absent") {
            problems.push({
                path: formatPath(["caInjection", index, "certificate"]),
                message: `${describeEntry(entry)}: Certificate ${describeValue(entry.certificate)} does not exist, so cainjector has no CA to inject and no backend can be checked against it`,
            });
            continue;
        }
        for (const backend of backends) {
            let message: string | undefined;
            if (!backend.service) {
                message = `${describeEntry(entry)}: ${backend.where} calls URL ${describeValue(backend.url)}; ${injector} certifies Services only, so the CA it injects cannot be the one that backend serves`;
            } else if (mode === "service-ca") {
                message = serviceCaProblem(entry, backend, byName.get(backend.service) ?? "unknown");
            } else if (typeof certificate === "object") {
                message = certManagerProblem(entry, backend, certificate);
            }
            if (message) {
                problems.push({ path, message });
            }
        }
    }
    return problems;
}
