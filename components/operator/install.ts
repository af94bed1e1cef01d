/**
 * One operator installed from its ClusterServiceVersion the way OLM installs it, declaratively:
 * owned CRDs, ServiceAccounts, RBAC, then the CSV's Deployments in order, each after the previous
 * is ready, each followed by the webhooks it serves. Everything here comes from a plan made by
 * the pure pre-flight (`plan.ts`); this component only declares resources.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CertificateIssuer } from "../certificates/contract";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { OPERATOR_LABEL, platformLabels } from "../shared/labels";
import { deploymentFor } from "./deployments";
import type { CrdPlan, OperatorPlan } from "./plan";
import type { RbacObject } from "./rbac";
import { WebhookServing } from "./serving";

export interface OperatorInstallArgs {
    /** The pre-flight plan of this install. */
    plan: OperatorPlan;
    /** Issues this operator's serving certificates and CA bundles (its override or the stack's mode). */
    certificates: CertificateIssuer;
    /** The cluster: whether patches of existing objects can be applied. */
    cluster: ClusterTarget;
    /** Resources that must exist first (the operator's Namespace when the stack creates it). */
    namespaceDependencies: pulumi.Resource[];
}

export class OperatorInstall extends pulumi.ComponentResource {
    /** The Deployments, in CSV order. */
    readonly deployments: k8s.apps.v1.Deployment[] = [];

    constructor(name: string, args: OperatorInstallArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:operator:OperatorInstall", name, {}, opts);
        const { plan } = args;
        const op = plan.config.name;
        const namespace = plan.config.namespace;
        const child = (extra: pulumi.CustomResourceOptions = {}): pulumi.CustomResourceOptions => ({ parent: this, ...extra });
        const labels = platformLabels("operator", { [OPERATOR_LABEL]: op });
        const inNamespace = args.namespaceDependencies;

        // Owned CRDs (from the bundle) come first, as OLM's InstallPlan applies them before the CSV.
        const crds = plan.crds.filter((c) => c.manifest).map((c) => this.declareCrd(op, c, args.certificates, plan));
        const serviceAccounts = plan.serviceAccounts.map(
            (sa) =>
                new k8s.core.v1.ServiceAccount(
                    `${op}-sa-${sa}`,
                    { metadata: { name: sa, namespace, labels } },
                    child({ dependsOn: inNamespace }),
                ),
        );
        const rbac = declareRbac(op, plan.rbac, this, [...inNamespace, ...crds]);

        // The webhook generation: replaced (delete first) whenever the webhook set changes.
        const generation = new k8s.core.v1.ConfigMap(
            `${op}-webhook-generation`,
            {
                metadata: { name: plan.webhookGeneration.name, namespace, labels },
                immutable: true,
                data: { "webhooks.json": plan.webhookGeneration.definitions },
            },
            child({ dependsOn: inNamespace, deleteBeforeReplace: true }),
        );

        // Deployments in CSV order: each waits for the previous one to be ready and for the
        // webhooks that one serves (the provider awaits a Deployment's rollout).
        let previous: pulumi.Resource[] = [generation, ...serviceAccounts, ...rbac, ...crds];
        for (const deploymentPlan of plan.deployments) {
            const serving = deploymentPlan.webhooks
                ? new WebhookServing(`${op}-${deploymentPlan.name}`, {
                      operator: op,
                      namespace,
                      deploymentName: deploymentPlan.name,
                      certificates: args.certificates,
                      parent: this,
                  })
                : undefined;
            const object = deploymentFor({ ...deploymentPlan.input, certificate: serving?.mount });
            const annotations = serving
                ? pulumi.output(serving.certificate.podTemplateAnnotations).apply((extra) => ({ ...object.spec.template.metadata.annotations, ...extra }))
                : object.spec.template.metadata.annotations;
            const deployment = new k8s.apps.v1.Deployment(
                `${op}-deployment-${deploymentPlan.name}`,
                {
                    ...object,
                    spec: { ...object.spec, template: { ...object.spec.template, metadata: { ...object.spec.template.metadata, annotations } } },
                } as unknown as k8s.apps.v1.DeploymentArgs,
                child({ dependsOn: [...previous, ...(serving?.certificate.dependencies ?? [])] }),
            );
            this.deployments.push(deployment);
            previous = [deployment];
            if (serving && deploymentPlan.webhooks) {
                const webhooks = serving.declareWebhooks({
                    plan,
                    webhooks: deploymentPlan.webhooks,
                    deployment,
                    generation,
                    cluster: args.cluster,
                });
                previous.push(...webhooks);
                for (const crd of plan.crds.filter((c) => c.conversion && !c.manifest && c.conversion.service.name === serving.serviceName)) {
                    this.patchConversion(op, crd, serving, args.cluster, [deployment, ...webhooks]);
                }
            }
        }
        this.registerOutputs({});
    }

    private declareCrd(op: string, crd: CrdPlan, certificates: CertificateIssuer, plan: OperatorPlan): pulumi.Resource {
        const manifest = structuredClone(crd.manifest) as unknown as Record<string, unknown> & { metadata: Record<string, unknown>; spec: Record<string, unknown> };
        const metadataLabels = (manifest.metadata.labels as Record<string, string> | undefined) ?? {};
        manifest.metadata = { ...manifest.metadata, labels: { ...metadataLabels, ...platformLabels("operator", { [OPERATOR_LABEL]: op }) } };
        if (crd.conversion) {
            return WebhookServing.conversionCrd(`${op}-crd-${crd.name}`, manifest, crd.conversion, certificates, plan, this);
        }
        return new k8s.apiextensions.v1.CustomResourceDefinition(`${op}-crd-${crd.name}`, manifest as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs, {
            parent: this,
        });
    }

    /** Conversion for a CRD that exists without a manifest in the bundle: a server-side-apply patch. */
    private patchConversion(op: string, crd: CrdPlan, serving: WebhookServing, cluster: ClusterTarget, dependsOn: pulumi.Resource[]): void {
        if (!cluster.live) {
            pulumi.log.warn(`operator "${op}": ${skippedWithoutCluster(`the conversion webhook patch of CRD ${crd.name}`)}`, this);
            return;
        }
        serving.patchExistingCrdConversion(`${op}-crd-conversion-${crd.name}`, crd, dependsOn, this);
    }
}

/** Roles before their bindings; every object named as OLM names it. */
function declareRbac(op: string, objects: readonly RbacObject[], parent: pulumi.Resource, dependsOn: pulumi.Resource[]): pulumi.Resource[] {
    const declared: pulumi.Resource[] = [];
    for (const object of objects) {
        const logical = `${op}-${object.kind.toLowerCase()}-${object.metadata.namespace ? `${object.metadata.namespace}-` : ""}${object.metadata.name}`;
        const opts = { parent, dependsOn };
        switch (object.kind) {
            case "Role":
                declared.push(new k8s.rbac.v1.Role(logical, object, opts));
                break;
            case "ClusterRole":
                declared.push(new k8s.rbac.v1.ClusterRole(logical, object, opts));
                break;
            case "RoleBinding":
                declared.push(new k8s.rbac.v1.RoleBinding(logical, object, opts));
                break;
            case "ClusterRoleBinding":
                declared.push(new k8s.rbac.v1.ClusterRoleBinding(logical, object, opts));
                break;
        }
    }
    return declared;
}
