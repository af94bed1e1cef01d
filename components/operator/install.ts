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
import { CRD_FIELD_MANAGER, fieldManagerAnnotations } from "../shared/crd-retention";
import { OPERATOR_LABEL, platformLabels } from "../shared/labels";
import { declareBundleObjects } from "./bundle-install";
import { DeploymentObject, deploymentFor, EnvVar, mayCarryCredentials, plainCopy } from "./deployments";
import type { CrdPlan, OperatorPlan } from "./plan";
import { objectKey, RbacObject } from "./rbac";
import { WebhookServing } from "./serving";

export interface OperatorInstallArgs {
    /** The pre-flight plan of this install. */
    readonly plan: OperatorPlan;
    /** Issues this operator's serving certificates and CA bundles (its override or the stack's mode). */
    readonly certificates: CertificateIssuer;
    /** The cluster: whether patches of existing objects can be applied. */
    readonly cluster: ClusterTarget;
    /** Resources that must exist first (the operator's Namespace when the stack creates it). */
    readonly namespaceDependencies: pulumi.Resource[];
    /**
     * The cluster-wide proxy variables (OpenShift's Proxy `cluster`, read by the pre-flight); a value
     * that may carry credentials goes into the state as a secret. @default none: no proxy variables
     */
    readonly proxyEnv?: readonly EnvVar[];
    /** Set where the cluster serves OperatorConditions: the pre-flight read the OperatorCondition waits for. @default none: no OperatorCondition */
    readonly operatorConditionDependencies?: pulumi.Resource[];
}

type Manifest = Record<string, unknown> & { metadata: Record<string, unknown>; spec: Record<string, unknown> };

/**
 * `cluster-platform:operator:OperatorInstall`: one operator from its plan: CRDs, ServiceAccounts,
 * RBAC, then per deployment in CSV order its serving certificate, Deployment, webhooks and owned
 * APIServices, and the OperatorCondition.
 */
export class OperatorInstall extends pulumi.ComponentResource {
    /** The Deployments, in CSV order. */
    readonly deployments: k8s.apps.v1.Deployment[] = [];

    constructor(name: string, args: OperatorInstallArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:operator:OperatorInstall", name, {}, opts);
        const { plan } = args;
        const op = plan.config.name;
        const namespace = plan.config.namespace;
        const labels = platformLabels("operator", { [OPERATOR_LABEL]: op });
        const inNamespace = args.namespaceDependencies;

        // Serving certificates first: the CRDs they convert and the Deployments that mount them need them.
        const servings = new Map<string, WebhookServing>();
        for (const deployment of plan.deployments.filter((d) => d.served)) {
            servings.set(
                deployment.name,
                new WebhookServing(`${op}-${deployment.name}`, {
                    operator: op,
                    namespace,
                    deploymentName: deployment.name,
                    certificates: args.certificates,
                    parent: this,
                }),
            );
        }

        // Owned CRDs (from the bundle) come next, as OLM's InstallPlan applies them before the CSV.
        // A CRD other installs share is kept on this one's removal whatever deleteCrdsOnRemoval says.
        const shared = new Set(plan.shared.declared);
        const crds = plan.crds
            .filter((c) => c.manifest)
            .flatMap((c) =>
                this.declareCrd(
                    op,
                    c,
                    servings,
                    !plan.config.deleteCrdsOnRemoval || shared.has(`CustomResourceDefinition ${c.name}`),
                    args.cluster,
                ),
            );
        // A ServiceAccount the bundle also ships is declared with the bundle's content (bundle-objects.ts).
        const serviceAccounts = plan.serviceAccounts.map(
            (sa) =>
                new k8s.core.v1.ServiceAccount(
                    `${op}-sa-${sa}`,
                    (plan.serviceAccountObjects[sa] as k8s.core.v1.ServiceAccountArgs | undefined) ?? {
                        metadata: { name: sa, namespace, labels },
                    },
                    { parent: this, dependsOn: inNamespace },
                ),
        );
        const rbac = declareRbac(op, plan.rbac, this, [...inNamespace, ...crds], shared);
        // The bundle's other objects, as OLM's InstallPlan creates them before the CSV's Deployments.
        const bundleObjects = declareBundleObjects(op, plan.bundleObjects, shared, { parent: this, dependsOn: [...inNamespace, ...crds] });

        // The webhook generation: replaced (delete first) whenever the webhook set changes.
        const generation = new k8s.core.v1.ConfigMap(
            `${op}-webhook-generation`,
            {
                metadata: { name: plan.webhookGeneration.name, namespace, labels },
                immutable: true,
                data: { "webhooks.json": plan.webhookGeneration.definitions },
            },
            // After the CRDs: a CRD the API server refuses stops the update before the generation's
            // delete-first replacement removes the running operator's webhook configurations.
            { parent: this, dependsOn: [...inNamespace, ...crds], deleteBeforeReplace: true },
        );

        // Deployments in CSV order: each waits for the previous one to be ready and for the
        // webhooks that one serves (the provider awaits a Deployment's rollout).
        let previous: pulumi.Resource[] = [generation, ...serviceAccounts, ...rbac, ...bundleObjects, ...crds];
        const credentials = new Set((args.proxyEnv ?? []).map((e) => e.value).filter(mayCarryCredentials));
        for (const deploymentPlan of plan.deployments) {
            const serving = servings.get(deploymentPlan.name);
            const object = deploymentFor({ ...deploymentPlan.input, certificate: serving?.mount, proxyEnv: args.proxyEnv });
            const template = object.spec.template;
            const annotations = serving
                ? pulumi
                      .output(serving.certificate.podTemplateAnnotations)
                      .apply((extra) => ({ ...template.metadata.annotations, ...extra }))
                : template.metadata.annotations;
            const podSpec = withSecretValues(template.spec, credentials);
            const deployment = new k8s.apps.v1.Deployment(
                `${op}-deployment-${deploymentPlan.name}`,
                {
                    ...object,
                    spec: { ...object.spec, template: { ...template, metadata: { ...template.metadata, annotations }, spec: podSpec } },
                } as unknown as k8s.apps.v1.DeploymentArgs,
                { parent: this, dependsOn: [...previous, ...(serving?.certificate.dependencies ?? [])] },
            );
            this.deployments.push(deployment);
            previous = [deployment];
            if (serving && deploymentPlan.served) {
                const webhooks = serving.declareWebhooks({
                    plan,
                    backend: deploymentPlan.served.backend,
                    webhooks: deploymentPlan.webhooks,
                    deployment,
                    generation,
                    cluster: args.cluster,
                    namespaceDependencies: inNamespace,
                });
                previous.push(...webhooks);
                // OLM waits for its APIServices to be Available before the CSV succeeds; so does the next Deployment here.
                previous.push(...serving.declareApiServices(op, deploymentPlan.apiServices ?? [], [deployment, ...webhooks]));
                for (const crd of plan.crds.filter(
                    (c) => c.conversion?.deploymentName === deploymentPlan.name && !c.manifest && !c.sharedFrom,
                )) {
                    this.patchConversion(op, crd, serving, args.cluster, [deployment, ...webhooks]);
                }
            }
        }
        // OLM generates the OperatorCondition for the CSV as soon as it exists; here, once the namespace does.
        if (args.operatorConditionDependencies) {
            new k8s.apiextensions.CustomResource(
                `${op}-operator-condition`,
                plan.operatorCondition as unknown as k8s.apiextensions.CustomResourceArgs,
                {
                    parent: this,
                    dependsOn: [...inNamespace, ...args.operatorConditionDependencies],
                },
            );
        }
        this.registerOutputs({ deployments: this.deployments.map((d) => d.metadata.name) });
    }

    /**
     * A CRD from the bundle, kept on delete unless the operator opted in (`deleteCrdsOnRemoval`):
     * deleting a CRD deletes all its custom resources (components/shared/crd-retention.ts). On a
     * live cluster it is applied under the stack's fixed CRD field manager, forced, so a CRD that
     * already exists is taken back; a webhook conversion is a patch of its own (conversionPatch).
     */
    private declareCrd(
        op: string,
        crd: CrdPlan,
        servings: Map<string, WebhookServing>,
        retainOnDelete: boolean,
        cluster: ClusterTarget,
    ): pulumi.Resource[] {
        const manifest = plainCopy(crd.manifest) as unknown as Manifest;
        const metadataLabels = (manifest.metadata.labels as Record<string, string> | undefined) ?? {};
        manifest.metadata = {
            ...manifest.metadata,
            labels: { ...metadataLabels, ...platformLabels("operator", { [OPERATOR_LABEL]: op }) },
        };
        const serving = crd.conversion ? servings.get(crd.conversion.deploymentName) : undefined;
        if (crd.conversion && serving && !cluster.live) {
            return [serving.conversionCrd(`${op}-crd-${crd.name}`, manifest, crd.conversion, retainOnDelete)];
        }
        if (cluster.live) {
            const annotations = (manifest.metadata.annotations as Record<string, string> | undefined) ?? {};
            manifest.metadata.annotations = { ...annotations, ...fieldManagerAnnotations(CRD_FIELD_MANAGER) };
        }
        if (crd.conversion && serving) {
            // The conversion belongs to the patch; the CRD's own manager must not hold it (crd-retention.ts).
            const { conversion: _bundleConversion, ...spec } = manifest.spec;
            manifest.spec = spec;
        }
        const declared = new k8s.apiextensions.v1.CustomResourceDefinition(
            `${op}-crd-${crd.name}`,
            manifest as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
            { parent: this, retainOnDelete },
        );
        if (crd.conversion && serving) {
            return [declared, serving.conversionPatch(`${op}-crd-conversion-${crd.name}`, crd, crd.conversion, [declared])];
        }
        return [declared];
    }

    /** Conversion for a CRD that exists without a manifest in the bundle: a server-side-apply patch. */
    private patchConversion(op: string, crd: CrdPlan, serving: WebhookServing, cluster: ClusterTarget, dependsOn: pulumi.Resource[]): void {
        if (!cluster.live || !crd.conversion) {
            pulumi.log.warn(`operator "${op}": ${skippedWithoutCluster(`the conversion webhook patch of CRD ${crd.name}`)}`, this);
            return;
        }
        serving.conversionPatch(`${op}-crd-conversion-${crd.name}`, crd, crd.conversion, dependsOn);
    }
}

/**
 * The pod spec with every env value in `secrets` (proxy URLs that may carry credentials) as a
 * Pulumi secret: encrypted in the state and shown as [secret] by a preview. The provider then keeps
 * the containers of the Deployment's outputs secret as well (pulumi-kubernetes
 * provider/pkg/provider/provider.go, `annotateSecrets`).
 */
function withSecretValues(spec: DeploymentObject["spec"]["template"]["spec"], secrets: ReadonlySet<string>): Record<string, unknown> {
    if (secrets.size === 0) {
        return spec;
    }
    return {
        ...spec,
        containers: spec.containers.map((container) => ({
            ...container,
            env: container.env?.map((e) =>
                typeof e.value === "string" && secrets.has(e.value) ? { ...e, value: pulumi.secret(e.value) } : e,
            ),
        })),
    };
}

/**
 * Every RBAC object, named as OLM names it. The per-API roles other installs of the bundle share
 * are kept on this install's removal, as OLM leaves them with the CRDs; the next install declares
 * them then, aliased to this install's resources (rename.ts). The shared serving-certificate
 * bindings are not kept: they grant what their subjects' pods need, and a binding left behind would
 * keep granting it to whatever ServiceAccount later takes such a name.
 */
function declareRbac(
    op: string,
    objects: readonly RbacObject[],
    parent: pulumi.Resource,
    dependsOn: pulumi.Resource[],
    shared: ReadonlySet<string>,
): pulumi.Resource[] {
    return objects.map((object) => {
        const logical = `${op}-${object.kind.toLowerCase()}-${object.metadata.namespace ? `${object.metadata.namespace}-` : ""}${object.metadata.name}`;
        const kept = object.kind === "ClusterRole" && shared.has(objectKey(object));
        const opts = { parent, dependsOn, ...(kept ? { retainOnDelete: true } : {}) };
        switch (object.kind) {
            case "Role":
                return new k8s.rbac.v1.Role(logical, object, opts);
            case "ClusterRole":
                return new k8s.rbac.v1.ClusterRole(logical, object, opts);
            case "RoleBinding":
                return new k8s.rbac.v1.RoleBinding(logical, object, opts);
            case "ClusterRoleBinding":
                return new k8s.rbac.v1.ClusterRoleBinding(logical, object, opts);
        }
    });
}
