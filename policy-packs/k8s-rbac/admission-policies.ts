/**
 * Admission policies that rewrite RBAC: a MutatingAdmissionPolicy (admissionregistration.k8s.io
 * v1alpha1/v1beta1, kubernetes staging/src/k8s.io/api/admissionregistration) whose
 * matchConstraints reach RBAC objects can add subjects to bindings or rules to roles as they are
 * written, giving power that no role the stack declares shows. The policy is refused where it is
 * declared, before it exists (a binding without its policy does nothing).
 */
import { RBAC_GROUPS } from "../../components/shared/rbac-power";
import { ADMISSION_GROUP, describeObject, identityOf, isKind, k8sTypeOf, objectPolicy } from "../shared/k8s";
import { asArray, asObject } from "../shared/values";

const strings = (value: unknown) => asArray(value).filter((v): v is string => typeof v === "string");

const RBAC_RESOURCES = ["roles", "clusterroles", "rolebindings", "clusterrolebindings"];

/** The resourceRules of a policy's matchConstraints that reach RBAC objects, by index. */
export function rbacReachingRules(matchConstraints: unknown): number[] {
    const rules = asArray(asObject(matchConstraints)?.resourceRules);
    return rules.flatMap((entry, index) => {
        const rule = asObject(entry) ?? {};
        const groups = strings(rule.apiGroups);
        const resources = strings(rule.resources);
        const reachesGroup = groups.some((g) => g === "*" || (RBAC_GROUPS as readonly string[]).includes(g));
        const reachesResource = resources.some((r) => r === "*" || r === "*/*" || RBAC_RESOURCES.includes(r.split("/")[0]));
        return reachesGroup && reachesResource ? [index] : [];
    });
}

export const noAdmissionPolicyOverRbac = objectPolicy(
    {
        name: "k8s-no-mutating-policy-over-rbac",
        description:
            "No MutatingAdmissionPolicy matches Roles, ClusterRoles or their bindings (of rbac.authorization.k8s.io or authorization.openshift.io).",
        severity: "critical",
        remediationSteps:
            "Write the RBAC the stack needs as Roles and bindings, where the packs judge it; a mutating admission policy over RBAC objects changes what is granted after every policy has judged it.",
    },
    (object, _config, report) => {
        const type = k8sTypeOf(object.type);
        if (!isKind(type, ADMISSION_GROUP, ["MutatingAdmissionPolicy"])) {
            return;
        }
        const spec = asObject(object.props.spec) ?? {};
        for (const index of rbacReachingRules(spec.matchConstraints)) {
            report(
                `${describeObject(type.kind, identityOf(object.props, object.name))} spec.matchConstraints.resourceRules[${index}] matches RBAC objects: it can add subjects to bindings or rules to roles as they are written; match only the objects it must mutate`,
            );
        }
    },
);
