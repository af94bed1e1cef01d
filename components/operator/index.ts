/**
 * The operator capability (seeds 002 and 003): every operator in stack config installed from its
 * ClusterServiceVersion, plus what OLM keeps cluster-wide: its aggregate roles and, on request,
 * `OLMConfig/cluster`. index.ts runs `planOperators` (pure pre-flight) first and hands the plans
 * here; nothing in this file decides anything the plan has not.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CertificateIssuer } from "../certificates/contract";
import type { OlmConfig, OperatorConfig } from "../config/schema";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { platformLabels } from "../shared/labels";
import { dependOnCreatedNamespaces } from "../shared/namespaces";
import { OperatorInstall } from "./install";
import { olmConfigDecision } from "./olm-config";
import { installName, renameAliases } from "./rename";
import type { OperatorPlan } from "./plan";
import type { EnvVar, ProxyStatus } from "./deployments";
import { proxyEnvOf } from "./deployments";
import { olmEnvironmentDecision, OPERATOR_CONDITION_CRD, PROXY_API_VERSION, PROXY_NAME } from "./olm-environment";
import { olmAggregateRoles } from "./rbac";

export { ConversionResets } from "./conversion-reset";
export { requiredClusterObjects } from "./existing";
export { upgradeProblems } from "./upgrade";
export { planOperators, togglesOf } from "./plan";
export type { OperatorPlan, OperatorsPlan } from "./plan";

export interface OperatorsArgs {
    /** The pre-flight plans (`planOperators`), in config order. */
    readonly plans: OperatorPlan[];
    /** The `olm` config section: the RBAC toggles and manageOLMConfig. */
    readonly olm: OlmConfig;
    /** The cluster: whether OLMConfig can be patched. */
    readonly cluster: ClusterTarget;
    /** The certificate issuer for an operator (its `certificates` override, or the stack's). */
    readonly issuerFor: (operator: OperatorConfig) => CertificateIssuer;
}

/**
 * `cluster-platform:operator:Operators`: every planned operator install (`OperatorInstall`), OLM's
 * aggregate roles, `OLMConfig/cluster` when managed, and on
 * OpenShift the pre-flight reads of Proxy `cluster` and the OperatorCondition CRD.
 */
export class Operators extends pulumi.ComponentResource {
    /** The installs, by operator name. */
    readonly installs: Record<string, OperatorInstall> = {};

    constructor(name: string, args: OperatorsArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:operator:Operators", name, {}, opts);

        // OLM's aggregate-olm-edit/-view: declared (adopted where OLM made them, through the adopting
        // provider: components/shared/adoption.ts) unless toggled off. They are OLM's: a destroy or the
        // toggle releases them from the stack and leaves them in place (an adopted object is otherwise
        // deleted like any other: the provider's delete is a DELETE by name, pulumi/pulumi-kubernetes
        // provider/pkg/await/await.go, `Deletion`).
        for (const role of olmAggregateRoles(args.olm)) {
            new k8s.rbac.v1.ClusterRole(`olm-${role.metadata.name}`, role, { parent: this, retainOnDelete: true });
        }

        const decision = olmConfigDecision(args.olm, args.cluster.live, skippedWithoutCluster);
        if (decision.action !== "none") {
            pulumi.log.warn(decision.warning, this);
        }
        if (decision.action === "patch") {
            new k8s.apiextensions.CustomResourcePatch("olm-config-cluster", decision.body, { parent: this });
        }

        // OLM's environment: the cluster's proxy and the OperatorCondition API, read before anything uses them.
        const environment = olmEnvironmentDecision(args.cluster, args.plans.length, skippedWithoutCluster);
        for (const warning of environment.warnings) {
            pulumi.log.warn(warning, this);
        }
        const proxyEnv = environment.readProxy ? readProxyEnv(this) : undefined;
        const conditionCrd = environment.declareOperatorConditions
            ? [k8s.apiextensions.v1.CustomResourceDefinition.get(`olm-${OPERATOR_CONDITION_CRD}`, OPERATOR_CONDITION_CRD, { parent: this })]
            : undefined;

        // Each operator namespace once (operators sharing one agree on createNamespace).
        const namespaces = new Map<string, pulumi.Resource>();
        for (const plan of args.plans) {
            const namespace = plan.config.namespace;
            if (plan.config.createNamespace && !namespaces.has(namespace)) {
                namespaces.set(
                    namespace,
                    new k8s.core.v1.Namespace(
                        `namespace-${namespace}`,
                        { metadata: { name: namespace, labels: platformLabels("operator") } },
                        { parent: this },
                    ),
                );
            }
        }

        for (const plan of args.plans) {
            const namespace = namespaces.get(plan.config.namespace);
            const previous = plan.config.previousNames ?? [];
            this.installs[plan.config.name] = new OperatorInstall(
                installName(plan.config.name),
                {
                    plan,
                    certificates: args.issuerFor(plan.config),
                    cluster: args.cluster,
                    namespaceDependencies: namespace ? [namespace] : [],
                    proxyEnv,
                    operatorConditionDependencies: conditionCrd,
                },
                // Everything it declares in a namespace the stack creates (its own, or another
                // install's target) waits for that Namespace.
                // A renamed install keeps its resources (rename.ts).
                {
                    parent: this,
                    transformations: [
                        dependOnCreatedNamespaces(namespaces),
                        ...(previous.length > 0 ? [renameAliases(plan.config.name, previous)] : []),
                    ],
                },
            );
        }
        this.registerOutputs({});
    }
}

/** Reads OpenShift's Proxy `cluster` and turns its status into OLM's proxy variables (shown by the preview). */
function readProxyEnv(parent: pulumi.Resource): pulumi.Output<EnvVar[]> {
    // A read (`id`) whose args name `status`, so the SDK exposes it as an output (`CustomResource.get` exposes only apiVersion, kind, metadata).
    const proxy = new k8s.apiextensions.CustomResource(
        `openshift-proxy-${PROXY_NAME}`,
        { apiVersion: PROXY_API_VERSION, kind: "Proxy", status: undefined },
        { id: PROXY_NAME, parent },
    );
    const status = (proxy as unknown as { status: pulumi.Output<ProxyStatus | undefined> }).status;
    return pulumi.output(status).apply(proxyEnvOf);
}
