/**
 * One access rule for ClusterBundles (webhook/driver-access.ts): for every way a service account
 * can hold (or miss) a ClusterBundle's roles, the webhook admits the pod exactly when the Shared
 * Resource CSI driver will mount the bundle's shares for it. The webhook runs for real (informers,
 * review cache, admission handler) against the stand-in API, whose SubjectAccessReviews an RBAC
 * authorizer answers from the table row's bindings and the ClusterRoles this stack renders. The
 * driver's verdict is the review openshift/csi-driver-shared-resource pkg/client/client.go
 * `ExecuteSAR` sends, spelled out here, for each share the stack declares for the bundle.
 */
import pino from "pino";
import { ClusterBundleDeclaration, clusterBundleManifest, clusterRoleManifest, referencesOf } from "../../components/subscriptions/bundles";
import { AccessReviewCache } from "../../webhook/access-reviews";
import { AdmissionHandler } from "../../webhook/admission";
import { ClusterState, subjectAccessReviewer } from "../../webhook/cluster-state";
import { WebhookMetrics } from "../../webhook/metrics";
import { FakeKubeApi, SubjectAccessReviewSpec, configMap, secret } from "./support/fake-kube-api";
import { podCreateReview } from "./support/fixtures";
import {
    BindingObject,
    BOOTSTRAP_AGGREGATED_ROLES,
    ClusterRoleObject,
    RbacState,
    rbacAllows,
    RoleObject,
    Subject,
} from "./support/rbac-authorizer";

const NAMESPACE = "team-a";
const SERVICE_ACCOUNT = "builder";
const references = {
    entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
    yumRepositories: [{ name: "satellite-repos", namespace: "openshift-config" }],
};
const AGGREGATED: ClusterBundleDeclaration = {
    name: "cluster",
    alwaysInject: false,
    aggregateToClusterRoles: ["admin", "edit"],
    ...references,
};
const NOT_AGGREGATED: ClusterBundleDeclaration = { name: "private", alwaysInject: false, aggregateToClusterRoles: [], ...references };
const BUNDLES = [AGGREGATED, NOT_AGGREGATED];

const sa: Subject = { kind: "ServiceAccount", name: SERVICE_ACCOUNT, namespace: NAMESPACE };
const roleBinding = (namespace: string, kind: "Role" | "ClusterRole", role: string, subject: Subject): BindingObject => ({
    metadata: { name: `${role}-binding`, namespace },
    roleRef: { kind, name: role },
    subjects: [subject],
});
const clusterRoleBinding = (role: string, subject: Subject): BindingObject => ({
    metadata: { name: `${role}-binding` },
    roleRef: { kind: "ClusterRole", name: role },
    subjects: [subject],
});
const group = (name: string): Subject => ({ kind: "Group", name });

/** Only `use` on the entitlement share and `get` on the bundle: the yum repository share would not mount. */
const [entitlementShare, yumShare] = referencesOf(AGGREGATED).map((r) => r.share);
const PARTIAL_ROLE: RoleObject = {
    metadata: { name: "partial", namespace: NAMESPACE },
    rules: [
        { apiGroups: ["subscription.openshift.io"], resources: ["clusterbundles"], resourceNames: ["cluster"], verbs: ["get"] },
        { apiGroups: ["sharedresource.openshift.io"], resources: ["sharedsecrets"], resourceNames: [entitlementShare], verbs: ["use"] },
    ],
};

interface Row {
    grant: string;
    bundle: ClusterBundleDeclaration;
    roleBindings?: BindingObject[];
    clusterRoleBindings?: BindingObject[];
    roles?: RoleObject[];
    mounts: boolean;
}

const ROWS: Row[] = [
    {
        grant: "RoleBinding to edit in the pod's namespace (aggregateToClusterRoles)",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "edit", sa)],
        mounts: true,
    },
    {
        grant: "RoleBinding to admin in the pod's namespace",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "admin", sa)],
        mounts: true,
    },
    {
        grant: "RoleBinding to view (not aggregated)",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "view", sa)],
        mounts: false,
    },
    {
        grant: "RoleBinding to edit in another namespace",
        bundle: AGGREGATED,
        roleBindings: [roleBinding("team-b", "ClusterRole", "edit", sa)],
        mounts: false,
    },
    {
        grant: "RoleBinding to edit for a bundle not aggregated to it",
        bundle: NOT_AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "edit", sa)],
        mounts: false,
    },
    {
        grant: "RoleBinding to the bundle's ClusterRole",
        bundle: NOT_AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "private-subscription-bundle", sa)],
        mounts: true,
    },
    {
        grant: "ServiceAccount subject without a namespace in a RoleBinding (defaults to the binding's)",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "edit", { kind: "ServiceAccount", name: SERVICE_ACCOUNT })],
        mounts: true,
    },
    {
        grant: "ClusterRoleBinding to the bundle's ClusterRole",
        bundle: NOT_AGGREGATED,
        clusterRoleBindings: [clusterRoleBinding("private-subscription-bundle", sa)],
        mounts: true,
    },
    { grant: "ClusterRoleBinding to edit", bundle: AGGREGATED, clusterRoleBindings: [clusterRoleBinding("edit", sa)], mounts: true },
    {
        grant: "ClusterRoleBinding to edit for the service account's user name",
        bundle: AGGREGATED,
        clusterRoleBindings: [clusterRoleBinding("edit", { kind: "User", name: `system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}` })],
        mounts: true,
    },
    {
        grant: "ClusterRoleBinding to group system:serviceaccounts",
        bundle: NOT_AGGREGATED,
        clusterRoleBindings: [clusterRoleBinding("private-subscription-bundle", group("system:serviceaccounts"))],
        mounts: true,
    },
    {
        grant: "RoleBinding to edit for group system:serviceaccounts",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "edit", group("system:serviceaccounts"))],
        mounts: true,
    },
    {
        grant: "RoleBinding to edit for group system:serviceaccounts:<ns> (the driver does not send it)",
        bundle: AGGREGATED,
        roleBindings: [roleBinding(NAMESPACE, "ClusterRole", "edit", group(`system:serviceaccounts:${NAMESPACE}`))],
        mounts: false,
    },
    {
        grant: "ClusterRoleBinding to group system:serviceaccounts:<ns>",
        bundle: NOT_AGGREGATED,
        clusterRoleBindings: [clusterRoleBinding("private-subscription-bundle", group(`system:serviceaccounts:${NAMESPACE}`))],
        mounts: false,
    },
    {
        grant: "ClusterRoleBinding to group system:authenticated (the driver does not send it)",
        bundle: NOT_AGGREGATED,
        clusterRoleBindings: [clusterRoleBinding("private-subscription-bundle", group("system:authenticated"))],
        mounts: false,
    },
    {
        grant: "a Role granting use on one of the bundle's two shares",
        bundle: AGGREGATED,
        roles: [PARTIAL_ROLE],
        roleBindings: [roleBinding(NAMESPACE, "Role", "partial", sa)],
        mounts: false,
    },
    { grant: "no binding at all", bundle: AGGREGATED, mounts: false },
];

/** The review the driver sends before mounting a share (pkg/client/client.go ExecuteSAR), spelled out. */
function driverReview(share: string, resource: "sharedsecrets" | "sharedconfigmaps"): SubjectAccessReviewSpec {
    return {
        user: `system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}`,
        groups: ["system:serviceaccounts"],
        resourceAttributes: { verb: "use", group: "sharedresource.openshift.io", resource, name: share, namespace: NAMESPACE },
    };
}

function driverMounts(state: RbacState, bundle: ClusterBundleDeclaration): boolean {
    return referencesOf(bundle).every((reference) =>
        rbacAllows(state, driverReview(reference.share, reference.kind === "Secret" ? "sharedsecrets" : "sharedconfigmaps")),
    );
}

describe("access parity: the webhook admits a ClusterBundle exactly when the Shared Resource CSI driver mounts it", () => {
    let api: FakeKubeApi;
    let state: ClusterState;
    let metrics: WebhookMetrics;
    const renderedRoles: ClusterRoleObject[] = BUNDLES.map((bundle) => clusterRoleManifest(bundle));

    beforeAll(async () => {
        api = new FakeKubeApi();
        await api.start();
        api.put(secret("openshift-config", "etc-pki-entitlement", { "entitlement.pem": "ZQ==", "entitlement-key.pem": "ZQ==" }));
        api.put(configMap("openshift-config", "satellite-repos", { "redhat.repo": "[rhel]" }));
        for (const bundle of BUNDLES)
            api.put({ ...clusterBundleManifest(bundle), metadata: { ...clusterBundleManifest(bundle).metadata, generation: 1 } });
        metrics = new WebhookMetrics({ processMetrics: false });
        state = new ClusterState({
            kubeConfig: api.kubeConfig(),
            metrics,
            logger: pino({ level: "silent" }),
            retry: { initialMs: 10, maxMs: 50 },
        });
        await state.start();
    });

    afterAll(async () => {
        state.stop();
        await api.stop();
    });

    test.each(ROWS)(
        "GIVEN $grant WHEN a pod requests the ClusterBundle THEN the webhook's verdict is the driver's (mounts: $mounts)",
        async (row) => {
            const rbac: RbacState = {
                clusterRoles: [...BOOTSTRAP_AGGREGATED_ROLES, ...renderedRoles],
                roles: row.roles,
                roleBindings: row.roleBindings,
                clusterRoleBindings: row.clusterRoleBindings,
            };
            api.authorize = (spec) => rbacAllows(rbac, spec);
            const access = new AccessReviewCache(subjectAccessReviewer(api.kubeConfig(), metrics), {
                allowedTtlMs: 60_000,
                deniedTtlMs: 10_000,
                sharesOf: (bundle) => state.sharesOf(bundle),
            });
            const handler = new AdmissionHandler({
                cluster: state,
                access,
                metrics,
                logger: pino({ level: "silent" }),
                lookupTimeoutMs: 2000,
            });
            const review = podCreateReview("uid", NAMESPACE, {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { generateName: "app-", annotations: { "subscription.openshift.io/inject-cluster-bundle": row.bundle.name } },
                spec: { serviceAccountName: SERVICE_ACCOUNT, containers: [{ name: "app", image: "ubi9" }] },
            });
            const response = JSON.parse((await handler.handle(review)).body).response as { allowed: boolean; status?: { code: number } };

            const driver = driverMounts(rbac, row.bundle);
            expect(driver).toBe(row.mounts);
            expect(response.allowed).toBe(driver);
            if (!response.allowed) expect(response.status?.code).toBe(403);
        },
    );

    test("GIVEN the table WHEN the shares of the aggregated bundle are listed THEN the webhook reviews the same two shares the stack declares", () => {
        expect(state.sharesOf("cluster")).toEqual([
            { resource: "sharedsecrets", name: entitlementShare },
            { resource: "sharedconfigmaps", name: yumShare },
        ]);
    });
});
