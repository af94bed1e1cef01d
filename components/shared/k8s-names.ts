/**
 * Kubernetes name and value rules (kubernetes/apimachinery pkg/util/validation/validation.go:
 * IsDNS1123Label, IsDNS1123Subdomain, IsConfigMapKey, IsQualifiedName, IsValidLabelValue,
 * IsEnvVarName; pkg/api/resource ParseQuantity), as pure checks, and generated-name
 * fingerprints. A neutral module: it imports nothing, so the program, the policy packs and the
 * admission server (whose image carries it, see components/webhook-image/index.ts
 * WEBHOOK_INPUT_PATHS) all import it.
 */

/** The patterns as regular-expression source, for OpenAPI schemas (CRDs) that check the same rules. */
export const DNS1123_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
export const DNS1123_SUBDOMAIN_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
const DNS1123_LABEL = new RegExp(DNS1123_LABEL_PATTERN);
const DNS1123_SUBDOMAIN = new RegExp(DNS1123_SUBDOMAIN_PATTERN);

export const DNS1123_LABEL_RULE =
    "must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit";
export const DNS1123_SUBDOMAIN_RULE =
    "must be a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' or '.', each dot-separated part starting and ending with a letter or digit";

export function isDns1123Label(value: string): boolean {
    return value.length <= 63 && DNS1123_LABEL.test(value);
}

export function isDns1123Subdomain(value: string): boolean {
    return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** apimachinery's IsConfigMapKey: the rule for Secret and ConfigMap keys, which become file names. */
const CONFIG_MAP_KEY = /^[-._a-zA-Z0-9]+$/;
export function isConfigMapKey(value: string): boolean {
    return value.length <= 253 && CONFIG_MAP_KEY.test(value) && value !== "." && value !== ".." && !value.startsWith("..");
}

/** Kubernetes' rule for a label key (apimachinery `validation.IsQualifiedName`): `[prefix/]name`. */
export const LABEL_KEY_RULE =
    "must be a label key: an optional DNS-1123 subdomain prefix of at most 253 characters and '/', then a name of at most 63 characters of [A-Za-z0-9-_.] starting and ending with an alphanumeric character";
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export function isLabelKey(key: string): boolean {
    const slash = key.lastIndexOf("/");
    const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
    const name = slash >= 0 ? key.slice(slash + 1) : key;
    if (prefix !== undefined && !isDns1123Subdomain(prefix)) {
        return false;
    }
    return name.length <= 63 && LABEL_NAME.test(name);
}

/** Kubernetes' rule for a label value (apimachinery `validation.IsValidLabelValue`). */
export const LABEL_VALUE_RULE =
    "must be a label value: at most 63 characters of [A-Za-z0-9-_.], starting and ending with an alphanumeric character, or empty";
export function isLabelValue(value: string): boolean {
    return value === "" || (value.length <= 63 && LABEL_NAME.test(value));
}

/** A resource quantity as apimachinery `resource.ParseQuantity` accepts it (`100m`, `1.5Gi`, `2e3`). */
export const QUANTITY_RULE = "must be a Kubernetes quantity such as 100m, 1, 1.5, 512Mi or 2Gi";
const QUANTITY = /^[+-]?(\d+(\.\d*)?|\.\d+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?\d+)?$/;
export function isQuantity(value: string): boolean {
    return QUANTITY.test(value);
}

/** Kubernetes' rule for an environment variable name (apimachinery `validation.IsEnvVarName`). */
export const ENV_VAR_NAME_RULE = "must be an environment variable name: [-._a-zA-Z][-._a-zA-Z0-9]*";
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
export function isEnvVarName(name: string): boolean {
    return ENV_VAR_NAME.test(name);
}

/** FNV-1a (32 bit) as 8 hex digits: a short, stable, dependency-free fingerprint for generated names. */
export function fingerprint(text: string): string {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
        hash ^= text.charCodeAt(i);
        hash = Math.imul(hash, 0x01000193);
    }
    return (hash >>> 0).toString(16).padStart(8, "0");
}

/**
 * `<base>-<fingerprint of identity>`, cut to `max` characters by shortening `base` (never the
 * fingerprint), and trimmed so the result stays a valid DNS-1123 subdomain or label.
 */
export function fingerprintedName(base: string, identity: string, max: number): string {
    const suffix = `-${fingerprint(identity)}`;
    const head = base.slice(0, max - suffix.length).replace(/[-.]+$/, "");
    return `${head}${suffix}`;
}

/**
 * Namespace-name prefixes the platforms keep for themselves: Kubernetes' `kube-system`,
 * `kube-public` and `kube-node-lease`, OpenShift's `openshift` and `openshift-*` (where it keeps
 * control-plane credentials: openshift/cluster-kube-apiserver-operator
 * pkg/operator/certrotationcontroller/certrotationcontroller.go writes `kube-scheduler-client-cert-key`
 * and `kube-controller-manager-client-cert-key` into `openshift-config-managed`). Matched as bare
 * prefixes (`kube*`, `openshift*`), the widest reading: a namespace that only looks like a platform
 * one is treated as one, which costs it namespace-wide reads, never a grant.
 */
export const PLATFORM_NAMESPACE_PREFIXES = ["kube", "openshift"] as const;

/** Whether a namespace is (or is named like) one of the platform's: `kube*` or `openshift*`. */
export function isPlatformNamespace(namespace: string): boolean {
    return PLATFORM_NAMESPACE_PREFIXES.some((prefix) => namespace.startsWith(prefix));
}
