/**
 * The subscription injection webhook's deployment (seed 000, "Subscription Injection Mutating
 * Admission Webhook"): its ServiceAccount with exactly the access the server needs, the serving
 * certificate, the Deployment and its PodDisruptionBudget, the CA ConfigMap, and the mutating
 * webhook in front of it (through the generic AdmissionWebhook component).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { webhookClusterRules } from "../../webhook/access";
import { WEBHOOK_SERVER } from "../../webhook/api";
import { AdmissionWebhook, webhookCertificateVolumes } from "../admission-webhook";
import { CertificateIssuer, injectCaBundle } from "../certificates";
import { CONFIGMAP_BUNDLE_KEY } from "../certificates/rules";
import { ClusterTarget } from "../shared/cluster";
import { platformLabels } from "../shared/labels";
import {
    CERT_MANAGER_NAMESPACES,
    WEBHOOK_MATCH_LABELS,
    WEBHOOK_NAMES,
    webhookDefinition,
    webhookDeploymentManifest,
    webhookNamespaceExclusions,
    webhookPodDisruptionBudgetManifest,
    readNamespacesValue,
    WebhookReadScope,
} from "./webhook";

export interface SubscriptionWebhookArgs {
    /** The cluster: its platform decides which namespaces the webhook never sees. */
    readonly cluster: ClusterTarget;
    /** The webhook's namespace (`subscriptions.namespace`); it must exist before this component's objects. */
    readonly namespace: string;
    /** Webhook replicas (`subscriptions.webhook.replicas`). */
    readonly replicas: number;
    /** What the API server does when the webhook cannot answer. */
    readonly failurePolicy: "Fail" | "Ignore";
    /** Admission timeout in seconds. */
    readonly timeoutSeconds: number;
    /** The webhook image: a reference from config, or the image capability's `imageRef` Output. */
    readonly image: pulumi.Input<string>;
    /** Issues the serving certificate and the CA bundle in the stack's certificates mode. */
    readonly certificates: CertificateIssuer;
    /** Namespaces whose Secrets/ConfigMaps the server reads (listed or by name): one Role each. */
    readonly readScopes: WebhookReadScope[];
    /** The namespace of the copies ClusterBundles share (`subscriptions.sourceNamespace`). */
    readonly sourceNamespace: string;
    /** The Shared Resource CSI driver's namespace: excluded, its pods mount what the webhook injects. */
    readonly driverNamespace: string;
    /** More namespaces the webhook never sees (`subscriptions.webhook.excludedNamespaces`). */
    readonly excludedNamespaces: string[];
}

/**
 * `cluster-platform:subscriptions:SubscriptionWebhook`: the webhook's namespace objects,
 * ServiceAccount and RBAC, serving certificate, Deployment, PodDisruptionBudget and CA
 * ConfigMap, and the mutating webhook in front of it (`AdmissionWebhook`).
 */
export class SubscriptionWebhook extends pulumi.ComponentResource {
    /** The webhook Deployment. */
    readonly deployment: k8s.apps.v1.Deployment;
    /** The Service, webhook configuration and namespace labels. */
    readonly admissionWebhook: AdmissionWebhook;
    /** The ConfigMap publishing the CA of the serving certificate (not declared in cert-manager mode). */
    readonly caConfigMap?: k8s.core.v1.ConfigMap;

    constructor(name: string, args: SubscriptionWebhookArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:subscriptions:SubscriptionWebhook", name, {}, opts);
        const { namespace } = args;
        const labels = platformLabels("subscriptions");

        const serviceAccount = new k8s.core.v1.ServiceAccount(
            `${namespace}/${WEBHOOK_NAMES.serviceAccount}`,
            { metadata: { name: WEBHOOK_NAMES.serviceAccount, namespace, labels } },
            { parent: this },
        );
        const clusterRole = new k8s.rbac.v1.ClusterRole(
            WEBHOOK_NAMES.clusterRole,
            { metadata: { name: WEBHOOK_NAMES.clusterRole, labels }, rules: webhookClusterRules() },
            { parent: this },
        );
        // Secret/ConfigMap reads only where bundles point: namespace-wide in the source namespace and
        // where an admin lists, by name elsewhere. The Roles follow the config: a namespace no bundle
        // references any more loses its Role.
        const readBindings = args.readScopes.map((scope) => {
            const metadata = { name: WEBHOOK_NAMES.keyReadRole, namespace: scope.namespace, labels };
            const role = new k8s.rbac.v1.Role(
                `${scope.namespace}/${WEBHOOK_NAMES.keyReadRole}`,
                { metadata, rules: scope.rules },
                { parent: this },
            );
            return new k8s.rbac.v1.RoleBinding(
                `${scope.namespace}/${WEBHOOK_NAMES.keyReadRole}`,
                {
                    metadata,
                    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: WEBHOOK_NAMES.keyReadRole },
                    subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAMES.serviceAccount, namespace }],
                },
                { parent: this, dependsOn: [role, serviceAccount] },
            );
        });
        const binding = new k8s.rbac.v1.ClusterRoleBinding(
            WEBHOOK_NAMES.clusterRoleBinding,
            {
                metadata: { name: WEBHOOK_NAMES.clusterRoleBinding, labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: WEBHOOK_NAMES.clusterRole },
                subjects: [{ kind: "ServiceAccount", name: WEBHOOK_NAMES.serviceAccount, namespace }],
            },
            { parent: this, dependsOn: [clusterRole, serviceAccount] },
        );

        const servingCertificate = args.certificates.servingCertificate(
            {
                serviceName: WEBHOOK_NAMES.service,
                namespace,
                secretName: WEBHOOK_NAMES.tlsSecret,
                resourcePrefix: WEBHOOK_NAMES.deployment,
            },
            this,
        );
        const deploymentManifest = webhookDeploymentManifest({
            namespace,
            replicas: args.replicas,
            image: args.image,
            certificateVolumes: webhookCertificateVolumes(WEBHOOK_NAMES.tlsSecret),
            podAnnotations: servingCertificate.podTemplateAnnotations,
            readNamespaces: readNamespacesValue(args.readScopes),
            sourceNamespace: args.sourceNamespace,
        });
        this.deployment = new k8s.apps.v1.Deployment(
            `${namespace}/${WEBHOOK_NAMES.deployment}`,
            deploymentManifest as unknown as k8s.apps.v1.DeploymentArgs,
            // The server starts only with its identity, its access and its certificate in place.
            { parent: this, dependsOn: [serviceAccount, binding, ...readBindings, ...servingCertificate.dependencies] },
        );
        new k8s.policy.v1.PodDisruptionBudget(
            `${namespace}/${WEBHOOK_NAMES.podDisruptionBudget}`,
            webhookPodDisruptionBudgetManifest(namespace) as k8s.policy.v1.PodDisruptionBudgetArgs,
            { parent: this },
        );

        const exclusions = webhookNamespaceExclusions(args.cluster.platform, namespace, [
            ...(args.certificates.mode === "cert-manager" ? CERT_MANAGER_NAMESPACES : []),
            args.driverNamespace,
            ...args.excludedNamespaces,
        ]);
        this.admissionWebhook = new AdmissionWebhook(
            WEBHOOK_NAMES.deployment,
            {
                backend: {
                    deploymentName: WEBHOOK_NAMES.deployment,
                    namespace,
                    matchLabels: { ...WEBHOOK_MATCH_LABELS },
                    servicePort: 443,
                    targetPort: WEBHOOK_SERVER.portName,
                },
                webhooks: [webhookDefinition(args.failurePolicy, args.timeoutSeconds)],
                targetNamespaces: undefined,
                excludedNamespaces: exclusions.names,
                excludedNamespaceLabels: exclusions.labels,
                certificates: args.certificates,
                servingCertificate,
                deployment: this.deployment,
                cluster: args.cluster,
                configurationName: WEBHOOK_NAMES.deployment,
            },
            { parent: this },
        );

        // The seed's "ConfigMap where the service serving CA can be injected": the same bundle as
        // the webhook's caBundle, from the same source. Self-signed: written by the stack from the
        // CA the webhook configuration gets. service-ca: the operator injects both (and rewrites
        // both on rotation). cert-manager: its cainjector never writes ConfigMaps, so none is
        // declared; the CA is in the serving Secret's ca.crt.
        if (args.certificates.mode === "cert-manager") {
            pulumi.log.warn(
                `subscription webhook: no CA ConfigMap ${namespace}/${WEBHOOK_NAMES.caConfigMap} in cert-manager mode (cert-manager's cainjector does not inject ConfigMaps); the CA is the ca.crt key of Secret ${namespace}/${WEBHOOK_NAMES.tlsSecret}, which trust-manager can distribute`,
                this,
            );
        } else {
            const injected = injectCaBundle(
                "ConfigMap",
                { apiVersion: "v1", kind: "ConfigMap", metadata: { name: WEBHOOK_NAMES.caConfigMap, namespace, labels } },
                args.certificates.caBundleFor(servingCertificate),
            );
            this.caConfigMap = new k8s.core.v1.ConfigMap(
                `${namespace}/${WEBHOOK_NAMES.caConfigMap}`,
                injected.object as k8s.core.v1.ConfigMapArgs,
                {
                    parent: this,
                    ignoreChanges: injected.ignoreChanges.length > 0 ? injected.ignoreChanges : undefined,
                },
            );
        }

        this.registerOutputs({
            deploymentName: this.deployment.metadata.name,
            caConfigMap: this.caConfigMap ? `${namespace}/${WEBHOOK_NAMES.caConfigMap}` : undefined,
            caConfigMapKey: CONFIGMAP_BUNDLE_KEY,
        });
    }
}
