/**
 * Running pods keep their entitlements (issue 37 point 4): a share an update drops (its ClusterBundle
 * removed, a reference removed or renamed) is kept, with its ClusterRole's `use`, while a running pod
 * mounts it; the preview names bundle, shares and pods; `removedShares: deleteAtOnce` deletes at once.
 * What the previous update declared comes from its `subscriptionShareGrants` output.
 */
import { ClusterBundleDeclaration } from "../../components/subscriptions/bundles";
import { planRemovedShares, podSharesOnly, shareGrantsOf } from "../../components/subscriptions/running-pods";
import type { KubeObject } from "../../scripts/render/cluster-state";
import { MINIMAL, manifestsNamed, renderConfig } from "../helpers/render";

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
const SOURCES = {
    [ENTITLEMENT_SHARE]: { kind: "Secret", namespace: "openshift-config", name: "etc-pki-entitlement" },
    [REPO_SHARE]: { kind: "ConfigMap", namespace: "openshift-config", name: "satellite-repos" },
};

/** A pod as the API server lists it, mounting these shares through the driver's CSI volumes. */
function podMounting(namespace: string, name: string, shares: string[], phase = "Running"): KubeObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { namespace, name },
        spec: {
            containers: [{ name: "app", image: "ubi9" }],
            volumes: [
                { name: "kube-api-access-abcde", projected: { sources: [] } },
                ...shares.map((share, i) => ({
                    name: `subscription-share-${i}`,
                    csi: {
                        driver: "csi.sharedresource.openshift.io",
                        readOnly: true,
                        volumeAttributes: share.includes("yum-repo") ? { sharedConfigMap: share } : { sharedSecret: share },
                    },
                })),
            ],
        },
        status: { phase },
    };
}

describe("shares running pods mount (pure)", () => {
    const before = shareGrantsOf([declared("cluster")]);

    test("GIVEN the declared bundles WHEN their grants are recorded THEN each bundle has its sorted share names, roles and what each share copies", () => {
        expect(before).toEqual({ cluster: { shares: [ENTITLEMENT_SHARE, REPO_SHARE], roles: ["admin", "edit"], sources: SOURCES } });
    });

    test("GIVEN no change, a new bundle or a new role WHEN planned THEN nothing is kept or deleted and nothing is said", () => {
        for (const now of [
            [declared("cluster")],
            [declared("cluster", { aggregateToClusterRoles: ["admin", "edit", "view"] }), declared("other")],
        ]) {
            const plan = planRemovedShares(before, now, "keepWhileInUse", []);
            expect([plan.kept, plan.warnings]).toEqual([[], []]);
            expect(plan.grants).toEqual(shareGrantsOf(now));
        }
        expect(planRemovedShares(undefined, [declared("cluster")], "keepWhileInUse", []).warnings).toEqual([]);
    });

    test("GIVEN a removed ClusterBundle whose entitlement share a running pod mounts WHEN planned THEN that share is kept naming the pod, the unused one deleted, and the grants still carry the kept share", () => {
        const pods = [
            podMounting("team-a", "builder-1", [ENTITLEMENT_SHARE]),
            podMounting("team-a", "done", [REPO_SHARE], "Succeeded"),
            podMounting("team-b", "plain", []),
        ];
        const plan = planRemovedShares(before, [], "keepWhileInUse", pods);
        expect(plan.kept).toEqual([
            {
                reference: {
                    bundle: "cluster",
                    source: "entitlements",
                    kind: "Secret",
                    ref: { namespace: "openshift-config", name: "etc-pki-entitlement" },
                    share: ENTITLEMENT_SHARE,
                },
                roles: ["admin", "edit"],
                pods: ["team-a/builder-1"],
            },
        ]);
        expect(plan.warnings).toEqual([
            `ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: share "${ENTITLEMENT_SHARE}" is kept while running pods mount it ("team-a/builder-1"), with its ClusterRole's use, its copy and the driver's access; the first update after they end deletes it`,
            `ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: shares "${REPO_SHARE}" are deleted (no running pod mounts them); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
        expect(plan.grants).toEqual({
            cluster: {
                shares: [ENTITLEMENT_SHARE],
                roles: ["admin", "edit"],
                sources: { [ENTITLEMENT_SHARE]: SOURCES[ENTITLEMENT_SHARE] },
            },
        });
        // The next update, the pod gone: the kept share goes too.
        const after = planRemovedShares(plan.grants, [], "keepWhileInUse", []);
        expect([after.kept, after.grants]).toEqual([[], {}]);
        expect(after.warnings).toEqual([
            `ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: shares "${ENTITLEMENT_SHARE}" are deleted (no running pod mounts them); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
    });

    test("GIVEN a renamed reference under deleteAtOnce, an output without sources, and no cluster to ask WHEN planned THEN deleteAtOnce and unknown sources delete, and an unreachable cluster keeps every share it can", () => {
        const renamed = [declared("cluster", { yumRepositories: [{ name: "satellite-repos-v2", namespace: "openshift-config" }] })];
        const pods = [podMounting("team-a", "builder-1", [REPO_SHARE])];
        expect(planRemovedShares(before, renamed, "deleteAtOnce", pods)).toMatchObject({
            kept: [],
            warnings: [
                `ClusterBundle "cluster": shares "${REPO_SHARE}" are deleted (subscriptions.removedShares: deleteAtOnce); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
            ],
        });
        const old = { cluster: { shares: [ENTITLEMENT_SHARE, REPO_SHARE], roles: ["admin"] } };
        expect(planRemovedShares(old, renamed, "keepWhileInUse", pods).warnings).toEqual([
            `ClusterBundle "cluster": shares "${REPO_SHARE}" are deleted (the previous update did not record what they copy, so they cannot be kept); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
        const unknown = planRemovedShares(before, renamed, "keepWhileInUse", "unknown");
        expect(unknown.kept.map((share) => share.reference.share)).toEqual([REPO_SHARE]);
        expect(unknown.grants.cluster.shares).toEqual([...shareGrantsOf(renamed).cluster.shares, REPO_SHARE].sort());
    });

    test("GIVEN a role dropped from aggregateToClusterRoles WHEN planned THEN one warning names the role and the shares its holders lose", () => {
        expect(
            planRemovedShares(before, [declared("cluster", { aggregateToClusterRoles: ["admin"] })], "keepWhileInUse", []).warnings,
        ).toEqual([
            `ClusterBundle "cluster" no longer aggregates to "edit": service accounts that could use it only through that role lose "use" on shares "${ENTITLEMENT_SHARE}", "${REPO_SHARE}"; the Shared Resource CSI driver re-checks access when a share or its Secret/ConfigMap changes (the next entitlement rotation) and then empties the volumes of their running pods`,
        ]);
    });

    test("GIVEN listed pods WHEN reduced as their pages arrive THEN only running pods with share volumes remain, with just those volumes", () => {
        expect(podSharesOnly(podMounting("team-a", "p", [ENTITLEMENT_SHARE]))).toEqual({
            metadata: { namespace: "team-a", name: "p" },
            spec: {
                volumes: [{ csi: { driver: "csi.sharedresource.openshift.io", volumeAttributes: { sharedSecret: ENTITLEMENT_SHARE } } }],
            },
        });
        expect(podSharesOnly(podMounting("team-a", "p", [ENTITLEMENT_SHARE], "Failed"))).toBeUndefined();
        expect(podSharesOnly(podMounting("team-a", "p", []))).toBeUndefined();
    });
});

describe("shares running pods mount (the program, update after update)", () => {
    const secret = (namespace: string, name: string, kind = "Secret") => ({ apiVersion: "v1", kind, metadata: { namespace, name } });
    const cluster: KubeObject[] = [
        secret("openshift-config", "etc-pki-entitlement"),
        secret("openshift-config", "satellite-repos", "ConfigMap"),
        { apiVersion: "storage.k8s.io/v1", kind: "CSIDriver", metadata: { name: "csi.sharedresource.openshift.io" } },
        ...["sharedsecrets", "sharedconfigmaps"].map((plural) => ({
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: { name: `${plural}.sharedresource.openshift.io` },
        })),
    ];
    const config = (subscriptions: Record<string, unknown>) => ({
        ...MINIMAL,
        subscriptions: { webhook: { image: "quay.io/acme/subscription-webhook:1.0" }, ...subscriptions },
    });
    const bundle = { name: "cluster", entitlements: [entitlement], yumRepositories: [repos], aggregateToClusterRoles: ["admin", "edit"] };

    test("GIVEN a ClusterBundle a running pod uses WHEN the next update removes it THEN its used share, ClusterRole and copy stay (no ClusterBundle), the preview says why, and the update after the pod ends deletes them", async () => {
        const first = await renderConfig(config({ enabled: true, clusterBundles: [bundle] }), { cluster });
        expect(first.errors).toEqual([]);
        expect(first.stackOutputs.subscriptionShareGrants).toEqual({
            cluster: { shares: [ENTITLEMENT_SHARE, REPO_SHARE], roles: ["admin", "edit"], sources: SOURCES },
        });

        const running = [...cluster, podMounting("team-a", "builder-1", [ENTITLEMENT_SHARE])];
        const removed = await renderConfig(config({ enabled: true, clusterBundles: [] }), {
            cluster: running,
            stackOutputs: first.stackOutputs,
        });
        expect(removed.errors).toEqual([]);
        expect(removed.warnings.filter((w) => w.startsWith("subscriptions: ClusterBundle"))).toEqual([
            `subscriptions: ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: share "${ENTITLEMENT_SHARE}" is kept while running pods mount it ("team-a/builder-1"), with its ClusterRole's use, its copy and the driver's access; the first update after they end deletes it`,
            `subscriptions: ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: shares "${REPO_SHARE}" are deleted (no running pod mounts them); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
        expect(manifestsNamed(removed, "ClusterBundle", "cluster")).toEqual([]);
        expect(manifestsNamed(removed, "SharedSecret", ENTITLEMENT_SHARE)).toEqual([
            expect.objectContaining({
                spec: expect.objectContaining({
                    secretRef: { name: "openshift-config.etc-pki-entitlement", namespace: "subscription-sources" },
                }),
            }),
        ]);
        expect(manifestsNamed(removed, "SharedConfigMap", REPO_SHARE)).toEqual([]);
        const [role] = manifestsNamed(removed, "ClusterRole", "cluster-subscription-bundle") as {
            rules: unknown[];
            metadata: { labels: Record<string, string> };
        }[];
        expect(role.rules).toContainEqual({
            apiGroups: ["sharedresource.openshift.io"],
            resources: ["sharedsecrets"],
            resourceNames: [ENTITLEMENT_SHARE],
            verbs: ["use"],
        });
        expect(role.metadata.labels).toMatchObject({
            "rbac.authorization.k8s.io/aggregate-to-admin": "true",
            "rbac.authorization.k8s.io/aggregate-to-edit": "true",
        });
        const [sync] = manifestsNamed(removed, "Deployment", "subscription-source-sync") as {
            spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } };
        }[];
        expect(JSON.parse(sync.spec.template.spec.containers[0].env.find((e) => e.name === "SOURCE_SYNC_OBJECTS")!.value)).toEqual([
            { kind: "Secret", namespace: "openshift-config", name: "etc-pki-entitlement", shares: [ENTITLEMENT_SHARE] },
        ]);

        const ended = await renderConfig(config({ enabled: true, clusterBundles: [] }), { cluster, stackOutputs: removed.stackOutputs });
        expect(manifestsNamed(ended, "SharedSecret", ENTITLEMENT_SHARE)).toEqual([]);
        expect(manifestsNamed(ended, "ClusterRole", "cluster-subscription-bundle")).toEqual([]);
        expect(manifestsNamed(ended, "Deployment", "subscription-source-sync")).toEqual([]);
        expect(ended.stackOutputs).not.toHaveProperty("subscriptionShareGrants");
    });

    test("GIVEN removedShares deleteAtOnce or the capability disabled WHEN a used ClusterBundle is removed THEN nothing is kept and the preview says what running pods lose", async () => {
        const first = await renderConfig(config({ enabled: true, clusterBundles: [bundle] }), { cluster });
        const running = [...cluster, podMounting("team-a", "builder-1", [ENTITLEMENT_SHARE])];
        const atOnce = await renderConfig(config({ enabled: true, removedShares: "deleteAtOnce", clusterBundles: [] }), {
            cluster: running,
            stackOutputs: first.stackOutputs,
        });
        expect(manifestsNamed(atOnce, "SharedSecret", ENTITLEMENT_SHARE)).toEqual([]);
        expect(atOnce.warnings.filter((w) => w.startsWith("subscriptions: ClusterBundle"))).toEqual([
            `subscriptions: ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: shares "${ENTITLEMENT_SHARE}", "${REPO_SHARE}" are deleted (subscriptions.removedShares: deleteAtOnce); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
        const disabled = await renderConfig(config({ enabled: false }), { cluster: running, stackOutputs: first.stackOutputs });
        expect(disabled.warnings.filter((w) => w.startsWith("subscriptions: ClusterBundle"))).toEqual([
            `subscriptions: ClusterBundle "cluster" is removed from cluster-platform:subscriptions.clusterBundles: shares "${ENTITLEMENT_SHARE}", "${REPO_SHARE}" are deleted (subscriptions.enabled is false: nothing of the capability stays); the Shared Resource CSI driver empties their volumes in running pods that mounted them`,
        ]);
        expect(disabled.stackOutputs).not.toHaveProperty("subscriptionShareGrants");
    });
});
