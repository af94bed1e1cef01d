/**
 * The cluster objects operator installs need but never create, for the pre-flight existence
 * check (components/shared/object-presence.ts). A namespace the stack only labels must exist:
 * the label is a server-side-apply NamespacePatch, and the Kubernetes provider applies a Patch
 * whatever the object's state (pulumi/pulumi-kubernetes provider/pkg/await/await.go, Creation:
 * `ServerSideApply && (UpsertExistingObjects || IsPatchResource)` applies instead of creating),
 * so a patch of a missing namespace would create a bare one that no destroy removes. Likewise
 * OLMConfig/cluster, which the stack patches and never creates.
 */
import type { OlmConfig, OperatorConfig } from "../config/schema";
import type { RequiredObject } from "../shared/object-refs";
import { formatPath } from "../shared/problems";
import { OLM_CONFIG_API_VERSION, OLM_CONFIG_NAME, olmConfigDecision } from "./olm-config";

const namespaceRef = (name: string) => ({ apiVersion: "v1", kind: "Namespace", plural: "namespaces", name });

export function requiredClusterObjects(operators: readonly OperatorConfig[], olm: OlmConfig): RequiredObject[] {
    const created = new Set(operators.filter((o) => o.createNamespace).map((o) => o.namespace));
    const required: RequiredObject[] = [];
    operators.forEach((operator, i) => {
        if (!operator.createNamespace) {
            required.push({
                ref: namespaceRef(operator.namespace),
                path: formatPath(["operators", i, "namespace"]),
                why: `operator ${JSON.stringify(operator.name)} runs there and createNamespace is false; create it, or set createNamespace`,
            });
        }
        operator.targetNamespaces.forEach((namespace, j) => {
            if (!created.has(namespace)) {
                required.push({
                    ref: namespaceRef(namespace),
                    path: formatPath(["operators", i, "targetNamespaces", j]),
                    why: `operator ${JSON.stringify(operator.name)} targets it, and the stack labels or fills target namespaces but never creates them (a label patch would create a bare namespace); create it first`,
                });
            }
        });
        // Roles and bindings go there (with promotion disabled, or as extra namespaces): a RoleBinding in a missing namespace fails the update half-way.
        (operator.rbacNamespaces ?? []).forEach((namespace, j) => {
            if (!created.has(namespace)) {
                required.push({
                    ref: namespaceRef(namespace),
                    path: formatPath(["operators", i, "rbacNamespaces", j]),
                    why: `operator ${JSON.stringify(operator.name)} gets Roles and RoleBindings there (rbacNamespaces), and the stack never creates it; create it first`,
                });
            }
        });
    });
    if (olmConfigDecision(olm, true, (what) => what).action === "patch") {
        required.push({
            ref: { apiVersion: OLM_CONFIG_API_VERSION, kind: "OLMConfig", plural: "olmconfigs", name: OLM_CONFIG_NAME },
            path: "olm.manageOLMConfig",
            why: "the stack patches OLM's OLMConfig and never creates it (is OLM installed?); or set manageOLMConfig false",
        });
    }
    return required;
}
