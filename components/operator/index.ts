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
import { namespaceDeleteOptions } from "../shared/namespace-deletion";
import { OperatorInstall } from "./install";
import { olmConfigDecision } from "./olm-config";
import { allPreviousNames, inheritedNames, installName, InstallRecords, installRecords, renameAliases } from "./rename";
import { shareableKeys } from "./shared-objects";
import { type OperatorPlan, webhookGenerationName } from "./plan";
import type { EnvVar } from "./deployments";
import { olmEnvironmentDecision, OPERATOR_CONDITION_CRD } from "./olm-environment";
import { olmAggregateRoles } from "./rbac";

export { ConversionResets } from "./conversion-reset";
export { requiredClusterObjects } from "./existing";
export { upgradeProblems } from "./upgrade";
export { planOperators, togglesOf } from "./plan";
export { bundleApiProblems } from "./bundle-objects";
export { minKubeVersionProblems } from "./min-kube-version";
export { nativeApiProblems } from "./native-apis";
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
    /**
     * OLM's proxy variables from OpenShift's Proxy `cluster`, read by the pre-flight (deployments.ts,
     * `proxyEnvOf`). @default none: no proxy variables
     */
    readonly proxyEnv?: readonly EnvVar[];
    /**
     * The previous update's installs (`operatorInstalls`), for the renames and hand-overs it
     * implies (rename.ts). @default none: only `previousNames` alias
     */
    readonly previousInstalls?: InstallRecords;
}

/**
 * `cluster-platform:operator:Operators`: every planned operator install (`OperatorInstall`), OLM's
 * aggregate roles, `OLMConfig/cluster` when managed, and on
 * OpenShift the read of the OperatorCondition CRD (the cluster's proxy comes from the pre-flight).
 */
export class Operators extends pulumi.ComponentResource {
    /** The installs, by operator name. */
    readonly installs: Record<string, OperatorInstall> = {};
    /** What this update records of its installs, for the next one (the `operatorInstalls` output). */
    readonly records: InstallRecords;

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
                        { parent: this, ...namespaceDeleteOptions },
                    ),
                );
            }
        }

        const current = args.plans.map((plan) => ({ ...plan.config, csv: plan.csvName }));
        const inherited = inheritedNames(args.previousInstalls, current);
        this.records = installRecords(current, inherited);
        for (const plan of args.plans) {
            const namespace = namespaces.get(plan.config.namespace);
            const from = inherited.get(plan.config.name) ?? { previousNames: [], sharedFrom: [] };
            if (from.renames !== undefined) {
                pulumi.log.warn(renameNote(plan.config.name, from.renames), this);
            }
            const previous = allPreviousNames(current[args.plans.indexOf(plan)], from);
            this.installs[plan.config.name] = new OperatorInstall(
                installName(plan.config.name),
                {
                    plan: previous.length > 0 ? { ...plan, webhookGeneration: generationNamedAfter(plan, previous[0]) } : plan,
                    certificates: args.issuerFor(plan.config),
                    cluster: args.cluster,
                    namespaceDependencies: namespace ? [namespace] : [],
                    proxyEnv: args.proxyEnv,
                    operatorConditionDependencies: conditionCrd,
                },
                // Everything it declares in a namespace the stack creates (its own, or another
                // install's target) waits for that Namespace.
                // A renamed install keeps its resources (rename.ts).
                {
                    parent: this,
                    transformations: [
                        dependOnCreatedNamespaces(namespaces),
                        ...(previous.length > 0 || from.sharedFrom.length > 0
                            ? [renameAliases(plan.config.name, previous, from.sharedFrom, new Set(shareableKeys(plan)))]
                            : []),
                    ],
                },
            );
        }
        this.registerOutputs({});
    }
}

/** What the preview says of an install taken as the rename of one the previous update installed. */
function renameNote(operator: string, renamed: string): string {
    return `operator ${JSON.stringify(operator)}: taken as the rename of operator ${JSON.stringify(renamed)}, which the previous update installed in the same namespace and this config no longer names: its resources keep that install's objects (aliases), and the stack remembers the name; set operators[].previousNames to say so, or remove one install in an update of its own and add the other in the next`;
}

/** The webhook generation under the install's first name, as the running webhooks have it. */
function generationNamedAfter(plan: OperatorPlan, first: string): OperatorPlan["webhookGeneration"] {
    return { ...plan.webhookGeneration, name: webhookGenerationName(first, plan.webhookGeneration.hash) };
}
