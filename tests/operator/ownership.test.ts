/**
 * What others own stays theirs: objects the stack adopts (OLM's aggregate roles) are never
 * deleted by it and carry none of its labels; objects it patches (OLMConfig, caInjection
 * targets, labelled namespaces) are patched by `…Patch` resources, which on delete relinquish
 * exactly the fields they set (pulumi/pulumi-kubernetes provider/pkg/ssa/actions.go, Relinquish).
 */
import * as path from "node:path";
import { MANAGED_BY_LABEL, PART_OF_LABEL, CAPABILITY_LABEL } from "../../components/shared/labels";
import { ClusterState } from "../../scripts/render/cluster-state";
import type { RenderedResource, RenderResult } from "../../scripts/render/render";
import { renderOperators, scopableBundle } from "../helpers/operators";
import { renderFile, resourceNamed, ROOT } from "../helpers/render";

const STACK_LABELS = [
    MANAGED_BY_LABEL,
    PART_OF_LABEL,
    CAPABILITY_LABEL,
    "cluster-platform.io/generated-by",
    "cluster-platform.io/operator",
];
const ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole";

const patchResources = (result: RenderResult): RenderedResource[] => result.resources.filter((r) => r.type.endsWith("Patch"));
const labelsOf = (resource: RenderedResource) =>
    Object.keys((resource.inputs.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {});

describe("objects the stack adopts or patches but does not own", () => {
    let operators: RenderResult;
    beforeAll(async () => {
        operators = await renderOperators([{ name: "op", csv: scopableBundle(), namespace: "ops", targetNamespaces: ["ops"] }], {
            olm: { manageOLMConfig: true, disableAllNamespacePermissionPromotion: true },
        });
    });

    test("GIVEN OLM's aggregate roles WHEN rendered THEN they are kept on delete and carry OLM's aggregation labels only", () => {
        expect(operators.errors).toEqual([]);
        for (const name of ["olm-aggregate-olm-edit", "olm-aggregate-olm-view"]) {
            const role = resourceNamed(operators, ROLE, name);
            expect(role.options.retainOnDelete).toBe(true);
            expect(labelsOf(role).every((l) => l.startsWith("rbac.authorization.k8s.io/aggregate-to-"))).toBe(true);
        }
    });

    test("GIVEN the toggle disableOLMAggregateCRDRoles WHEN rendered THEN the roles are no longer declared (and, kept on delete, stay in the cluster)", async () => {
        const result = await renderOperators([], { olm: { disableOLMAggregateCRDRoles: true } });
        expect(result.resources.filter((r) => r.type === ROLE && r.name.startsWith("olm-aggregate-olm-"))).toEqual([]);
    });

    test("GIVEN OLMConfig and a labelled namespace WHEN rendered THEN each is a Patch that sets only its fields, with no label of the stack, and is deleted (fields relinquished), not retained", () => {
        const patches = patchResources(operators);
        expect(patches.map((p) => p.type).sort()).toEqual([
            "kubernetes:core/v1:NamespacePatch",
            "kubernetes:operators.coreos.com/v1:OLMConfigPatch",
        ]);
        for (const patch of patches) {
            expect(labelsOf(patch).filter((l) => STACK_LABELS.includes(l))).toEqual([]);
            expect(patch.options.retainOnDelete).toBe(false);
        }
        expect(
            resourceNamed(
                operators,
                "kubernetes:core/v1:NamespacePatch",
                "op-node-maintenance-operator-controller-manager-webhooks-target-ops",
            ).inputs,
        ).toEqual({
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: "ops", labels: { "webhooks.cluster-platform.io/ops.node-maintenance-operator-controller-manager": "true" } },
        });
    });

    test("GIVEN caInjection targets WHEN rendered THEN each is a Patch with no label of the stack, relinquished on delete", async () => {
        const fixtures = path.join("tests", "fixtures", "certificates");
        const result = await renderFile(path.join(fixtures, "cert-manager.yaml"), {
            cluster: ClusterState.fromFile(path.join(ROOT, fixtures, "existing-objects.yaml")),
        });
        const patches = patchResources(result);
        expect(patches.length).toBeGreaterThan(0);
        for (const patch of patches) {
            expect(labelsOf(patch)).toEqual([]);
            expect(patch.options.retainOnDelete).toBe(false);
        }
    });
});
