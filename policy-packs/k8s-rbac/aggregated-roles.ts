/**
 * ClusterRoles aggregated into the default roles reach everyone who holds those roles: they grant
 * nothing on Secrets, and `use` on SharedSecrets only by name (seed 000's ClusterBundle roles).
 */
import { aggregatedRoleProblems } from "../../components/subscriptions/rules";
import { aggregatedInto, DEFAULT_AGGREGATION_ROLES, PolicyRule } from "../../components/shared/rbac";
import { describeObject, identityOf, isKind, k8sTypeOf, labelsOf, objectPolicy, RBAC_GROUP } from "../shared/k8s";
import { stringList } from "../shared/policy";
import { asArray, asObject, knownEntries, knownStringMap } from "../shared/values";

interface AggregatedRolesConfig {
    aggregatedRoles: string[];
}

export const aggregatedRoles = objectPolicy<AggregatedRolesConfig>(
    {
        name: "k8s-aggregated-roles",
        description:
            "ClusterRoles aggregated into admin, edit or view grant nothing on Secrets, and use on SharedSecrets only by resourceName.",
        severity: "critical",
        remediationSteps:
            "Remove the Secrets rule from the aggregated ClusterRole (grant it through a RoleBinding to whoever needs it), and list the SharedSecrets the role may use in the rule's resourceNames (a ClusterBundle's role names exactly its shares).",
        config: {
            aggregatedRoles: {
                ...stringList(
                    "Roles whose aggregated ClusterRoles are judged: admin, edit, view and the roles ClusterBundles may also aggregate to (npm run policy:config adds subscriptions.allowedAggregationRoles).",
                ),
                default: [...DEFAULT_AGGREGATION_ROLES],
            },
        },
    },
    (args, config, report) => {
        const type = k8sTypeOf(args.type);
        if (!isKind(type, RBAC_GROUP, ["ClusterRole"])) {
            return;
        }
        const into = aggregatedInto(knownEntries(knownStringMap(labelsOf(args.props))), config.aggregatedRoles);
        if (into.length === 0) {
            return;
        }
        const rules = asArray(args.props.rules).map((r) => (asObject(r) ?? {}) as Partial<PolicyRule>);
        const who = `${describeObject(type.kind, identityOf(args.props, args.name))} (aggregated into ${into.join(", ")})`;
        for (const problem of aggregatedRoleProblems(rules)) {
            report(`${who} rules[${problem.index}] ${problem.message}`);
        }
    },
);
