/**
 * The names of the reconcile objects, one definition for the program, its config rules and the
 * policy config (`npm run policy:config` exempts the reconcile role by name). Pure.
 */

const STACK_PREFIX = "cluster-platform-";

/**
 * PKO refuses a Stack whose name is longer than this: the CRD's CEL rule
 * `size(self.metadata.name) <= 42` (pulumi/pulumi-kubernetes-operator
 * operator/api/pulumi/v1/stack_types.go, the kubebuilder XValidation marker on Stack; the
 * generated config/crd/bases/pulumi.com_stacks.yaml `x-kubernetes-validations`). PKO derives
 * other objects' names from it (the workspace StatefulSet and its pods).
 */
export const PKO_MAX_STACK_NAME = 42;

/** The PKO Stack's name for a cluster. */
export function pkoStackName(clusterName: string): string {
    return `${STACK_PREFIX}${clusterName}`;
}

/** The longest `cluster.name` whose Stack name PKO accepts (25). */
export const MAX_RECONCILED_CLUSTER_NAME = PKO_MAX_STACK_NAME - STACK_PREFIX.length;

/** Why PKO would refuse the Stack of `clusterName` (its name too long), or undefined. */
export function stackNameProblem(clusterName: string): string | undefined {
    const name = pkoStackName(clusterName);
    if (name.length <= PKO_MAX_STACK_NAME) {
        return undefined;
    }
    return `${JSON.stringify(clusterName)} is ${clusterName.length} characters, and with reconcile.enabled the PKO Stack is named ${JSON.stringify(name)} (${name.length} characters): PKO's Stack CRD refuses names over ${PKO_MAX_STACK_NAME} characters (CEL rule size(self.metadata.name) <= ${PKO_MAX_STACK_NAME}), so cluster.name may have at most ${MAX_RECONCILED_CLUSTER_NAME} characters with reconcile on`;
}

/** The reconcile ServiceAccount's ClusterRole (and its binding) for a Stack. */
export function reconcileRoleName(stackName: string): string {
    return `cluster-platform-reconcile-${stackName}`;
}

/**
 * Why the reconcile role may `bind` and `escalate` roles, which k8s-no-broad-grants forbids: the
 * program declares ClusterRoles and Roles (operators' permissions, OLM's aggregate roles), and
 * the API server lets an identity create a role only with permissions it holds itself unless it
 * may escalate, and bind a role only if it may bind (kubernetes pkg/registry/rbac/
 * escalation_check.go). Inherent to a stack that installs operators from inside the cluster.
 */
export const RECONCILE_ROLE_EXEMPTION_REASON =
    "the reconcile role runs this program from PKO's workspace, and the program declares Roles and ClusterRoles: the API server lets it create or bind those only with escalate and bind (kubernetes pkg/registry/rbac/escalation_check.go)";

/**
 * The namespaces whose pods reconcile needs, which no webhook of the stack's may gate: the
 * Stack's namespace, where PKO runs the workspace pod that runs this program
 * (pulumi/pulumi-kubernetes-operator operator/internal/controller/auto/workspace_controller.go:
 * the workspace StatefulSet goes in the Workspace's namespace, the Stack's), and PKO's own. A
 * fail-closed webhook there that breaks would stop the very runs that could repair it. None when
 * reconcile is off.
 */
export function reconcileNamespaces(settings: { enabled: boolean; namespace: string; operatorNamespace: string }): string[] {
    return settings.enabled ? [...new Set([settings.namespace, settings.operatorNamespace])] : [];
}

/**
 * Why PKO's own run may not turn reconcile off. It would delete the Stack that is running it,
 * whose finalizer PKO's controller handles only once this run is over, so the delete waits on
 * itself (pulumi/pulumi-kubernetes-operator operator/internal/controller/pulumi/
 * stack_controller.go: the finalizer `finalizer.stack.pulumi.com`, removed by the controller's
 * reconcile of the deleted Stack); and the bindings this run's ServiceAccount acts with. Turning
 * reconcile off is a run by hand: the Stack goes first (the controller, idle, drops its
 * finalizer; `destroyOnFinalize: false` keeps the stack), then the RBAC and ServiceAccount.
 */
export const RECONCILE_OFF_BY_OPERATOR =
    "false cannot be applied by the Pulumi Kubernetes Operator's own run (cluster.runByOperator): it would delete the Stack that runs it, whose finalizer waits for this very run, and the RBAC it runs with; run `pulumi up` for this stack once by hand (cluster.kubeContext or cluster.kubeconfig) to turn reconcile off";
