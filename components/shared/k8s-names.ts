/**
 * Kubernetes name rules. They live in `webhook/k8s-names.ts` because the admission server (built
 * and packaged on its own, without `components/`) needs the same rules; this module keeps the
 * components' import path.
 */
export {
    DNS1123_LABEL_PATTERN,
    DNS1123_LABEL_RULE,
    DNS1123_SUBDOMAIN_PATTERN,
    DNS1123_SUBDOMAIN_RULE,
    isDns1123Label,
    isDns1123Subdomain,
} from "../../webhook/k8s-names";
