/**
 * CA bundles for objects the stack declares itself, in every mode, by one function
 * (`injectCaBundle`) and one `transformations` entry built on it (`caBundleTransformation`).
 *
 * The request is seed 001's: an object annotated `service.beta.openshift.io/inject-cabundle:
 * "true"` (alpha too on APIService and ConfigMap; value compared case-insensitively) asks for
 * the bundle. The transformation fulfils it in the stack's mode: self-signed writes the
 * bundle and drops the request annotation (so service-ca, on OpenShift, does not write over
 * it); service-ca keeps the request; cert-manager replaces it with inject-ca-from. The legacy
 * `transformations` option is used because it runs under the mock runtime and for real,
 * unlike `registerResourceTransform`.
 */
import * as pulumi from "@pulumi/pulumi";
import type { CaBundleInjection } from "./contract";
import { conversionStrategyOf, withBundleFields } from "./injection";
import {
    CONFIGMAP_BUNDLE_KEY,
    injectionAnnotationsPresent,
    InjectableKind,
    INJECTABLE_KINDS,
    INJECTION_TARGETS,
    requestsInjection,
} from "./rules";
import { asResolvedRecord } from "../shared/resolved-records";
import { attributedTo } from "../shared/resource-errors";

type Obj = Record<string, unknown>;

export interface InjectedObject {
    /** The object with its bundle field(s) (self-signed) or injector annotation (delegated). */
    object: Obj;
    /** Paths another controller writes, for `ignoreChanges` (empty when the stack owns them). */
    ignoreChanges: string[];
    /** Set when nothing could be injected (a CRD without webhook conversion). */
    warning?: string;
}

function describe(kind: InjectableKind, object: Obj): string {
    const metadata = asResolvedRecord(object.metadata) ?? {};
    const name = typeof metadata.name === "string" ? metadata.name : "(unnamed)";
    return `${kind} ${JSON.stringify(typeof metadata.namespace === "string" ? `${metadata.namespace}/${name}` : name)}`;
}

/**
 * `object` (of `kind`, declared by the stack) made to trust the certificate behind
 * `injection`: bundle fields written in self-signed mode, injector annotations and
 * `ignoreChanges` paths in the delegated modes. Any inject-cabundle request annotation is
 * replaced by what the mode needs. Throws for what no injector can do (cert-manager and
 * ConfigMaps, service-ca and a ConfigMap with other keys, which it would delete).
 */
export function injectCaBundle(kind: InjectableKind, object: Obj, injection: CaBundleInjection): InjectedObject {
    const what = describe(kind, object);
    if (kind === "CustomResourceDefinition" && conversionStrategyOf(object) !== "Webhook") {
        return {
            object,
            ignoreChanges: [],
            warning: `${what}: spec.conversion.strategy is ${JSON.stringify(conversionStrategyOf(object))}, not "Webhook": there is no conversion webhook to trust; no CA bundle injected`,
        };
    }
    const metadata = asResolvedRecord(object.metadata) ?? {};
    const annotations = { ...(asResolvedRecord(metadata.annotations) ?? {}) };
    for (const key of injectionAnnotationsPresent(annotations)) {
        delete annotations[key];
    }
    const delegated = injection.caBundle === undefined;
    if (delegated && kind === "ConfigMap") {
        const otherKeys = Object.keys(asResolvedRecord(object.data) ?? {}).filter((k) => k !== CONFIGMAP_BUNDLE_KEY);
        if (Object.keys(injection.annotations).some((k) => k.startsWith("cert-manager.io/"))) {
            throw new Error(`${what}: cert-manager's cainjector does not inject ConfigMaps; declare it in self-signed or service-ca mode`);
        }
        if (otherKeys.length > 0) {
            throw new Error(
                `${what}: asks for the service CA bundle but also holds ${otherKeys.sort().join(", ")}, which service-ca would delete (it replaces the whole data); keep the bundle in a ConfigMap of its own`,
            );
        }
    }
    const merged = { ...annotations, ...injection.annotations };
    const { annotations: _replaced, ...otherMetadata } = metadata;
    const withAnnotations: Obj = {
        ...object,
        metadata: Object.keys(merged).length > 0 ? { ...otherMetadata, annotations: merged } : otherMetadata,
    };
    if (!delegated) {
        return {
            object: withBundleFields(kind, withAnnotations, { pem: injection.caBundlePem!, base64: injection.caBundle! }),
            ignoreChanges: [],
        };
    }
    const current = injection.injectorBundlePem;
    if (current !== undefined && injection.ignoreChanges(kind).length === 0) {
        // The injector's current bundle, so the object is verified from its creation (delegated.ts).
        const base64 = Buffer.from(current, "utf8").toString("base64");
        return { object: withBundleFields(kind, withAnnotations, { pem: current, base64 }), ignoreChanges: [] };
    }
    return { object: withAnnotations, ignoreChanges: injection.ignoreChanges(kind) };
}

/** The Pulumi type token of each kind that receives a CA bundle. */
export const INJECTABLE_TYPE_TOKENS: Record<string, InjectableKind> = Object.fromEntries(
    INJECTABLE_KINDS.map((kind) => {
        const apiVersion: string = INJECTION_TARGETS[kind].apiVersion;
        const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
        return [`kubernetes:${group}/${version}:${kind}`, kind];
    }),
);

/**
 * A `transformations` entry for a component: every child object of a kind in seed 001 that
 * carries an inject-cabundle request gets the bundle of `injection` (see `injectCaBundle`).
 * Objects whose metadata is an Output cannot be inspected and are left alone.
 */
export function caBundleTransformation(injection: CaBundleInjection): pulumi.ResourceTransformation {
    return ({ type, props, opts, resource }) => {
        const kind = INJECTABLE_TYPE_TOKENS[type];
        if (!kind) {
            return undefined;
        }
        const annotations = asResolvedRecord(asResolvedRecord(props.metadata)?.annotations);
        if (!requestsInjection(kind, annotations)) {
            return undefined;
        }
        const injected = attributedTo(resource, () => injectCaBundle(kind, props, injection));
        if (injected.warning) {
            pulumi.log.warn(injected.warning, resource);
        }
        const ignoreChanges = [...(opts.ignoreChanges ?? []), ...injected.ignoreChanges];
        return { props: injected.object, opts: ignoreChanges.length > 0 ? { ...opts, ignoreChanges } : opts };
    };
}
