/**
 * Kubernetes name rules (apimachinery's IsDNS1123Label / IsDNS1123Subdomain), as pure checks.
 * Returned strings are rule descriptions for messages; `undefined` means valid.
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
