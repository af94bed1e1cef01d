/**
 * Where a CA bundle goes in each kind of object (seed 001), and what to write into an existing
 * object for each certificate mode. Pure: values are generic so the same functions fill in
 * plain strings (tests) or Pulumi Outputs (components).
 */
import {
    CaInjectionEntry,
    CERT_MANAGER_INJECT_CA_FROM,
    CertificateMode,
    CONFIGMAP_BUNDLE_KEY,
    describeEntry,
    INJECT_CABUNDLE_BETA,
    InjectableKind,
    INJECTION_TARGETS,
    issuedSourceMismatch,
    missingSourceProblem,
    requestsInjection,
} from "./rules";
import { crdPatchIdentity } from "../shared/crd-retention";
import { asRecord } from "../shared/records";

/** The two spellings of one bundle: PEM text (ConfigMaps) and base64 of it (`caBundle` fields). */
export interface BundleValue<V> {
    pem: V;
    base64: V;
}

type Obj = Record<string, unknown>;

function objectAt(parent: Obj, key: string): Obj {
    const value = parent[key];
    return asRecord(value) ?? {};
}

/** The conversion strategy of a CRD object ("None" when unset, as the API server defaults it). */
export function conversionStrategyOf(crd: Obj): string {
    const strategy = objectAt(objectAt(crd, "spec"), "conversion").strategy;
    return typeof strategy === "string" ? strategy : "None";
}

/**
 * `object` with its bundle field(s) set: `spec.caBundle`, `data["service-ca.crt"]`,
 * `spec.conversion.webhook.clientConfig.caBundle` (CRDs with strategy Webhook only) or every
 * `webhooks[].clientConfig.caBundle`. Other fields are kept as they are.
 */
export function withBundleFields<V>(
    kind: InjectableKind,
    object: Obj,
    bundle: BundleValue<V>,
    /** False for a patch body, whose CRD strategy was checked on the live object. */
    checkConversionStrategy = true,
): Obj {
    switch (kind) {
        case "APIService": {
            const spec = objectAt(object, "spec");
            return { ...object, spec: { ...spec, caBundle: bundle.base64 } };
        }
        case "ConfigMap":
            return { ...object, data: { ...objectAt(object, "data"), [CONFIGMAP_BUNDLE_KEY]: bundle.pem } };
        case "CustomResourceDefinition": {
            if (checkConversionStrategy && conversionStrategyOf(object) !== "Webhook") {
                return object;
            }
            const spec = objectAt(object, "spec");
            const conversion = objectAt(spec, "conversion");
            const webhook = objectAt(conversion, "webhook");
            const clientConfig = objectAt(webhook, "clientConfig");
            return {
                ...object,
                spec: {
                    ...spec,
                    conversion: { ...conversion, webhook: { ...webhook, clientConfig: { ...clientConfig, caBundle: bundle.base64 } } },
                },
            };
        }
        case "MutatingWebhookConfiguration":
        case "ValidatingWebhookConfiguration": {
            const webhooks = Array.isArray(object.webhooks) ? (object.webhooks as Obj[]) : [];
            return {
                ...object,
                webhooks: webhooks.map((webhook) => ({
                    ...webhook,
                    clientConfig: { ...objectAt(webhook, "clientConfig"), caBundle: bundle.base64 },
                })),
            };
        }
    }
}

/**
 * The property paths of the bundle field(s) of an object of `kind`, for `ignoreChanges` when
 * another controller writes them. Webhooks are keyed by name in the API (a list-map), but a
 * Pulumi property path can only select a list element by index or by the `[*]` wildcard
 * (pulumi/pulumi sdk/go/common/resource/properties_path.go: `root.array[*].field`; `Contains`
 * matches `*` against any index), so every webhook's caBundle is ignored by wildcard: reordering
 * or adding webhooks neither diffs nor moves an ignore onto another webhook. The provider filters
 * its detailed diff with exactly that `Contains` (pulumi/pulumi-kubernetes
 * provider/pkg/provider/provider.go, Diff). Ownership is not a matter of ignoreChanges: the
 * stack never sends a delegated caBundle, so its server-side-apply field manager never owns one
 * (the provider's SSA ignore handling, provider/pkg/await/await.go handleSSAIgnoreFields, splits
 * paths on "." and does not resolve list elements, so it adds nothing either way).
 */
export function bundleFieldPaths(kind: InjectableKind): string[] {
    switch (kind) {
        case "APIService":
            return ["spec.caBundle"];
        case "ConfigMap":
            return [`data["${CONFIGMAP_BUNDLE_KEY}"]`];
        case "CustomResourceDefinition":
            return ["spec.conversion.webhook.clientConfig.caBundle"];
        case "MutatingWebhookConfiguration":
        case "ValidatingWebhookConfiguration":
            return ["webhooks[*].clientConfig.caBundle"];
    }
}

/** Where OpenShift publishes the service CA bundle in every namespace (key `service-ca.crt`). */
export const SERVICE_CA_BUNDLE_CONFIGMAP = "openshift-service-ca.crt";

/** cert-manager's cainjector annotations: any of them means cainjector writes the object's bundle. */
export const CERT_MANAGER_INJECTION_ANNOTATIONS = [
    CERT_MANAGER_INJECT_CA_FROM,
    "cert-manager.io/inject-ca-from-secret",
    "cert-manager.io/inject-apiserver-ca",
] as const;

/** Kinds cert-manager's cainjector writes (not ConfigMaps). */
function certManagerInjects(kind: InjectableKind): boolean {
    return kind !== "ConfigMap";
}

/** The existing object as read from the cluster (only the fields these rules look at). */
export interface LiveObject {
    metadata?: { annotations?: Record<string, string>; [key: string]: unknown };
    data?: Record<string, string>;
    binaryData?: Record<string, string>;
    spec?: Obj;
    webhooks?: { name: string; [key: string]: unknown }[];
    [key: string]: unknown;
}

/** The object a server-side-apply Patch writes: identity plus only the fields to own. */
export interface PatchBody<V> {
    apiVersion: string;
    kind: InjectableKind;
    metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
    spec?: Obj;
    data?: Record<string, V>;
    webhooks?: { name: string; clientConfig: { caBundle: V } }[];
}

/** The fields of a patch body each kind carries besides apiVersion, kind and metadata. */
export const PATCH_FIELDS: Record<InjectableKind, "spec" | "data" | "webhooks"> = {
    APIService: "spec",
    ConfigMap: "data",
    CustomResourceDefinition: "spec",
    MutatingWebhookConfiguration: "webhooks",
    ValidatingWebhookConfiguration: "webhooks",
};

/**
 * What to write into one existing object: a patch body (identity only, so owning no field,
 * when nothing is to be written) and, when something is off, a warning naming the object.
 */
export interface InjectionPlan<V> {
    patch: PatchBody<V>;
    /** True when the patch sets a field (false: identity only). */
    writes: boolean;
    warning?: string;
}

export interface InjectionContext<V> {
    mode: CertificateMode;
    platform: "openshift" | "kubernetes";
    /** Self-signed mode: the right bundle for this entry (the stack's, or the CA its caSource names). */
    bundle?: BundleValue<V>;
}

function identity<V>(entry: CaInjectionEntry, live: LiveObject): PatchBody<V> {
    const patch: PatchBody<V> = {
        apiVersion: INJECTION_TARGETS[entry.kind].apiVersion,
        kind: entry.kind,
        metadata: entry.namespace ? { name: entry.name, namespace: entry.namespace } : { name: entry.name },
    };
    // A CRD patch, even one that writes nothing, carries the CRD's group and kind: the provider's Check
    // refuses any CRD without them ("expected .spec.group", crd-retention.ts, crdPatchIdentity). The
    // real tier found this; the mock runtime never calls Check.
    const crdKind = objectAt(objectAt(live, "spec"), "names").kind;
    return entry.kind === "CustomResourceDefinition" && typeof crdKind === "string"
        ? { ...patch, spec: crdPatchIdentity(entry.name, crdKind) }
        : patch;
}

/** Another injector that already writes this object's bundle and would fight the stack over it. */
function competingInjector(entry: CaInjectionEntry, live: LiveObject, context: InjectionContext<unknown>): string | undefined {
    const annotations = live.metadata?.annotations ?? {};
    if (context.mode !== "service-ca" && context.platform === "openshift" && requestsInjection(entry.kind, annotations)) {
        const key = INJECTION_TARGETS[entry.kind].annotations.find((k) => annotations[k]?.toLowerCase() === "true");
        return `it carries ${key}=${JSON.stringify(annotations[key!])}, so OpenShift's service-ca writes its bundle`;
    }
    if (context.mode !== "cert-manager" && certManagerInjects(entry.kind)) {
        const key = CERT_MANAGER_INJECTION_ANNOTATIONS.find((k) => annotations[k] !== undefined);
        if (key) {
            return `it carries ${key}=${JSON.stringify(annotations[key])}, so cert-manager's cainjector writes its bundle`;
        }
    }
    return undefined;
}

/** Why an object has no bundle to receive, if it has none. */
function nothingToTrust(entry: CaInjectionEntry, live: LiveObject): string | undefined {
    switch (entry.kind) {
        case "CustomResourceDefinition": {
            const strategy = conversionStrategyOf(live);
            return strategy === "Webhook"
                ? undefined
                : `has spec.conversion.strategy ${JSON.stringify(strategy)}, not "Webhook": it calls no conversion webhook, so there is no caBundle to set`;
        }
        case "APIService":
            if (live.spec?.service === undefined || live.spec?.service === null) {
                return "is served locally by the API server (no spec.service): there is no caBundle to set";
            }
            return live.spec?.insecureSkipTLSVerify === true
                ? "sets spec.insecureSkipTLSVerify, which the API server refuses together with a caBundle; unset it to have the bundle injected"
                : undefined;
        case "MutatingWebhookConfiguration":
        case "ValidatingWebhookConfiguration":
            return (live.webhooks ?? []).length === 0 ? "has no webhooks: there is no caBundle to set" : undefined;
        case "ConfigMap":
            return undefined;
    }
}

/**
 * What a plan does to its object, in words for the `caInjection` stack output: who writes the
 * bundle (the stack, or the injector its annotation asks), or that nothing is written (the plan's
 * warning says why).
 */
export function injectionOutcome(mode: CertificateMode, plan: Pick<InjectionPlan<unknown>, "writes">): string {
    if (!plan.writes) {
        return "nothing written";
    }
    switch (mode) {
        case "self-signed":
            return "bundle written by the stack";
        case "service-ca":
            return "annotated for service-ca, which writes the bundle";
        case "cert-manager":
            return "annotated for cert-manager's cainjector, which writes the bundle";
    }
}

/**
 * What to write into the existing object `live` named by `entry`, in the stack's mode:
 * - self-signed: only the bundle field(s), with the entry's bundle (the stack's CA where the
 *   stack issues its backend's certificate, or the CA its caSource names); refused when a
 *   backend is not the Service whose certificate the stack issues;
 * - service-ca: only the beta inject-cabundle annotation, so service-ca writes the bundle and
 *   keeps it current. A ConfigMap with other keys is refused: service-ca replaces the whole
 *   data, and a copy made by the stack would go stale silently when service-ca rotates its CA;
 * - cert-manager: only the inject-ca-from annotation naming the entry's Certificate.
 * Objects with nothing to trust (a CRD without webhook conversion, an APIService served
 * locally, a webhook configuration without webhooks) or whose bundle another injector writes
 * get a patch that owns no field, and a warning naming them.
 */
export function planExistingInjection<V>(entry: CaInjectionEntry, live: LiveObject, context: InjectionContext<V>): InjectionPlan<V> {
    const what = `caInjection: ${describeEntry(entry)}`;
    const patch = identity<V>(entry, live);
    const reason = nothingToTrust(entry, live);
    if (reason) {
        return { patch, writes: false, warning: `${what} ${reason}; nothing written` };
    }
    const competitor = competingInjector(entry, live, context);
    if (competitor) {
        return {
            patch,
            writes: false,
            warning: `${what}: ${competitor}; writing the ${context.mode} bundle too would make the two overwrite each other, so nothing is written (remove the annotation, or the entry)`,
        };
    }
    switch (context.mode) {
        case "self-signed": {
            if (!context.bundle) {
                throw new Error("planExistingInjection: self-signed mode needs the entry's bundle");
            }
            const mismatch = missingSourceProblem(entry, live) ?? issuedSourceMismatch(entry, live);
            if (mismatch) {
                throw new Error(`caInjection: ${mismatch}`);
            }
            const names = (live.webhooks ?? []).map((w) => ({ name: w.name }));
            const filled = withBundleFields(
                entry.kind,
                { ...patch, ...(names.length > 0 ? { webhooks: names } : {}) },
                context.bundle,
                false,
            );
            return { patch: filled as unknown as PatchBody<V>, writes: true };
        }
        case "service-ca": {
            const otherKeys = [...Object.keys(live.data ?? {}), ...Object.keys(live.binaryData ?? {})].filter(
                (k) => k !== CONFIGMAP_BUNDLE_KEY,
            );
            if (entry.kind === "ConfigMap" && otherKeys.length > 0) {
                throw new Error(
                    `${what} holds other keys (${otherKeys.sort().join(", ")}), which service-ca's injection would delete (it replaces the whole data), and a copy made by the stack would go stale when service-ca rotates its CA; give the bundle a ConfigMap of its own, or point its consumers at ${entry.namespace}/${SERVICE_CA_BUNDLE_CONFIGMAP}, which OpenShift keeps current`,
                );
            }
            return { patch: { ...patch, metadata: { ...patch.metadata, annotations: { [INJECT_CABUNDLE_BETA]: "true" } } }, writes: true };
        }
        case "cert-manager":
            if (!entry.certificate) {
                throw new Error(`planExistingInjection: ${what} needs a certificate in cert-manager mode (a config rule checks this)`);
            }
            return {
                patch: { ...patch, metadata: { ...patch.metadata, annotations: { [CERT_MANAGER_INJECT_CA_FROM]: entry.certificate } } },
                writes: true,
            };
    }
}
