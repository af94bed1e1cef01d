/**
 * What a deployment that serves webhooks or APIServices needs around it: its serving certificate
 * (issued before the Deployment, which mounts it where OLM mounts it), the AdmissionWebhook that
 * declares its Service and webhook configurations once it is ready, its owned APIServices, and
 * the CA bundle of the CRDs it converts.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AdmissionWebhook, webhookCertificateVolumes } from "../admission-webhook";
import { webhookDisruptionBudget, webhookService } from "../admission-webhook/build";
import { bundleDisruptionBudget, effectiveReplicas, needsDisruptionBudget } from "./replicas";
import type { WebhookBackend } from "../admission-webhook/contract";
import type { CertificateIssuer, ServingCertificate } from "../certificates/contract";
import { injectCaBundle } from "../certificates/declared";
import type { ClusterTarget } from "../shared/cluster";
import { CONVERSION_FIELD_MANAGER, crdPatchIdentity, fieldManagerAnnotations } from "../shared/crd-retention";
import { ApiServicePlan, apiServiceObject } from "./apiservices";
import type { CertificateMount } from "./deployments";
import type { CrdPlan, OperatorPlan } from "./plan";
import { webhookGenerationTransformation } from "./webhook-gate";
import { ConversionPlan, DeploymentWebhooks, webhookCertSecretName, webhookScopeOf, webhookServiceNameOf } from "./webhooks";

export interface WebhookServingArgs {
    readonly operator: string;
    readonly namespace: string;
    readonly deploymentName: string;
    readonly certificates: CertificateIssuer;
    readonly parent: pulumi.Resource;
}

export interface DeclareWebhooksArgs {
    readonly plan: OperatorPlan;
    /** The deployment's Service backend. */
    readonly backend: WebhookBackend;
    /** Its webhooks, when it serves any (else only the Service is declared). */
    readonly webhooks: DeploymentWebhooks | undefined;
    readonly deployment: k8s.apps.v1.Deployment;
    readonly generation: k8s.core.v1.ConfigMap;
    readonly cluster: ClusterTarget;
    /** Target namespaces the stack itself creates (the operator's own), labelled after them. */
    readonly namespaceDependencies: pulumi.Resource[];
}

/** One webhook backend of an operator install. */
export class WebhookServing {
    readonly serviceName: string;
    readonly certificate: ServingCertificate;
    /** The certificate's volumes and mounts, where OLM mounts webhook certificates. */
    readonly mount: CertificateMount;

    constructor(
        private readonly name: string,
        private readonly args: WebhookServingArgs,
    ) {
        this.serviceName = webhookServiceNameOf(args.deploymentName);
        const secretName = webhookCertSecretName(args.deploymentName);
        this.certificate = args.certificates.servingCertificate(
            { serviceName: this.serviceName, namespace: args.namespace, secretName, resourcePrefix: name },
            args.parent,
        );
        this.mount = webhookCertificateVolumes(secretName) as unknown as CertificateMount;
    }

    /**
     * The Service and webhook configurations, after the Deployment is ready. The configurations
     * take a property dependency on the install's webhook generation (see webhook-gate.ts). A
     * deployment that only converts CRDs or serves APIServices gets the Service alone.
     */
    declareWebhooks(args: DeclareWebhooksArgs): pulumi.Resource[] {
        const { backend } = args;
        const webhooks = args.webhooks?.webhooks ?? [];
        if (webhooks.length === 0) {
            return [
                new k8s.core.v1.Service(
                    `${this.name}-service`,
                    webhookService(backend, this.certificate.serviceAnnotations) as k8s.core.v1.ServiceArgs,
                    { parent: this.args.parent },
                ),
            ];
        }
        const scope = webhookScopeOf(backend.namespace, args.plan.config.targetNamespaces, args.plan.confinedNamespaces);
        // Webhooks that fail closed block what they intercept while their pods are down: a budget keeps a
        // drain from evicting them all, which takes two pods or more (replicas.ts).
        const deployment = args.plan.deployments.find((d) => d.name === backend.deploymentName);
        const replicas = deployment ? effectiveReplicas(deployment.input.deployment, deployment.input.overrides) : 1;
        const podLabels = (deployment?.input.deployment.spec.template.metadata?.labels ?? {}) as Record<string, string>;
        if (
            needsDisruptionBudget(webhooks, replicas) &&
            !bundleDisruptionBudget(args.plan.bundleObjects, backend.deploymentName, podLabels)
        ) {
            new k8s.policy.v1.PodDisruptionBudget(
                `${this.name}-pdb`,
                webhookDisruptionBudget(backend) as k8s.policy.v1.PodDisruptionBudgetArgs,
                { parent: this.args.parent },
            );
        }
        return [
            new AdmissionWebhook(
                `${this.name}-webhooks`,
                {
                    backend,
                    webhooks,
                    ...scope,
                    certificates: this.args.certificates,
                    servingCertificate: this.certificate,
                    deployment: args.deployment,
                    cluster: args.cluster,
                    targetNamespaceDependencies: args.namespaceDependencies,
                },
                {
                    parent: this.args.parent,
                    transformations: [webhookGenerationTransformation(args.generation.metadata.name, args.plan.webhookGeneration.hash)],
                },
            ),
        ];
    }

    /**
     * The owned APIServices this deployment serves, once it is ready and its Service exists, each
     * with the CA bundle of the mode; the provider waits for each to become Available.
     */
    declareApiServices(operator: string, apiServices: readonly ApiServicePlan[], dependsOn: pulumi.Resource[]): pulumi.Resource[] {
        return apiServices.map((plan) => {
            const injected = injectCaBundle(
                "APIService",
                apiServiceObject(plan, operator),
                this.args.certificates.caBundleFor(this.certificate),
            );
            return new k8s.apiregistration.v1.APIService(
                `${this.name}-apiservice-${plan.name}`,
                injected.object as unknown as k8s.apiregistration.v1.APIServiceArgs,
                {
                    parent: this.args.parent,
                    dependsOn: [...dependsOn, ...this.certificate.dependencies],
                    ignoreChanges: injected.ignoreChanges.length > 0 ? injected.ignoreChanges : undefined,
                },
            );
        });
    }

    /**
     * A CRD from the bundle with `spec.conversion` pointing at this deployment's Service, for a
     * provider that renders YAML (no patch can be rendered, and no removal follows a render).
     */
    conversionCrd(
        name: string,
        manifest: Record<string, unknown> & { spec: Record<string, unknown> },
        conversion: ConversionPlan,
        retainOnDelete: boolean,
    ): pulumi.Resource {
        const injected = injectCaBundle(
            "CustomResourceDefinition",
            { ...manifest, spec: { ...manifest.spec, conversion: conversionSpec(conversion) } },
            this.args.certificates.caBundleFor(this.certificate),
        );
        return new k8s.apiextensions.v1.CustomResourceDefinition(
            name,
            injected.object as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
            {
                parent: this.args.parent,
                retainOnDelete,
                ignoreChanges: injected.ignoreChanges.length > 0 ? injected.ignoreChanges : undefined,
            },
        );
    }

    /**
     * `spec.conversion` of an owned CRD on a live cluster: a server-side-apply patch that owns only
     * that field, under `CONVERSION_FIELD_MANAGER` (forced: the CRD's creator may own the default
     * `strategy: None`). Deleting it with its operator hands the CRD back to `strategy: None`
     * (conversion-reset.ts); the CRD itself is declared without `spec.conversion`.
     */
    conversionPatch(name: string, crd: CrdPlan, conversion: ConversionPlan, dependsOn: pulumi.Resource[]): pulumi.Resource {
        const injected = injectCaBundle(
            "CustomResourceDefinition",
            {
                apiVersion: "apiextensions.k8s.io/v1",
                kind: "CustomResourceDefinition",
                metadata: { name: crd.name, annotations: fieldManagerAnnotations(CONVERSION_FIELD_MANAGER) },
                spec: { ...crdPatchIdentity(crd.name, crd.kind), conversion: conversionSpec(conversion) },
            },
            this.args.certificates.caBundleFor(this.certificate),
        );
        return new k8s.apiextensions.v1.CustomResourceDefinitionPatch(
            name,
            injected.object as unknown as k8s.apiextensions.v1.CustomResourceDefinitionPatchArgs,
            {
                parent: this.args.parent,
                dependsOn: [...dependsOn, ...this.certificate.dependencies],
                ignoreChanges: injected.ignoreChanges.length > 0 ? injected.ignoreChanges : undefined,
            },
        );
    }
}

/** A CRD's `spec.conversion` for a conversion webhook (the CA bundle is added per mode). */
export function conversionSpec(conversion: ConversionPlan): Record<string, unknown> {
    return {
        strategy: "Webhook",
        webhook: {
            clientConfig: { service: { ...conversion.service } },
            conversionReviewVersions: conversion.conversionReviewVersions,
        },
    };
}
