/**
 * The generic admission webhook (seed 002's Webhook struct), used by operator installs and by
 * the subscription injection webhook: the Service in front of the backend Deployment, the
 * target-namespace labels, and one Mutating/ValidatingWebhookConfiguration per type with a
 * generated clientConfig, namespaceSelector and CA bundle in the issuer's mode.
 *
 * Ordering: the consumer issues the serving certificate and declares the Deployment (mounting
 * the Secret with `webhookCertificateVolumes`); this component's Service does not wait for the
 * Deployment (in service-ca mode the Secret only appears once the annotated Service exists),
 * while the configurations depend on the Deployment, so the API server calls the webhook only
 * once its pods are ready.
 *
 * Namespace labels: on a live cluster each target namespace gets the backend's label by a
 * server-side-apply NamespacePatch that owns only that label (the Namespace may belong to
 * someone else, or to another component of this stack). When the provider renders YAML to a
 * directory nothing can be patched, so the selector names the target namespaces instead
 * (`kubernetes.io/metadata.name In [...]`, a label every namespace carries) and one warning
 * says so.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { injectCaBundle } from "../certificates/declared";
import { skippedWithoutCluster } from "../shared/cluster";
import { ValidationError } from "../shared/problems";
import { defaultConfigurationName, namespaceSelector, targetNamespaceLabel, webhookConfigurations, webhookService } from "./build";
import type { AdmissionWebhookArgs } from "./contract";
import { admissionWebhookProblems } from "./structure";

export * from "./contract";
export { webhookCertificateVolumes, webhookServiceName, targetNamespaceLabel, WEBHOOK_CERT_VOLUME } from "./build";
export { admissionWebhookProblems } from "./structure";

/** A webhook backend's Service, namespace labels and webhook configurations. */
export class AdmissionWebhook extends pulumi.ComponentResource {
    /** The Service `<deployment>-service`. */
    readonly service: k8s.core.v1.Service;
    /** The MutatingWebhookConfiguration, when a mutating webhook is defined. */
    readonly mutatingWebhookConfiguration?: k8s.admissionregistration.v1.MutatingWebhookConfiguration;
    /** The ValidatingWebhookConfiguration, when a validating webhook is defined. */
    readonly validatingWebhookConfiguration?: k8s.admissionregistration.v1.ValidatingWebhookConfiguration;
    /** The NamespacePatches that label the target namespaces (live clusters only). */
    readonly namespaceLabels: k8s.core.v1.NamespacePatch[] = [];

    constructor(name: string, args: AdmissionWebhookArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:admission-webhook:AdmissionWebhook", name, {}, opts);
        const problems = admissionWebhookProblems(args);
        if (problems.length > 0) {
            // The operator plan runs the same check on CSV input before anything is registered
            // (operator/plan.ts); the subscription webhook's definitions are the program's own, their
            // configurable fields checked by the config schema. Here it is a safety net.
            throw new ValidationError(problems);
        }
        const { backend } = args;

        this.service = new k8s.core.v1.Service(
            `${name}-service`,
            webhookService(backend, args.servingCertificate.serviceAnnotations) as k8s.core.v1.ServiceArgs,
            { parent: this },
        );

        const labelled = args.cluster.live;
        if (args.targetNamespaces !== undefined && labelled) {
            const label = targetNamespaceLabel(backend);
            for (const namespace of [...new Set(args.targetNamespaces)].sort()) {
                this.namespaceLabels.push(
                    new k8s.core.v1.NamespacePatch(
                        `${name}-target-${namespace}`,
                        { metadata: { name: namespace, labels: { [label]: "true" } } },
                        { parent: this, dependsOn: args.targetNamespaceDependencies },
                    ),
                );
            }
        } else if (args.targetNamespaces !== undefined) {
            pulumi.log.warn(
                `${skippedWithoutCluster(`labelling the target namespaces of webhook backend ${backend.namespace}/${backend.deploymentName}`)}; its namespaceSelector names them instead`,
                this,
            );
        }

        const selector = namespaceSelector({
            backend,
            targetNamespaces: args.targetNamespaces,
            namespaceNames: args.namespaceNames,
            excludedNamespaces: args.excludedNamespaces,
            excludedNamespaceLabels: args.excludedNamespaceLabels,
            labelled,
        });
        const injection = args.certificates.caBundleFor(args.servingCertificate);
        const configurationName = args.configurationName ?? defaultConfigurationName(backend);
        for (const { kind, object } of webhookConfigurations(configurationName, args.webhooks, backend, selector)) {
            const injected = injectCaBundle(kind, object, injection);
            const options: pulumi.CustomResourceOptions = {
                parent: this,
                // Only once the backend is ready (and its certificate and namespace labels exist)
                // may the API server call it.
                dependsOn: [args.deployment, ...args.servingCertificate.dependencies, ...this.namespaceLabels],
                ignoreChanges: injected.ignoreChanges.length > 0 ? injected.ignoreChanges : undefined,
            };
            if (kind === "MutatingWebhookConfiguration") {
                this.mutatingWebhookConfiguration = new k8s.admissionregistration.v1.MutatingWebhookConfiguration(
                    `${name}-mutating`,
                    injected.object as k8s.admissionregistration.v1.MutatingWebhookConfigurationArgs,
                    options,
                );
            } else {
                this.validatingWebhookConfiguration = new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
                    `${name}-validating`,
                    injected.object as k8s.admissionregistration.v1.ValidatingWebhookConfigurationArgs,
                    options,
                );
            }
        }
        this.registerOutputs({
            serviceName: this.service.metadata.name,
            configurationName,
        });
    }
}
