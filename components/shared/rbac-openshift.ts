/**
 * OpenShift's legacy RBAC kinds (`authorization.openshift.io/v1` Role, ClusterRole, RoleBinding,
 * ClusterRoleBinding) normalised to what openshift-apiserver stores for them: it serves those
 * kinds as a proxy over the Kubernetes RBAC objects, converting each way. Facts from
 * openshift/openshift-apiserver (commit 56aa2d9):
 *
 * - pkg/authorization/apis/authorization/v1/defaults.go `SetDefaults_PolicyRule`: a rule with
 *   no apiGroups, verbs ["*"] and resources ["*"] (and nothing else) means every group
 *   (apiGroups ["*"]); any other rule with resources and no apiGroups means the core group [""];
 * - pkg/authorization/apis/authorization/rbacconversion/conversion.go
 *   `Convert_api_PolicyRules_To_rbac_PolicyRules`: a rule with attributeRestrictions is dropped
 *   (the authorizer never honoured it); a rule with both resources and nonResourceURLs becomes two
 *   rules; `convert_api_Subjects_To_rbac_Subjects`: ServiceAccount keeps its namespace,
 *   User/SystemUser become User, Group/SystemGroup become Group, any other kind is refused;
 *   `convert_api_RoleRef_To_rbac_RoleRef`: a roleRef with a namespace names a Role, without one a
 *   ClusterRole; a ClusterRoleBinding whose roleRef has a namespace, or a RoleBinding whose
 *   roleRef names another namespace, is refused;
 * - pkg/authorization/apis/authorization/v1/conversion.go `Convert_v1_RoleBinding_To_…`: when
 *   `userNames` or `groupNames` is set (even empty) the subjects are rebuilt from them alone
 *   (helpers.go `BuildSubjects`: a `system:serviceaccount:<ns>:<name>` user becomes that
 *   ServiceAccount).
 *
 * Pure: no Pulumi imports.
 */
import type { PolicyRule, RbacSubject } from "./rbac";

type Json = Record<string, unknown>;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
const present = (value: unknown): boolean => Array.isArray(value);

/** One legacy PolicyRule as the Kubernetes RBAC rules openshift-apiserver stores for it (none, one or two). */
export function normalizeLegacyRule(rule: Json): Partial<PolicyRule>[] {
    if (rule.attributeRestrictions !== undefined && rule.attributeRestrictions !== null) {
        return [];
    }
    const verbs = strings(rule.verbs);
    const resources = strings(rule.resources);
    const resourceNames = strings(rule.resourceNames);
    const nonResourceURLs = strings(rule.nonResourceURLs);
    let apiGroups = present(rule.apiGroups) ? strings(rule.apiGroups) : undefined;
    const oldAllowAll =
        apiGroups === undefined &&
        verbs.length === 1 &&
        verbs[0] === "*" &&
        resources.length === 1 &&
        resources[0] === "*" &&
        resourceNames.length === 0 &&
        nonResourceURLs.length === 0;
    if (oldAllowAll) {
        apiGroups = ["*"];
    }
    if (resources.length > 0 && (apiGroups ?? []).length === 0) {
        apiGroups = [""];
    }
    const isResource = (apiGroups ?? []).length > 0 || resources.length > 0 || resourceNames.length > 0;
    const isNonResource = nonResourceURLs.length > 0;
    if (isResource && isNonResource) {
        return [
            { verbs, apiGroups: apiGroups ?? [], resources, resourceNames },
            { verbs, nonResourceURLs },
        ];
    }
    return [{ verbs, apiGroups: apiGroups ?? [], resources, resourceNames, nonResourceURLs }];
}

export function normalizeLegacyRules(rules: unknown): Partial<PolicyRule>[] {
    return (Array.isArray(rules) ? rules : []).flatMap((rule) => normalizeLegacyRule((rule ?? {}) as Json));
}

const SA_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** A legacy binding normalised, or the reason openshift-apiserver refuses it. */
export type LegacyBinding =
    { ok: true; roleRef: { kind: "Role" | "ClusterRole"; name: string }; subjects: RbacSubject[] } | { ok: false; reason: string };

/** A legacy RoleBinding (with its namespace) or ClusterRoleBinding (namespace undefined) as RBAC. */
export function normalizeLegacyBinding(binding: Json, namespace: string | undefined): LegacyBinding {
    const roleRef = (binding.roleRef ?? {}) as Json;
    const refNamespace = typeof roleRef.namespace === "string" ? roleRef.namespace : "";
    if (namespace === undefined && refNamespace !== "") {
        return {
            ok: false,
            reason: `roleRef names namespace ${JSON.stringify(refNamespace)}: a ClusterRoleBinding may only reference a ClusterRole`,
        };
    }
    if (namespace !== undefined && refNamespace !== "" && refNamespace !== namespace) {
        return {
            ok: false,
            reason: `roleRef names namespace ${JSON.stringify(refNamespace)}, not the binding's ${JSON.stringify(namespace)}`,
        };
    }
    let subjects: RbacSubject[];
    if (present(binding.userNames) || present(binding.groupNames)) {
        subjects = [
            ...strings(binding.userNames).map((user): RbacSubject => {
                const sa = SA_USER.exec(user);
                return sa ? { kind: "ServiceAccount", namespace: sa[1], name: sa[2] } : { kind: "User", name: user };
            }),
            ...strings(binding.groupNames).map((group): RbacSubject => ({ kind: "Group", name: group })),
        ];
    } else {
        subjects = [];
        for (const entry of Array.isArray(binding.subjects) ? binding.subjects : []) {
            const subject = (entry ?? {}) as Json;
            const name = String(subject.name ?? "");
            switch (subject.kind) {
                case "ServiceAccount":
                    subjects.push({
                        kind: "ServiceAccount",
                        name,
                        ...(typeof subject.namespace === "string" ? { namespace: subject.namespace } : {}),
                    });
                    break;
                case "User":
                case "SystemUser":
                    subjects.push({ kind: "User", name });
                    break;
                case "Group":
                case "SystemGroup":
                    subjects.push({ kind: "Group", name });
                    break;
                default:
                    return { ok: false, reason: `subject kind ${JSON.stringify(subject.kind)} is not one openshift-apiserver converts` };
            }
        }
    }
    return { ok: true, roleRef: { kind: refNamespace === "" ? "ClusterRole" : "Role", name: String(roleRef.name ?? "") }, subjects };
}
