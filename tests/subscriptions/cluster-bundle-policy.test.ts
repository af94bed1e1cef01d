/**
 * Every ClusterBundle works, or is refused: the ValidatingAdmissionPolicy the program renders,
 * loaded into the stand-in API the webhook tests use (which evaluates its CEL as an API server
 * does), admits the ClusterBundles the program renders (whatever their name, so a preview's dry
 * run of a newly declared one passes) and refuses any other with a message that names the config
 * key; a refused bundle never reaches the webhook's cache.
 */
import { CustomObjectsApi } from "@kubernetes/client-node";
import pino from "pino";
import { CLUSTER_BUNDLE_POLICY_NAME, MANAGED_CLUSTER_BUNDLE_LABELS } from "../../components/subscriptions/cluster-bundle-policy";
import { RenderResult } from "../../scripts/render/render";
import { ClusterState as WebhookClusterState } from "../../webhook/cluster-state";
import { WebhookMetrics } from "../../webhook/metrics";
import { AdmissionPolicy, bundleObject, FakeKubeApi } from "../webhook/support/fake-kube-api";
import { waitFor } from "../webhook/support/wait";
import { manifestNamed, renderConfig, resourceNamed } from "../helpers/render";

const GROUP = "subscription.openshift.io";
const VERSION = "v1alpha1";
const entitlement = { name: "etc-pki-entitlement", namespace: "openshift-config" };
const refusal = (name: string) =>
    `clusterbundles.subscription.openshift.io "${name}" is forbidden: ValidatingAdmissionPolicy '${CLUSTER_BUNDLE_POLICY_NAME}' with binding '${CLUSTER_BUNDLE_POLICY_NAME}' denied request: ClusterBundle ${name} is not managed by cluster-platform: declare it in cluster-platform:subscriptions.clusterBundles (the stack then creates it with its shares, its ClusterRole and the driver's read access); a ClusterBundle created any other way would mount nothing`;

function clusterBundle(name: string, extra: Record<string, unknown> = {}) {
    return {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: "ClusterBundle",
        metadata: { name, ...extra },
        spec: { entitlements: [entitlement] },
    };
}

/** The HTTP status and Status message of a failed client call. */
async function failure(call: Promise<unknown>): Promise<{ code: number; message: string }> {
    try {
        await call;
    } catch (error) {
        const { statusCode, body } = error as { statusCode: number; body: { message: string } };
        return { code: statusCode, message: body.message };
    }
    throw new Error("the call succeeded");
}

describe("ClusterBundles the stack does not declare are refused (ValidatingAdmissionPolicy)", () => {
    let result: RenderResult;
    let api: FakeKubeApi;
    let custom: CustomObjectsApi;

    beforeAll(async () => {
        result = await renderConfig({
            cluster: { name: "prod", platform: "kubernetes", kubeContext: "test" },
            subscriptions: {
                enabled: true,
                webhook: { image: "quay.io/acme/subscription-webhook:1.0" },
                clusterBundles: [
                    { name: "cluster", entitlements: [entitlement] },
                    { name: "newly-declared", entitlements: [entitlement] },
                ],
            },
        });
        api = new FakeKubeApi();
        await api.start();
        api.admissionPolicies = [
            {
                policy: manifestNamed(result, "ValidatingAdmissionPolicy", CLUSTER_BUNDLE_POLICY_NAME),
                binding: manifestNamed(result, "ValidatingAdmissionPolicyBinding", CLUSTER_BUNDLE_POLICY_NAME),
            } as unknown as AdmissionPolicy,
        ];
        custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
    });

    afterAll(async () => {
        await api.stop();
    });

    test("GIVEN the rendered policy WHEN read THEN it matches ClusterBundle create and update only, and its binding denies", () => {
        expect(result.errors).toEqual([]);
        const policy = manifestNamed(result, "ValidatingAdmissionPolicy", CLUSTER_BUNDLE_POLICY_NAME) as { spec: Record<string, unknown> };
        expect(policy.spec.failurePolicy).toBe("Fail");
        expect(policy.spec.matchConstraints).toEqual({
            resourceRules: [
                { apiGroups: [GROUP], apiVersions: [VERSION], operations: ["CREATE", "UPDATE"], resources: ["clusterbundles"] },
            ],
        });
        expect((policy.spec.validations as { expression: string }[])[0].expression).toBe(
            'has(object.metadata.deletionTimestamp) || (has(object.metadata.labels) && "app.kubernetes.io/managed-by" in object.metadata.labels && object.metadata.labels["app.kubernetes.io/managed-by"] == "cluster-platform" && "cluster-platform.io/capability" in object.metadata.labels && object.metadata.labels["cluster-platform.io/capability"] == "subscriptions")',
        );
        expect(manifestNamed(result, "ValidatingAdmissionPolicyBinding", CLUSTER_BUNDLE_POLICY_NAME).spec).toEqual({
            policyName: CLUSTER_BUNDLE_POLICY_NAME,
            validationActions: ["Deny"],
        });
    });

    test("GIVEN the declared ClusterBundle WHEN rendered THEN it is created after the policy, carrying the labels the policy requires", () => {
        expect((manifestNamed(result, "ClusterBundle", "cluster").metadata as { labels: Record<string, string> }).labels).toMatchObject(
            MANAGED_CLUSTER_BUNDLE_LABELS,
        );
        expect(
            resourceNamed(result, "kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle", "clusterbundle-cluster").options.dependsOn,
        ).toEqual(expect.arrayContaining([CLUSTER_BUNDLE_POLICY_NAME]));
    });

    test("GIVEN the ClusterBundles the stack renders WHEN it creates and updates them THEN the API admits them, a newly declared name as well", async () => {
        const rendered = (name: string) => manifestNamed(result, "ClusterBundle", name) as ReturnType<typeof clusterBundle>;
        await custom.createClusterCustomObject(GROUP, VERSION, "clusterbundles", rendered("cluster"));
        await custom.createClusterCustomObject(GROUP, VERSION, "clusterbundles", rendered("newly-declared"));
        await custom.replaceClusterCustomObject(GROUP, VERSION, "clusterbundles", "cluster", {
            ...rendered("cluster"),
            spec: { entitlements: [entitlement, { name: "more", namespace: "openshift-config" }] },
        });
        expect(api.requests.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`)).toEqual([
            "POST /apis/subscription.openshift.io/v1alpha1/clusterbundles",
            "POST /apis/subscription.openshift.io/v1alpha1/clusterbundles",
            "PUT /apis/subscription.openshift.io/v1alpha1/clusterbundles/cluster",
        ]);
    });

    test("GIVEN an admin's `oc create` of an undeclared ClusterBundle WHEN admitted THEN it is refused (422) naming the config key, and the webhook never sees it", async () => {
        expect(await failure(custom.createClusterCustomObject(GROUP, VERSION, "clusterbundles", clusterBundle("adhoc")))).toEqual({
            code: 422,
            message: refusal("adhoc"),
        });
        const metrics = new WebhookMetrics({ processMetrics: false });
        const state = new WebhookClusterState({ kubeConfig: api.kubeConfig(), metrics, logger: pino({ level: "silent" }) });
        await state.start();
        await waitFor(() => state.clusterBundleMap().has("newly-declared"), "the declared bundles in the webhook's cache");
        expect([...state.clusterBundleMap().keys()].sort()).toEqual(["cluster", "newly-declared"]);
        state.stop();
    });

    test("GIVEN an undeclared ClusterBundle from before the policy WHEN updated THEN it is refused, unless it is being deleted (finalizers stay removable)", async () => {
        api.put(bundleObject(undefined, "legacy", { entitlements: [entitlement] }));
        expect(
            await failure(custom.replaceClusterCustomObject(GROUP, VERSION, "clusterbundles", "legacy", clusterBundle("legacy"))),
        ).toEqual({
            code: 422,
            message: refusal("legacy"),
        });
        await custom.replaceClusterCustomObject(
            GROUP,
            VERSION,
            "clusterbundles",
            "legacy",
            clusterBundle("legacy", { deletionTimestamp: "2026-01-01T00:00:00Z" }),
        );
    });
});
