import { DRIVER_READ_NAME } from "../../components/subscriptions/bundle-resources";
import { ClusterState } from "../../scripts/render/cluster-state";
import type { RenderResult } from "../../scripts/render/render";
import { renderFile, resourceNamed, ROOT } from "../helpers/render";
import * as path from "node:path";

/**
 * Kebab-case segments; a namespaced object as `<namespace>/<name>` (the house rule,
 * components/subscriptions/resource-names.ts). `:` is allowed inside a segment because RBAC object
 * names carry it (OLM's `<service>-system:auth-delegator`) and resource names follow object names.
 */
const HOUSE_NAME = /^[a-z0-9]([a-z0-9.:-]*[a-z0-9])?(\/[a-z0-9]([a-z0-9.:-]*[a-z0-9])?)?$/;

describe("resource names, one way across capabilities", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderFile("examples/openshift-aws.yaml", {
            cluster: ClusterState.fromFile(path.join(ROOT, "tests/fixtures/certificates/openshift-aws.cluster.yaml")),
        });
    });

    test("GIVEN the full example WHEN rendered THEN every resource name is kebab-case, a namespaced object's as <namespace>/<name>; the one exception is the read whose name tells how to get the driver", () => {
        expect(result.errors).toEqual([]);
        const names = result.resources.filter((r) => !r.type.startsWith("pulumi:")).map((r) => r.name);
        expect(names.filter((name) => !HOUSE_NAME.test(name))).toEqual([DRIVER_READ_NAME]);
    });

    test("GIVEN a stack from before the rename WHEN updated THEN ClusterBundles, shares and Bundles carry their old names as aliases, so the engine renames them in place", () => {
        const aliases = (type: string, name: string) => resourceNamed(result, type, name).options.aliases;
        expect(aliases("kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle", "clusterbundle-cluster")).toEqual([
            "clusterbundle/cluster",
        ]);
        expect(
            aliases(
                "kubernetes:sharedresource.openshift.io/v1alpha1:SharedSecret",
                "share-cluster-entitlement-etc-pki-entitlement-d0e25df8",
            ),
        ).toEqual(["share/cluster-entitlement-etc-pki-entitlement-d0e25df8"]);
        expect(aliases("kubernetes:subscription.openshift.io/v1alpha1:Bundle", "bundle-team-a/subscription")).toEqual([
            "bundle/team-a/subscription",
        ]);
    });
});
