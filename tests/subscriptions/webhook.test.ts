import {
    webhookDefinition,
    webhookDeploymentManifest,
    webhookNamespaceExclusions,
    webhookPodDisruptionBudgetManifest,
    webhookReadScopes,
    readNamespacesValue,
} from "../../components/subscriptions/webhook";
import { referencesOf } from "../../components/subscriptions/bundles";
import { validateManifests } from "../../scripts/render/validate-k8s";
import { namespaceSelector } from "../../components/admission-webhook/build";

describe("the subscription webhook's deployment (pure parts)", () => {
    test("GIVEN plain Kubernetes WHEN the excluded namespaces are derived THEN they are the webhook's own and the control plane's, by name only", () => {
        expect(webhookNamespaceExclusions("kubernetes", "subscription-injection")).toEqual({
            names: ["kube-node-lease", "kube-public", "kube-system", "subscription-injection"],
            labels: {},
        });
    });

    test("GIVEN OpenShift WHEN the excluded namespaces are derived THEN the platform's critical namespaces are added by name and the rest by their labels", () => {
        const exclusions = webhookNamespaceExclusions("openshift", "subscription-injection");
        // Written out, not built from OPENSHIFT_CRITICAL_NAMESPACES: a namespace dropped from the
        // constant must fail here. The control plane's, the operators' (openshift-operators: OLM
        // installs there, and the webhook's issuer may run there) and the webhook's own.
        expect(exclusions.names).toEqual([
            "kube-node-lease",
            "kube-public",
            "kube-system",
            "openshift",
            "openshift-apiserver",
            "openshift-apiserver-operator",
            "openshift-authentication",
            "openshift-authentication-operator",
            "openshift-cloud-controller-manager",
            "openshift-cloud-controller-manager-operator",
            "openshift-cluster-csi-drivers",
            "openshift-cluster-machine-approver",
            "openshift-cluster-storage-operator",
            "openshift-cluster-version",
            "openshift-config",
            "openshift-config-managed",
            "openshift-dns",
            "openshift-dns-operator",
            "openshift-etcd",
            "openshift-etcd-operator",
            "openshift-kube-apiserver",
            "openshift-kube-apiserver-operator",
            "openshift-kube-controller-manager",
            "openshift-kube-controller-manager-operator",
            "openshift-kube-scheduler",
            "openshift-kube-scheduler-operator",
            "openshift-machine-api",
            "openshift-machine-config-operator",
            "openshift-multus",
            "openshift-network-operator",
            "openshift-oauth-apiserver",
            "openshift-operator-lifecycle-manager",
            "openshift-operators",
            "openshift-ovn-kubernetes",
            "openshift-sdn",
            "openshift-service-ca",
            "openshift-service-ca-operator",
            "subscription-injection",
        ]);
        expect(exclusions.labels).toEqual({ "openshift.io/cluster-monitoring": ["true"], "openshift.io/run-level": ["0", "1"] });
    });

    test("GIVEN the namespaces the webhook depends on WHEN the excluded namespaces are derived THEN they are added, once each, and OpenShift's operators namespace is always in", () => {
        expect(
            webhookNamespaceExclusions("kubernetes", "subscription-injection", ["openshift-builds", "cert-manager", "kube-system"]).names,
        ).toEqual(["cert-manager", "kube-node-lease", "kube-public", "kube-system", "openshift-builds", "subscription-injection"]);
        expect(webhookNamespaceExclusions("openshift", "subscription-injection").names).toContain("openshift-operators");
    });

    test("GIVEN declared bundles and readNamespaces WHEN the read scopes are derived THEN the source namespace and readNamespaces are listed for exactly the kinds used there, and a declared Bundle's namespace is read by name, sorted", () => {
        const ref = (name: string, namespace: string) => ({ name, namespace });
        const shared = [
            ...referencesOf({
                name: "a",
                alwaysInject: false,
                entitlements: [ref("e", "openshift-config")],
                yumRepositories: [ref("r", "repos")],
                aggregateToClusterRoles: [],
            }),
            ...referencesOf({
                name: "b",
                alwaysInject: false,
                entitlements: [ref("e", "repos")],
                yumRepositories: [],
                aggregateToClusterRoles: [],
            }),
        ];
        const scopes = webhookReadScopes(
            "subscription-sources",
            shared,
            [
                {
                    name: "local",
                    namespace: "team-a",
                    alwaysInject: false,
                    entitlements: [{ name: "e" }],
                    yumRepositories: [{ name: "r" }],
                },
                {
                    name: "other",
                    namespace: "team-a",
                    alwaysInject: false,
                    entitlements: [{ name: "f" }, { name: "e" }],
                    yumRepositories: [],
                },
                { name: "listed", namespace: "team-z", alwaysInject: false, entitlements: [{ name: "x" }], yumRepositories: [] },
            ],
            ["team-z", "repos"],
        );
        const list = (...resources: string[]) => ({ apiGroups: [""], resources, verbs: ["list", "watch"] });
        const get = (resource: string, ...resourceNames: string[]) => ({
            apiGroups: [""],
            resources: [resource],
            resourceNames,
            verbs: ["get"],
        });
        expect(scopes).toEqual([
            { namespace: "repos", rules: [list("secrets", "configmaps")], listed: ["secrets", "configmaps"] },
            { namespace: "subscription-sources", rules: [list("secrets", "configmaps")], listed: ["secrets", "configmaps"] },
            { namespace: "team-a", rules: [get("secrets", "e", "f"), get("configmaps", "r")], listed: [] },
            { namespace: "team-z", rules: [list("secrets", "configmaps")], listed: ["secrets", "configmaps"] },
        ]);
        expect(readNamespacesValue(scopes)).toBe(
            "repos/secrets,repos/configmaps,subscription-sources/secrets,subscription-sources/configmaps,team-z/secrets,team-z/configmaps",
        );
        expect(webhookReadScopes("subscription-sources", [], [], [])).toEqual([]);
    });

    test("GIVEN OpenShift's exclusions WHEN the AdmissionWebhook builds the selector THEN names and each label become NotIn expressions", () => {
        const exclusions = webhookNamespaceExclusions("openshift", "subscription-injection");
        const selector = namespaceSelector({
            backend: { deploymentName: "subscription-injection-webhook", namespace: "subscription-injection" },
            targetNamespaces: undefined,
            excludedNamespaces: exclusions.names,
            excludedNamespaceLabels: exclusions.labels,
            labelled: true,
        });
        expect(selector).toEqual({
            matchExpressions: [
                { key: "kubernetes.io/metadata.name", operator: "NotIn", values: exclusions.names },
                { key: "openshift.io/cluster-monitoring", operator: "NotIn", values: ["true"] },
                { key: "openshift.io/run-level", operator: "NotIn", values: ["0", "1"] },
            ],
        });
    });

    test("GIVEN the webhook definition THEN it mutates pod CREATE and ephemeral-container UPDATE, reinvoked if needed, with no side effects", () => {
        expect(webhookDefinition("Fail", 10)).toEqual({
            name: "inject.subscription.openshift.io",
            type: "MutatingAdmissionWebhook",
            rules: [
                { operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"], scope: "Namespaced" },
                {
                    operations: ["UPDATE"],
                    apiGroups: [""],
                    apiVersions: ["v1"],
                    resources: ["pods/ephemeralcontainers"],
                    scope: "Namespaced",
                },
            ],
            failurePolicy: "Fail",
            matchPolicy: "Equivalent",
            sideEffects: "None",
            timeoutSeconds: 10,
            admissionReviewVersions: ["v1"],
            reinvocationPolicy: "IfNeeded",
            path: "/mutate-pods",
        });
    });

    const deployment = webhookDeploymentManifest({
        namespace: "subscription-injection",
        replicas: 3,
        image: "registry.example.com/subscription-webhook@sha256:" + "a".repeat(64),
        certificateVolumes: {
            volumes: [{ name: "webhook-cert", secret: { secretName: "subscription-injection-webhook-tls" } }],
            volumeMounts: [{ name: "webhook-cert", mountPath: "/tmp/k8s-webhook-server/serving-certs", readOnly: true }],
        },
        podAnnotations: { "cluster-platform.io/cert-hash": "abc" },
        readNamespaces: "subscription-sources/secrets",
        sourceNamespace: "subscription-sources",
    });

    test("GIVEN the Deployment THEN it is a valid apps/v1 Deployment and its PodDisruptionBudget a valid policy/v1 one", () => {
        expect(validateManifests([deployment, webhookPodDisruptionBudgetManifest("subscription-injection")])).toEqual({
            problems: [],
            unvalidated: [],
        });
    });

    test("GIVEN the Deployment THEN its pods meet the restricted Pod Security profile", () => {
        const pod = deployment.spec.template.spec;
        expect(pod.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
        expect(pod.containers.map((c) => c.securityContext)).toEqual([
            {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
                seccompProfile: { type: "RuntimeDefault" },
            },
        ]);
        expect(pod.volumes).toEqual([
            { name: "tmp", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
            { name: "webhook-cert", secret: { secretName: "subscription-injection-webhook-tls" } },
        ]);
    });

    test("GIVEN the Deployment THEN it is highly available: spread over nodes and zones, no unavailable pod during rollouts, critical priority", () => {
        const spec = deployment.spec;
        expect(spec.replicas).toBe(3);
        expect(spec.strategy).toEqual({ type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
        expect(spec.template.spec.priorityClassName).toBe("system-cluster-critical");
        expect(spec.template.spec.topologySpreadConstraints.map((c) => [c.topologyKey, c.whenUnsatisfiable, c.labelSelector])).toEqual([
            ["kubernetes.io/hostname", "DoNotSchedule", { matchLabels: spec.selector.matchLabels }],
            ["topology.kubernetes.io/zone", "ScheduleAnyway", { matchLabels: spec.selector.matchLabels }],
        ]);
    });

    test("GIVEN the container THEN it serves HTTPS on the server's port (9443) with readiness and liveness probes and bounded resources", () => {
        const [container] = deployment.spec.template.spec.containers;
        expect(container.ports).toEqual([{ name: "https", containerPort: 9443, protocol: "TCP" }]);
        expect(container.readinessProbe).toEqual({
            httpGet: { path: "/readyz", port: "https", scheme: "HTTPS" },
            periodSeconds: 5,
            timeoutSeconds: 2,
            failureThreshold: 3,
        });
        expect(container.livenessProbe).toEqual({
            httpGet: { path: "/healthz", port: "https", scheme: "HTTPS" },
            periodSeconds: 10,
            timeoutSeconds: 2,
            failureThreshold: 3,
            initialDelaySeconds: 10,
        });
        expect(container.resources).toEqual({ requests: { cpu: "50m", memory: "192Mi" }, limits: { cpu: "1", memory: "512Mi" } });
    });
});
