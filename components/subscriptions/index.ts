/**
 * Subscription injection, cluster side (seed 000): the Bundle and ClusterBundle APIs, the
 * declared bundles with their shares and ClusterRoles, the console samples on OpenShift, and the
 * deployment of the mutating webhook that injects them into pods.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget } from "../shared/cluster";
import { namespaceDeleteOptions } from "../shared/namespace-deletion";
import { declareBundle, declareClusterBundle, declareKeptShares, preflightReads } from "./bundle-resources";
import { clusterBundleRoleName } from "../../webhook/api";
import {
    BundleDeclaration,
    ClusterBundleDeclaration,
    DRIVER_ACCESS_NAME,
    driverAccessManifests,
    DriverServiceAccount,
    referencesOf,
    sourceObjectsOf,
} from "./bundles";
import { clusterBundlePolicyManifests } from "./cluster-bundle-policy";
import {
    AdmissionPolicyVersion,
    ASSUMED_SUBSCRIPTION_APIS,
    NO_CONSOLE_WARNING,
    SubscriptionClusterApis,
    UNGUARDED_WARNING,
} from "./cluster-apis";
import { bundleCrd, clusterBundleCrd, CrdManifest } from "./crds";
import type { KeptShare } from "./running-pods";
import { consoleYamlSampleManifests } from "./samples";
import { sourceNamespaceManifest } from "./source-sync";
import { SourceSync } from "./source-sync-resources";
import { bundleUserRoleManifests } from "./user-roles";
import { webhookNamespaceManifest, webhookReadScopes } from "./webhook";
import { SubscriptionWebhook, SubscriptionWebhookArgs } from "./webhook-resources";

/** The policy and binding refusing undeclared ClusterBundles, at `version`; none (with a warning) when no version is served. */
function admissionPolicy(version: AdmissionPolicyVersion | undefined, parent: pulumi.Resource): pulumi.Resource[] {
    if (version === undefined) {
        pulumi.log.warn(UNGUARDED_WARNING, parent);
        return [];
    }
    const { policy, binding } = clusterBundlePolicyManifests(version);
    // The SDK declares the v1 and v1beta1 types as aliases of each other, so a cluster upgrade
    // that moves the policy to v1 updates it in place.
    const declared =
        version === "v1"
            ? new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
                  policy.metadata.name,
                  policy as k8s.admissionregistration.v1.ValidatingAdmissionPolicyArgs,
                  { parent },
              )
            : new k8s.admissionregistration.v1beta1.ValidatingAdmissionPolicy(
                  policy.metadata.name,
                  policy as k8s.admissionregistration.v1beta1.ValidatingAdmissionPolicyArgs,
                  { parent },
              );
    const options = { parent, dependsOn: [declared] };
    const bound =
        version === "v1"
            ? new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
                  binding.metadata.name,
                  binding as k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingArgs,
                  options,
              )
            : new k8s.admissionregistration.v1beta1.ValidatingAdmissionPolicyBinding(
                  binding.metadata.name,
                  binding as k8s.admissionregistration.v1beta1.ValidatingAdmissionPolicyBindingArgs,
                  options,
              );
    return [declared, bound];
}

/** A transformation that makes a component and everything under it wait for `resources`. */
function dependingOn(resources: pulumi.Resource[]): pulumi.ResourceTransformation {
    return ({ props, opts }) => ({ props, opts: pulumi.mergeOptions(opts, { dependsOn: resources }) });
}

export { BundleDeclaration, ClusterBundleDeclaration, DriverServiceAccount, requiredObjectsOf } from "./bundles";

/** The webhook's settings (what the component derives from bundles and driver is passed on by it). */
export type SubscriptionWebhookSettings = Omit<
    SubscriptionWebhookArgs,
    "cluster" | "readScopes" | "driverNamespace" | "sourceNamespace"
> & {
    /** More namespaces whose Secrets/ConfigMaps the webhook may list (`subscriptions.webhook.readNamespaces`). */
    readNamespaces: string[];
};

export interface SubscriptionInjectionArgs {
    /** The cluster: its platform (console samples on OpenShift) and whether it can be read (pre-flight checks). */
    readonly cluster: ClusterTarget;
    /** ClusterBundles to declare (`subscriptions.clusterBundles`, validated). */
    readonly clusterBundles: ClusterBundleDeclaration[];
    /** Namespaced Bundles to declare (`subscriptions.bundles`, validated). */
    readonly bundles: BundleDeclaration[];
    /** The webhook's namespace, replicas, policy, image, certificate issuer and access. */
    readonly webhook: SubscriptionWebhookSettings;
    /** The Shared Resource CSI driver's service account (`subscriptions.sharedResourceDriver.serviceAccount`). */
    readonly driver: DriverServiceAccount;
    /**
     * What the cluster serves of the optional APIs (cluster-apis.ts, from discovery before anything is registered).
     * @default ASSUMED_SUBSCRIPTION_APIS (ValidatingAdmissionPolicy v1, console samples)
     */
    readonly apis?: SubscriptionClusterApis;
    /** The namespace the stack creates for the copies the shares point at (`subscriptions.sourceNamespace`). */
    readonly sourceNamespace: string;
    /**
     * Shares this update no longer declares that running pods still mount (running-pods.ts), kept until they end.
     * @default []
     */
    readonly keptShares?: KeptShare[];
}

/**
 * `cluster-platform:subscriptions:SubscriptionInjection`: the Bundle and ClusterBundle CRDs, the
 * declared bundles with their shares and roles (after the pre-flight reads), the console samples
 * on OpenShift, and the webhook's deployment (`SubscriptionWebhook`).
 */
export class SubscriptionInjection extends pulumi.ComponentResource {
    /** Names of the two CRDs. */
    readonly crdNames: string[];
    /** Names of the generated ClusterRoles, one per ClusterBundle. */
    readonly clusterRoleNames: string[];
    /** Names of the generated shares, one per ClusterBundle reference. */
    readonly shareNames: string[];
    /** The webhook's deployment. */
    readonly webhook: SubscriptionWebhook;
    /** The pre-flight reads of the CSI driver's CRDs (none without a live cluster); no Secret is ever read. */
    readonly preflightReads: pulumi.Resource[];
    /** The source sync (none when no ClusterBundle shares anything). */
    readonly sourceSync?: SourceSync;

    constructor(name: string, args: SubscriptionInjectionArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:subscriptions:SubscriptionInjection", name, {}, opts);

        // Every read first: a missing object fails the preview before anything is declared.
        const reads = preflightReads(args.cluster, args.clusterBundles, this);
        this.preflightReads = reads.all;
        // Kept on delete: removing the capability or destroying the stack must not delete every
        // Bundle and ClusterBundle with their API (components/shared/crd-retention.ts).
        const crd = (manifest: CrdManifest) =>
            new k8s.apiextensions.v1.CustomResourceDefinition(
                manifest.metadata.name,
                manifest as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
                { parent: this, dependsOn: reads.all, retainOnDelete: true },
            );
        const manifests = [bundleCrd(), clusterBundleCrd()];
        const [bundles, clusterBundles] = manifests.map(crd);
        this.crdNames = manifests.map((m) => m.metadata.name);

        // Only the ClusterBundles this stack declares are admitted (see cluster-bundle-policy.ts),
        // where the cluster serves a ValidatingAdmissionPolicy API (cluster-apis.ts).
        const apis = args.apis ?? ASSUMED_SUBSCRIPTION_APIS;
        const guards = admissionPolicy(apis.admissionPolicyVersion, this);
        const kept = args.keptShares ?? [];
        const keptOf = (bundle: string) => kept.filter((share) => share.reference.bundle === bundle);
        const shares: pulumi.Resource[] = [];
        for (const bundle of args.clusterBundles) {
            const declared = declareClusterBundle(
                bundle,
                [clusterBundles, ...guards],
                reads.all,
                keptOf(bundle.name),
                args.sourceNamespace,
                this,
            );
            shares.push(...declared.shares);
        }
        for (const bundle of [...new Set(kept.map((share) => share.reference.bundle))].sort()) {
            if (args.clusterBundles.some((declared) => declared.name === bundle)) continue;
            shares.push(...declareKeptShares(bundle, keptOf(bundle), args.sourceNamespace, this).shares);
        }
        for (const bundle of args.bundles) {
            declareBundle(bundle, bundles, this);
        }
        for (const role of bundleUserRoleManifests()) {
            new k8s.rbac.v1.ClusterRole(role.metadata.name, role, { parent: this, dependsOn: [bundles] });
        }
        this.clusterRoleNames = args.clusterBundles.map((b) => clusterBundleRoleName(b.name));
        this.shareNames = args.clusterBundles.flatMap(referencesOf).map((r) => r.share);
        const shared = [...args.clusterBundles.flatMap(referencesOf), ...kept.map((share) => share.reference)];

        // The copies' namespace, and the driver's access to exactly what is there.
        const sourceNamespace = new k8s.core.v1.Namespace(args.sourceNamespace, sourceNamespaceManifest(args.sourceNamespace), {
            parent: this,
            dependsOn: reads.all,
            ...namespaceDeleteOptions,
        });
        if (shared.length > 0) {
            const { role, roleBinding } = driverAccessManifests(args.sourceNamespace, shared, args.driver);
            const name = `${args.sourceNamespace}/${DRIVER_ACCESS_NAME}`;
            const driverRole = new k8s.rbac.v1.Role(name, role, { parent: this, dependsOn: [sourceNamespace] });
            new k8s.rbac.v1.RoleBinding(name, roleBinding, { parent: this, dependsOn: [driverRole] });
        }

        // The webhook waits for the bundle APIs (its informers watch them), and everything it
        // declares in its namespace waits for the namespace, including what the certificate
        // issuer and the AdmissionWebhook component create there.
        const namespace = new k8s.core.v1.Namespace(args.webhook.namespace, webhookNamespaceManifest(args.webhook.namespace), {
            parent: this,
            dependsOn: reads.all,
            ...namespaceDeleteOptions,
        });
        this.webhook = new SubscriptionWebhook(
            "subscription-webhook",
            {
                ...args.webhook,
                cluster: args.cluster,
                readScopes: webhookReadScopes(args.sourceNamespace, shared, args.bundles, args.webhook.readNamespaces),
                driverNamespace: args.driver.namespace,
                sourceNamespace: args.sourceNamespace,
            },
            { parent: this, transformations: [dependingOn([namespace, sourceNamespace, bundles, clusterBundles])] },
        );
        if (shared.length > 0) {
            this.sourceSync = new SourceSync(
                "source-sync",
                {
                    namespace: args.webhook.namespace,
                    sourceNamespace: args.sourceNamespace,
                    image: args.webhook.image,
                    objects: sourceObjectsOf(shared),
                    shares,
                },
                { parent: this, transformations: [dependingOn([namespace, sourceNamespace])] },
            );
        }

        if (args.cluster.platform === "openshift" && !apis.consoleSamples) pulumi.log.warn(NO_CONSOLE_WARNING, this);
        if (args.cluster.platform === "openshift" && apis.consoleSamples) {
            for (const sample of consoleYamlSampleManifests()) {
                new k8s.apiextensions.CustomResource(sample.metadata.name, sample, { parent: this, dependsOn: [bundles, clusterBundles] });
            }
        }

        this.registerOutputs({ crdNames: this.crdNames, clusterRoleNames: this.clusterRoleNames, shareNames: this.shareNames });
    }
}
