import { SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig } from "../helpers/render";

const STACK = (rbacNamespaces: string[]) => ({
    cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
    olm: { disableAllNamespacePermissionPromotion: true },
    operators: [
        {
            name: "widgets",
            csv: SAMPLE_CSVS.widgets,
            namespace: "widget-operator",
            createNamespace: true,
            targetNamespaces: [],
            rbacNamespaces,
        },
    ],
});
const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

describe("disableAllNamespacePermissionPromotion: what the operator is confined to", () => {
    test("GIVEN an AllNamespaces-only CSV with promotion disabled WHEN previewed THEN a warning says it expects every namespace but gets its rbacNamespaces only", async () => {
        const result = await renderConfig(STACK(["team-a"]), { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([]);
        expect(result.warnings).toContain(
            `operators[0].csv: operator "widgets": its CSV supports only AllNamespaces, and with olm.disableAllNamespacePermissionPromotion it gets permissions in rbacNamespaces (team-a) only, while it expects to watch every namespace: it may fail or see part of the cluster`,
        );
    });

    test("GIVEN rbacNamespaces one of which the cluster lacks WHEN previewed THEN the pre-flight refuses naming it, and the one that exists passes", async () => {
        const result = await renderConfig(STACK(["team-a", "team-b"]), { cluster: [namespace("team-a")] });
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].rbacNamespaces[1]: Namespace "team-b" does not exist in the cluster: operator "widgets" gets Roles and RoleBindings there (rbacNamespaces), and the stack never creates it; create it first`,
        ]);
    });
});
