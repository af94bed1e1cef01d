/**
 * `cluster-platform:subscriptions:SourceSync`: the source sync's ServiceAccount and RBAC (exactly
 * `sourceSyncRules`, webhook/access.ts) and its Deployment, in the webhook's namespace. Declared only
 * when some ClusterBundle shares something.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { SourceObject } from "../../webhook/access";
import { platformLabels } from "../shared/labels";
import { SOURCE_SYNC_NAMES, sourceSyncDeploymentManifest, sourceSyncRbacManifests } from "./source-sync";

export interface SourceSyncArgs {
    /** The webhook's namespace, where the sync runs (it must exist first). */
    readonly namespace: string;
    /** The source namespace the copies go to (it must exist first). */
    readonly sourceNamespace: string;
    /** The webhook's image: the sync is the same program in another mode. */
    readonly image: pulumi.Input<string>;
    /** What to copy: every object a declared or kept share points at. */
    readonly objects: SourceObject[];
    /** The shares, whose uids the copies' ownerReferences need: the sync starts after them. */
    readonly shares: pulumi.Resource[];
}

export class SourceSync extends pulumi.ComponentResource {
    readonly deployment: k8s.apps.v1.Deployment;

    constructor(name: string, args: SourceSyncArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:subscriptions:SourceSync", name, {}, opts);
        const { namespace } = args;
        const serviceAccount = new k8s.core.v1.ServiceAccount(
            `${namespace}/${SOURCE_SYNC_NAMES.serviceAccount}`,
            { metadata: { name: SOURCE_SYNC_NAMES.serviceAccount, namespace, labels: platformLabels("subscriptions") } },
            { parent: this },
        );
        const rbac = sourceSyncRbacManifests(namespace, args.sourceNamespace, args.objects);
        const clusterRole = new k8s.rbac.v1.ClusterRole(SOURCE_SYNC_NAMES.rbac, rbac.clusterRole, { parent: this });
        const bindings: pulumi.Resource[] = [
            new k8s.rbac.v1.ClusterRoleBinding(SOURCE_SYNC_NAMES.rbac, rbac.clusterRoleBinding, {
                parent: this,
                dependsOn: [clusterRole, serviceAccount],
            }),
        ];
        for (const { role, roleBinding } of rbac.roles) {
            const name = `${role.metadata.namespace}/${SOURCE_SYNC_NAMES.rbac}`;
            const declared = new k8s.rbac.v1.Role(name, role, { parent: this });
            bindings.push(new k8s.rbac.v1.RoleBinding(name, roleBinding, { parent: this, dependsOn: [declared, serviceAccount] }));
        }
        this.deployment = new k8s.apps.v1.Deployment(
            `${namespace}/${SOURCE_SYNC_NAMES.deployment}`,
            sourceSyncDeploymentManifest({
                namespace,
                sourceNamespace: args.sourceNamespace,
                image: args.image,
                objects: args.objects,
            }) as unknown as k8s.apps.v1.DeploymentArgs,
            { parent: this, dependsOn: [serviceAccount, ...bindings, ...args.shares] },
        );
        this.registerOutputs({ deploymentName: this.deployment.metadata.name });
    }
}
