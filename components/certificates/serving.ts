/**
 * Names in a serving certificate. Pure.
 */

/** The DNS names a Service is called by inside the cluster: `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`. */
export function servingDnsNames(service: { serviceName: string; namespace: string }): string[] {
    const base = `${service.serviceName}.${service.namespace}`;
    return [base, `${base}.svc`, `${base}.svc.cluster.local`];
}

/** The subject common name: `<svc>.<ns>.svc`, as service-ca and OLM name it. */
export function servingCommonName(service: { serviceName: string; namespace: string }): string {
    return `${service.serviceName}.${service.namespace}.svc`;
}
