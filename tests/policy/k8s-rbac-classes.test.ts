/**
 * Every class of object the k8s-rbac pack must not let through, each with a caught case and a
 * clean case, sent to the pack started as the Pulumi CLI starts it (index.ts, over the analyzer
 * gRPC protocol): grants, bindings to everyone, webhooks on admission policies, `…List` and
 * `…Patch` kinds, content the pack cannot see, pods on OpenShift, the webhook timeout and config.
 */
import { analyze, analyzeStack, configure, diagnosticsOf, RunningPack } from "./analyzer-process";
import { PACKS_START, sharedPacks } from "../helpers/policy-packs";
import { resource } from "./support";
import type { EngineResource } from "./analyzer-process";
import { K8S_RBAC_POLICIES } from "../../policy-packs/k8s-rbac/policies";

const RBAC = "kubernetes:rbac.authorization.k8s.io/v1";

function clusterRole(name: string, rules: Record<string, unknown>[], type = `${RBAC}:ClusterRole`): EngineResource {
    return resource(type, name, { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules });
}

function binding(name: string, roleName: string, subjects: Record<string, unknown>[]): EngineResource {
    return resource(`${RBAC}:ClusterRoleBinding`, name, {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
        subjects,
    });
}

/** A Deployment shaped like an OperatorHub operator's: no securityContext at all, as most CSVs ship. */
function operatorDeployment(
    container: Record<string, unknown> = {},
    podSpec: Record<string, unknown> = {},
    type = "kubernetes:apps/v1:Deployment",
): EngineResource {
    return resource(type, "operator", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "operator", namespace: "ops" },
        spec: {
            replicas: 1,
            selector: { matchLabels: { app: "op" } },
            template: {
                metadata: { labels: { app: "op" } },
                spec: {
                    serviceAccountName: "op",
                    containers: [{ name: "manager", image: "quay.io/op/manager:v1", ...container }],
                    ...podSpec,
                },
            },
        },
    });
}

/** `level policy: violation` for each diagnostic (the violation is the message's last part). */
const summary = (diagnostics: ReturnType<typeof diagnosticsOf>) =>
    diagnostics.map((d) => `${d.enforcementLevel} ${d.policyName}: ${d.message.slice(d.message.indexOf("\n") + 1)}`);

describe("k8s-rbac through the analyzer protocol: every class, caught and clean", () => {
    let pack: RunningPack;
    const judged = async (target: EngineResource) => summary(diagnosticsOf(await analyze(pack.client, target)));
    beforeAll(async () => {
        pack = (await sharedPacks())["k8s-rbac"];
    }, PACKS_START);
    // The pack is shared with other test files: each test starts from the default config.
    beforeEach(async () => {
        await configure(pack.client, {});
    });

    test("GIVEN a ClusterRole reading Secrets (every verb on them) WHEN analyzed THEN k8s-no-broad-grants [read-secrets] names the request it allows and its source; get on one named Secret passes", async () => {
        expect(
            await judged(clusterRole("secrets-admin", [{ apiGroups: [""], resources: ["secrets", "configmaps"], verbs: ["*"] }])),
        ).toEqual([
            'mandatory k8s-no-broad-grants: ClusterRole "secrets-admin" [read-secrets] read Secrets (get, list or watch): rules[0] allows get secrets (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#listing-secrets); list the verbs, resources and names it needs, or add "secrets-admin" to allowedRoles',
        ]);
        expect(
            await judged(
                clusterRole("secrets-reader", [
                    { apiGroups: [""], resources: ["secrets"], resourceNames: ["pull-secret"], verbs: ["get"] },
                ]),
            ),
        ).toEqual([]);
    });

    test("GIVEN a read-everything ClusterRole (get, list, watch on * of the core group) WHEN analyzed THEN it reads Secrets and, * matching subresources too, the nodes' kubelet API; * resources of another group pass", async () => {
        expect(
            await judged(clusterRole("read-everything", [{ apiGroups: [""], resources: ["*"], verbs: ["get", "list", "watch"] }])),
        ).toEqual([
            'mandatory k8s-no-broad-grants: ClusterRole "read-everything" [read-secrets] read Secrets (get, list or watch): rules[0] allows get secrets (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#listing-secrets); list the verbs, resources and names it needs, or add "read-everything" to allowedRoles',
            'mandatory k8s-no-broad-grants: ClusterRole "read-everything" [node-proxy] the kubelet API of every node (nodes/proxy: exec into any pod on it): rules[0] allows get nodes/proxy (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#access-to-proxy-subresource-of-nodes); list the verbs, resources and names it needs, or add "read-everything" to allowedRoles',
        ]);
        expect(
            await judged(
                clusterRole("monitoring-reader", [{ apiGroups: ["monitoring.coreos.com"], resources: ["*"], verbs: ["get", "list"] }]),
            ),
        ).toEqual([]);
    });

    test("GIVEN escalate, bind and impersonate WHEN analyzed THEN k8s-no-broad-grants names each power with the request that shows it; reading roles passes", async () => {
        const role = clusterRole("role-granter", [
            { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["get", "bind", "escalate"] },
            { apiGroups: [""], resources: ["users", "groups", "serviceaccounts"], verbs: ["impersonate"] },
        ]);
        expect(await judged(role)).toEqual([
            'mandatory k8s-no-broad-grants: ClusterRole "role-granter" [escalate] escalate: write roles that grant what the writer does not hold: rules[0] allows escalate clusterroles (any name) (group "rbac.authorization.k8s.io") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#escalate-verb; kubernetes pkg/registry/rbac/escalation_check.go EscalationAllowed); list the verbs, resources and names it needs, or add "role-granter" to allowedRoles',
            'mandatory k8s-no-broad-grants: ClusterRole "role-granter" [bind] bind: bind roles more powerful than the binder (any role, or a named powerful one): rules[0] allows bind clusterroles (any name) (group "rbac.authorization.k8s.io") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#bind-verb; kubernetes pkg/registry/rbac/escalation_check.go BindingAuthorized); list the verbs, resources and names it needs, or add "role-granter" to allowedRoles',
            'mandatory k8s-no-broad-grants: ClusterRole "role-granter" [impersonate] impersonate: act as any user, group or service account, or as a named powerful one: rules[1] allows impersonate users (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#impersonate-verb; kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go); list the verbs, resources and names it needs, or add "role-granter" to allowedRoles',
        ]);
        expect(
            await judged(
                clusterRole("role-reader", [
                    { apiGroups: ["rbac.authorization.k8s.io"], resources: ["clusterroles"], verbs: ["get", "list"] },
                ]),
            ),
        ).toEqual([]);
    });

    test("GIVEN cluster-admin bound to system:authenticated, and a stack role with * on * bound to system:unauthenticated WHEN AnalyzeStack is called THEN the stack's role is reported at its binding's URN (cluster-admin, built in, is refused per resource by k8s-no-power-for-broad-groups); cluster-admin for a named group passes", async () => {
        const everyone = binding("everyone-admin", "cluster-admin", [
            { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:authenticated" },
        ]);
        const anonymous = binding("anonymous-everything", "everything", [
            { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:unauthenticated" },
            { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "system:anonymous" },
        ]);
        const admins = binding("platform-admins", "cluster-admin", [
            { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "platform-admins" },
        ]);
        const everything = clusterRole("everything", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]);
        const diagnostics = diagnosticsOf(await analyzeStack(pack.client, [everyone, anonymous, admins, everything]));
        expect(diagnostics.map((d) => `${d.policyName} ${d.urn}: ${d.message.split("\n")[1]}`)).toEqual([
            `k8s-no-admin-for-everyone ${anonymous.urn}: ClusterRoleBinding "anonymous-everything" binds ClusterRole "everything", which grants everything, to Group "system:unauthenticated"; bind it to the named subjects that need it`,
            `k8s-no-admin-for-everyone ${anonymous.urn}: ClusterRoleBinding "anonymous-everything" binds ClusterRole "everything", which grants everything, to User "system:anonymous"; bind it to the named subjects that need it`,
        ]);
        expect(diagnosticsOf(await analyzeStack(pack.client, [admins]))).toEqual([]);
    });

    test("GIVEN a webhook intercepting ValidatingAdmissionPolicyBindings WHEN analyzed THEN k8s-webhook-forbidden-rules reports the lock-out; one on pods passes", async () => {
        const configuration = (resources: string[]) =>
            resource("kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration", "guard", {
                metadata: { name: "guard" },
                webhooks: [
                    {
                        name: "guard.example.io",
                        clientConfig: { service: { name: "guard", namespace: "guard" } },
                        rules: [{ operations: ["*"], apiGroups: ["admissionregistration.k8s.io", ""], apiVersions: ["v1"], resources }],
                        sideEffects: "None",
                        failurePolicy: "Ignore",
                        namespaceSelector: {
                            matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "guard"] }],
                        },
                    },
                ],
            });
        expect(await judged(configuration(["validatingadmissionpolicybindings"]))).toEqual([
            'mandatory k8s-webhook-forbidden-rules: ValidatingWebhookConfiguration "guard" webhook "guard.example.io" (webhooks[0]) rules[0].resources: Webhook rules cannot include ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, MutatingAdmissionPolicy or MutatingAdmissionPolicyBinding resources: a webhook on them can lock administrators out of fixing admission policies',
        ]);
        expect(await judged(configuration(["pods"]))).toEqual([]);
    });

    test("GIVEN a ClusterRoleList carrying a * on * role WHEN analyzed THEN the item is judged as the ClusterRole it is; a list of narrow roles passes", async () => {
        const list = (rules: Record<string, unknown>[]) =>
            resource(`${RBAC}:ClusterRoleList`, "roles", {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRoleList",
                items: [
                    { metadata: { name: "viewer" }, rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["get"] }] },
                    { metadata: { name: "hidden" }, rules },
                ],
            });
        expect(await judged(list([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]))).toEqual([
            'mandatory k8s-no-wildcard-access: ClusterRole "hidden" rules[0] grants every verb ("*") on every resource ("*") of API groups ["*"]; list the verbs and resources it needs, or add "hidden" to allowedRoles',
        ]);
        expect(await judged(list([{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }]))).toEqual([]);
    });

    test("GIVEN a ValidatingWebhookConfigurationList whose fail-closed webhook has a 1-replica backend WHEN AnalyzeStack is called THEN the item is judged at the list's URN; 2 replicas pass", async () => {
        const labels = { app: "w" };
        const list = resource("kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfigurationList", "webhooks", {
            items: [
                {
                    metadata: { name: "v" },
                    webhooks: [{ name: "v.example.io", clientConfig: { service: { name: "w", namespace: "w" } }, sideEffects: "None" }],
                },
            ],
        });
        const backend = (replicas: number) => [
            resource("kubernetes:core/v1:Service", "w-service", { metadata: { name: "w", namespace: "w" }, spec: { selector: labels } }),
            resource("kubernetes:apps/v1:Deployment", "w-deployment", {
                metadata: { name: "w", namespace: "w" },
                spec: { replicas, template: { metadata: { labels }, spec: { containers: [] } } },
            }),
            resource("kubernetes:policy/v1:PodDisruptionBudget", "w-pdb", {
                metadata: { name: "w", namespace: "w" },
                spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
            }),
        ];
        expect(
            diagnosticsOf(await analyzeStack(pack.client, [list, ...backend(1)])).map(
                (d) => `${d.policyName} ${d.urn}: ${d.message.split("\n")[1]}`,
            ),
        ).toEqual([
            `k8s-webhook-fail-closed-availability ${list.urn}: ValidatingWebhookConfiguration "v" webhook "v.example.io" fails closed (failurePolicy Fail): its Deployment "w/w" runs 1 replica; at least 2 are needed so that one pod's restart does not block every request the webhook intercepts`,
        ]);
        expect(diagnosticsOf(await analyzeStack(pack.client, [list, ...backend(2)]))).toEqual([]);
    });

    test("GIVEN a ClusterRolePatch of system:basic-user (bound to every authenticated user) adding Secret reads, and a DeploymentPatch making a container privileged WHEN analyzed THEN both are judged on what they leave; a patch setting replicas passes", async () => {
        expect(
            await judged(
                clusterRole("system:basic-user", [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }], `${RBAC}:ClusterRolePatch`),
            ),
        ).toEqual([
            'mandatory k8s-no-broad-grants: ClusterRole "system:basic-user" [read-secrets] read Secrets (get, list or watch): rules[0] allows get secrets (any name) (group "") in every namespace or cluster-wide (source: kubernetes.io/docs/concepts/security/rbac-good-practices/#listing-secrets); list the verbs, resources and names it needs, or add "system:basic-user" to allowedRoles',
            'mandatory k8s-no-power-for-broad-groups: ClusterRole "system:basic-user" is bound to Group "system:authenticated" by ClusterRoleBinding "system:basic-user" (Kubernetes\' bootstrap policy); this patch gives them [read-secrets] read Secrets (get, list or watch); grant the power through a role of your own bound to the subjects that need it',
        ]);
        expect(
            await judged(operatorDeployment({ securityContext: { privileged: true } }, {}, "kubernetes:apps/v1:DeploymentPatch")),
        ).toEqual([
            'mandatory k8s-pod-security-restricted: Deployment "ops/operator" (spec.template.spec) does not meet the restricted profile:\n  - [Privileged Containers] container "manager" (containers[0]): securityContext.privileged is true; it must be false or unset',
        ]);
        expect(await judged(operatorDeployment({}, {}, "kubernetes:apps/v1:DeploymentPatch"))).toEqual([]);
    });

    test("GIVEN a ClusterRoleBindingPatch of cluster-admin adding system:authenticated without a roleRef WHEN analyzed THEN it is judged with the live roleRef (server-side apply keeps it) and refused; one of a binding the pack does not know cannot be judged and is refused", async () => {
        const patch = (name: string) =>
            resource(`${RBAC}:ClusterRoleBindingPatch`, name, {
                metadata: { name },
                subjects: [{ kind: "Group", name: "system:authenticated" }],
            });
        expect(await judged(patch("cluster-admin"))).toEqual([
            'mandatory k8s-no-power-for-broad-groups: ClusterRoleBinding "cluster-admin" binds ClusterRole "cluster-admin" (Kubernetes\' bootstrap policy), which gives [everything] every verb on every resource of every API group ("*"); [non-resource-urls] every non-resource URL ("*" or "/*": logs, debug and metrics endpoints of the API server), to Group "system:authenticated"; bind it to the named subjects that need it',
        ]);
        expect(await judged(patch("team-binding"))).toEqual([
            'mandatory k8s-no-powerful-bindings: ClusterRoleBinding "team-binding" cannot be judged: it sets no roleRef, so it keeps the live binding\'s, which this pack does not know; state the roleRef the binding has (it cannot change) so the subjects it adds can be judged',
        ]);
    });

    test("GIVEN a Helm Release, a yaml/v2 ConfigGroup and a CSV carrying RBAC WHEN analyzed THEN each gets an advisory that it was not judged; a custom resource without RBAC or pods gets none", async () => {
        expect(await judged(resource("kubernetes:helm.sh/v3:Release", "ingress", { chart: "ingress-nginx", values: {} }))).toEqual([
            'advisory k8s-unjudged-content: kubernetes:helm.sh/v3:Release "ingress" was not judged: the provider renders and applies the chart itself, so its RBAC, webhooks and pods never reach a policy pack',
        ]);
        expect(await judged(resource("kubernetes:yaml/v2:ConfigGroup", "manifests", { files: ["manifests/*.yaml"] }))).toEqual([
            'advisory k8s-unjudged-content: kubernetes:yaml/v2:ConfigGroup "manifests" was not judged: the objects in its files, yaml and objs inputs are judged only as the provider registers them one by one; what this resource holds is not read here',
        ]);
        const csv = resource("kubernetes:operators.coreos.com/v1alpha1:ClusterServiceVersion", "widgets", {
            metadata: { name: "widgets.v1", namespace: "ops" },
            spec: {
                install: {
                    strategy: "deployment",
                    spec: {
                        clusterPermissions: [{ serviceAccountName: "w", rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] }],
                    },
                },
            },
        });
        expect(await judged(csv)).toEqual([
            'advisory k8s-unjudged-content: ClusterServiceVersion (operators.coreos.com) "ops/widgets.v1" was not judged: it carries RBAC rules (spec.install.spec.clusterPermissions[0].rules[]), which the API server or an operator will act on but this pack does not read for custom resources; review them',
        ]);
        expect(
            await judged(
                resource("kubernetes:cert-manager.io/v1:Certificate", "serving", {
                    metadata: { name: "serving", namespace: "ops" },
                    spec: { secretName: "serving-tls", dnsNames: ["svc"] },
                }),
            ),
        ).toEqual([]);
    });

    test("GIVEN platform openshift WHEN an operator Deployment leaves UID, fsGroup, seccomp, escalation and capabilities to the restricted-v2 SCC THEN it passes, while privileged, host namespaces and added capabilities are caught; on kubernetes the same Deployment is caught", async () => {
        await configure(pack.client, { "k8s-pod-security-restricted": { enforcementLevel: "mandatory", platform: "openshift" } });
        try {
            expect(await judged(operatorDeployment())).toEqual([]);
            expect(
                await judged(
                    operatorDeployment(
                        { securityContext: { privileged: true, capabilities: { add: ["NET_ADMIN"] } } },
                        { hostNetwork: true, volumes: [{ name: "cache", csi: { driver: "x" } }] },
                    ),
                ),
            ).toEqual([
                [
                    'mandatory k8s-pod-security-restricted: Deployment "ops/operator" (spec.template.spec) does not meet the restricted-v2 SCC:',
                    "  - [Host Namespaces] hostNetwork is true; it must be false or unset",
                    '  - [Privileged Containers] container "manager" (containers[0]): securityContext.privileged is true; it must be false or unset',
                    '  - [Volume Types] volumes[0] ("cache") is a csi volume; allowed types are configMap, downwardAPI, emptyDir, persistentVolumeClaim, projected, secret (restricted-v2)',
                    '  - [Capabilities] container "manager" (containers[0]): securityContext.capabilities.add has "NET_ADMIN"; only NET_BIND_SERVICE may be added',
                ].join("\n"),
            ]);
        } finally {
            await configure(pack.client, {});
        }
        expect(await judged(operatorDeployment())).toEqual([
            [
                'mandatory k8s-pod-security-restricted: Deployment "ops/operator" (spec.template.spec) does not meet the restricted profile:',
                '  - [Privilege Escalation] container "manager" (containers[0]): securityContext.allowPrivilegeEscalation must be false',
                '  - [Running as Non-root] container "manager" (containers[0]): runAsNonRoot must be true, on the container or the pod securityContext',
                '  - [Seccomp] container "manager" (containers[0]): seccompProfile.type must be RuntimeDefault or Localhost, on the container or the pod securityContext',
                '  - [Capabilities] container "manager" (containers[0]): securityContext.capabilities.drop must include "ALL"',
            ].join("\n"),
        ]);
    });

    test("GIVEN a misspelled knob, a misspelled policy name and a value of the wrong type in the policy config WHEN the engine configures the pack THEN Configure fails naming each key, value and rule, before any resource is judged; the right config is accepted", async () => {
        await expect(
            configure(pack.client, {
                "k8s-no-wildcard-access": { enforcementLevel: "mandatory", allowedRole: ["operator-admin"] },
                "k8s-no-broad-grant": { enforcementLevel: "mandatory", allowedRoles: ["x"] },
                "k8s-webhook-timeout": { enforcementLevel: "mandatory", maxTimeoutSeconds: "15" },
            }),
        ).rejects.toThrow(
            [
                "3 INVALID_ARGUMENT: invalid policy config for pack k8s-rbac: 3 problems",
                `  - k8s-no-broad-grant: "k8s-no-broad-grant" is not a policy of pack k8s-rbac (its policies: ${K8S_RBAC_POLICIES.map((p) => p.name).join(", ")})`,
                '  - k8s-no-wildcard-access.allowedRole: "allowedRole" is not a config key of policy k8s-no-wildcard-access (its keys: allowedRoles)',
                '  - k8s-webhook-timeout.maxTimeoutSeconds: "15" must be an integer',
            ].join("\n"),
        );
        await configure(pack.client, { "k8s-no-wildcard-access": { enforcementLevel: "mandatory", allowedRoles: ["operator-admin"] } });
        expect(await judged(clusterRole("operator-admin", [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]))).toEqual([]);
    });

    test("GIVEN webhook timeouts of 31 s and 30 s WHEN analyzed THEN only 31 is refused, at the operator pre-flight's limit", async () => {
        const configuration = (timeoutSeconds: number) =>
            resource("kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration", "slow", {
                metadata: { name: "slow" },
                webhooks: [
                    {
                        name: "slow.example.io",
                        clientConfig: { service: { name: "s", namespace: "s" } },
                        sideEffects: "None",
                        failurePolicy: "Ignore",
                        timeoutSeconds,
                        namespaceSelector: {
                            matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "s"] }],
                        },
                    },
                ],
            });
        expect(await judged(configuration(31))).toEqual([
            'mandatory k8s-webhook-timeout: MutatingWebhookConfiguration "slow" webhook "slow.example.io" (webhooks[0]): timeoutSeconds 31 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts',
        ]);
        expect(await judged(configuration(30))).toEqual([]);
    });
});
