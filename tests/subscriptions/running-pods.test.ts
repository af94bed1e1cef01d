/**
 * No silent loss for running pods: a preview warns, naming the ClusterBundle and what running pods
 * lose, when an update deletes or renames a share or stops aggregating a bundle into a role,
 * comparing with what the previous update recorded in the `subscriptionShareGrants` output.
 */
import { runningPodLosses, shareGrantsOf } from "../../components/subscriptions/running-pods";
import { ClusterBundleDeclaration } from "../../components/subscriptions/bundles";
import { renderConfig } from "../helpers/render";

const entitlement = { name: "etc-pki-entitlement", namespace: "openshift-config" };
const repos = { name: "satellite-repos", namespace: "openshift-config" };
const declared = (name: string, extra: Partial<ClusterBundleDeclaration> = {}): ClusterBundleDeclaration => ({
    name,
    alwaysInject: false,
    entitlements: [entitlement],
    yumRepositories: [repos],
    aggregateToClusterRoles: ["admin", "edit"],
    ...extra,
});
const ENTITLEMENT_SHARE = "cluster-entitlement-etc-pki-entitlement-d0e25df8";
const REPO_SHARE = "cluster-yum-repo-satellite-repos-14d80ad7";

describe("what running pods would lose (pure)", () => {
    const before = shareGrantsOf([declared("cluster")]);

    test("GIVEN the declared bundles WHEN their grants are recorded THEN each bundle has its sorted share names and roles", () => {
        expect(before).toEqual({ cluster: { shares: [ENTITLEMENT_SHARE, REPO_SHARE], roles: ["admin", "edit"] } });
    });

    test("GIVEN no change, a new bundle or a new role WHEN compared THEN nothing is lost", () => {
        expect(runningPodLosses(before, before)).toEqual([]);
        expect(
            runningPodLosses(
                before,
                shareGrantsOf([declared("cluster", { aggregateToClusterRoles: ["admin", "edit", "view"] }), declared("other")]),
            ),
        ).toEqual([]);
        expect(runningPodLosses({}, before)).toEqual([]);
    });

    test("GIVEN a bundle removed, a reference renamed and a role dropped WHEN compared THEN one warning each names the bundle and what is lost", () => {
        expect(runningPodLosses(before, {})).toEqual([
            `ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: its shares "${ENTITLEMENT_SHARE}", "${REPO_SHARE}" are deleted, and the Shared Resource CSI driver empties their volumes in running pods that mounted them (the pods keep running without those entitlements and yum repositories)`,
        ]);
        const renamed = shareGrantsOf([
            declared("cluster", {
                yumRepositories: [{ name: "satellite-repos-v2", namespace: "openshift-config" }],
                aggregateToClusterRoles: ["admin"],
            }),
        ]);
        expect(runningPodLosses(before, renamed)).toEqual([
            `ClusterBundle "cluster": shares "${REPO_SHARE}" are deleted (a reference was removed or renamed, which renames its share); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
            `ClusterBundle "cluster" no longer aggregates to "edit": service accounts that could use it only through that role lose "use" on shares "${ENTITLEMENT_SHARE}"; the Shared Resource CSI driver re-checks access when a share or its Secret/ConfigMap changes (the next entitlement rotation) and then empties the volumes of their running pods`,
        ]);
    });
});

describe("what running pods would lose (the program, update after update)", () => {
    const config = (subscriptions: Record<string, unknown>) => ({
        cluster: { name: "prod", platform: "kubernetes", renderYamlToDirectory: "out/k8s" },
        subscriptions: { webhook: { image: "quay.io/acme/subscription-webhook:1.0" }, ...subscriptions },
    });
    const bundle = { name: "cluster", entitlements: [entitlement], yumRepositories: [repos], aggregateToClusterRoles: ["admin", "edit"] };

    test("GIVEN an update that declared a ClusterBundle WHEN the next preview renames a reference, drops a role, or disables the capability THEN it warns naming bundle and shares", async () => {
        const first = await renderConfig(config({ enabled: true, clusterBundles: [bundle] }));
        expect(first.errors).toEqual([]);
        expect(first.stackOutputs.subscriptionShareGrants).toEqual({
            cluster: { shares: [ENTITLEMENT_SHARE, REPO_SHARE], roles: ["admin", "edit"] },
        });
        expect(first.warnings.filter((w) => w.includes("running pods"))).toEqual([]);

        const changed = await renderConfig(
            config({ enabled: true, clusterBundles: [{ ...bundle, yumRepositories: [], aggregateToClusterRoles: ["admin"] }] }),
            {
                stackOutputs: first.stackOutputs,
            },
        );
        expect(changed.warnings.filter((w) => w.includes("running pods"))).toEqual([
            `subscriptions: ClusterBundle "cluster": shares "${REPO_SHARE}" are deleted (a reference was removed or renamed, which renames its share); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
            `subscriptions: ClusterBundle "cluster" no longer aggregates to "edit": service accounts that could use it only through that role lose "use" on shares "${ENTITLEMENT_SHARE}"; the Shared Resource CSI driver re-checks access when a share or its Secret/ConfigMap changes (the next entitlement rotation) and then empties the volumes of their running pods`,
        ]);

        const disabled = await renderConfig(config({ enabled: false }), { stackOutputs: first.stackOutputs });
        expect(disabled.warnings.filter((w) => w.includes("running pods"))).toEqual([
            expect.stringContaining('subscriptions: ClusterBundle "cluster" is removed from'),
        ]);
        expect(disabled.stackOutputs).not.toHaveProperty("subscriptionShareGrants");
    });
});
