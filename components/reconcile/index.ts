/**
 * Continuous reconcile on an existing engine: the Pulumi Kubernetes Operator (PKO) runs this
 * stack from inside the cluster on a schedule (`reconcile` config). The stack declares, for
 * itself: a ServiceAccount with the least RBAC that runs the program (rbac.ts), and a PKO
 * `Stack` (stack.ts) that fetches the program from git or a Flux source, refreshes, and
 * re-runs every `resyncFrequencySeconds` (schedule.ts) with the cluster reached through that
 * ServiceAccount (`cluster.inCluster: true`, set inline on the Stack). PKO itself is a
 * prerequisite (docs/reconcile.md).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { platformLabels } from "../shared/labels";
import type { PolicyRule } from "./rbac";
import { reconcileRoleName } from "./names";
import { pkoStackObject, StackObjectArgs } from "./stack";

export { derivedResyncSeconds, scheduleProblem } from "./rules";
export { recordDeclaredKinds } from "./declared-kinds";
export {
    MAX_RECONCILED_CLUSTER_NAME,
    pkoStackName,
    PKO_MAX_STACK_NAME,
    RECONCILE_ROLE_EXEMPTION_REASON,
    reconcileNamespaces,
    reconcileRoleName,
} from "./names";
export type { DeclaredKinds } from "./declared-kinds";
export { kindUseOfToken, reconcileRules } from "./rbac";
export type { KindUse, PolicyRule } from "./rbac";

export interface ReconcileArgs {
    /** The Stack object's fields (names, source, backend, environment, schedule, inline config). */
    readonly stack: StackObjectArgs;
    /** Create the namespace the Stack and its ServiceAccount live in. */
    readonly createNamespace: boolean;
    /** The ClusterRole's rules: what the program declares (resolved once the program has registered its resources). */
    readonly rules: pulumi.Input<PolicyRule[]>;
}

/**
 * `cluster-platform:reconcile:Reconcile`: the namespace (when asked), the ServiceAccount, its
 * ClusterRole of the recorded kinds and the binding, then the PKO `Stack` that runs this stack.
 */
export class Reconcile extends pulumi.ComponentResource {
    /** `<namespace>/<name>` of the PKO Stack object. */
    readonly stackObject: string;

    constructor(name: string, args: ReconcileArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:reconcile:Reconcile", name, {}, opts);
        const { namespace, serviceAccountName } = args.stack;
        const labels = platformLabels("reconcile");
        // Kept on delete: the namespace holds the Secrets the admin created for PKO's runs
        // (environment, git token), which deleting a namespace deletes with it.
        const namespaceObject = args.createNamespace
            ? [
                  new k8s.core.v1.Namespace(
                      `${name}-namespace`,
                      { metadata: { name: namespace, labels } },
                      { parent: this, retainOnDelete: true },
                  ),
              ]
            : [];
        const serviceAccount = new k8s.core.v1.ServiceAccount(
            `${name}-service-account`,
            { metadata: { name: serviceAccountName, namespace, labels } },
            { parent: this, dependsOn: namespaceObject },
        );
        const roleName = reconcileRoleName(args.stack.name);
        const role = new k8s.rbac.v1.ClusterRole(
            `${name}-cluster-role`,
            { metadata: { name: roleName, labels }, rules: args.rules },
            { parent: this },
        );
        const binding = new k8s.rbac.v1.ClusterRoleBinding(
            `${name}-cluster-role-binding`,
            {
                metadata: { name: roleName, labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
                subjects: [{ kind: "ServiceAccount", name: serviceAccountName, namespace }],
            },
            { parent: this, dependsOn: [role, serviceAccount] },
        );
        // PKO v2 runs the workspace agent with `--auth-mode kube`: every call from the operator is
        // authenticated with a TokenReview and authorized with a SubjectAccessReview made as this
        // ServiceAccount, which needs system:auth-delegator for both
        // (pulumi/pulumi-kubernetes-operator agent/pkg/server/auth.go, NewKubeAuth and its
        // ServiceAccountPermissionsErrorMessage).
        const delegator = new k8s.rbac.v1.ClusterRoleBinding(
            `${name}-auth-delegator`,
            {
                metadata: { name: `${roleName}:system:auth-delegator`, labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
                subjects: [{ kind: "ServiceAccount", name: serviceAccountName, namespace }],
            },
            { parent: this, dependsOn: [serviceAccount] },
        );
        // The Stack last: its first run needs the identity and permissions in place.
        new k8s.apiextensions.CustomResource(`${name}-stack`, pkoStackObject(args.stack) as k8s.apiextensions.CustomResourceArgs, {
            parent: this,
            dependsOn: [binding, delegator],
        });
        this.stackObject = `${namespace}/${args.stack.name}`;
        this.registerOutputs({ stackObject: this.stackObject });
    }
}
