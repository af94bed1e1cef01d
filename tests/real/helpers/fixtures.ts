/**
 * The cluster objects the full stack expects before its first `pulumi up` (created by the admin or
 * other teams, never by the stack), and the full stack's configuration: every capability that
 * does not need AWS.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import type { KubeObject } from "./kubectl";
import { realEnv } from "./stack";

export const CONFIG_NAMESPACE = "real-config";
export const TEAM_NAMESPACE = "team-a";
export const DRIVER = { namespace: "openshift-builds", name: "csi-driver-shared-resource" } as const;
export const OPERATOR_CSV_FILE = "node-maintenance-operator-0.0.1.clusterserviceversion.yaml";
const SHARED_CSVS = path.resolve(__dirname, "..", "..", "..", "..", "shared", "testdata", "csvs");

/**
 * The operator's bundle: the shared CSV as published, beside a CustomResourceDefinition for the
 * API it owns (`nodemaintenances.nodemaintenance.medik8s.io` v1beta1, as the CSV's `owned` names
 * it; the schema keeps unknown fields, the shared test data carries no CRD manifest). Written into
 * the run's work directory; returns the CSV's path.
 */
export function operatorBundle(work: string): string {
    const dir = path.join(work, "bundles", "node-maintenance");
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(SHARED_CSVS, OPERATOR_CSV_FILE), path.join(dir, OPERATOR_CSV_FILE));
    const crd = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "nodemaintenances.nodemaintenance.medik8s.io" },
        spec: {
            group: "nodemaintenance.medik8s.io",
            names: { kind: "NodeMaintenance", listKind: "NodeMaintenanceList", plural: "nodemaintenances", singular: "nodemaintenance" },
            scope: "Cluster",
            versions: [
                {
                    name: "v1beta1",
                    served: true,
                    storage: true,
                    subresources: { status: {} },
                    schema: {
                        openAPIV3Schema: {
                            type: "object",
                            properties: {
                                spec: { type: "object", properties: { nodeName: { type: "string" }, reason: { type: "string" } } },
                                status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                            },
                        },
                    },
                },
            ],
        },
    };
    fs.writeFileSync(path.join(dir, "nodemaintenances.crd.json"), JSON.stringify(crd, null, 2));
    return path.join(dir, OPERATOR_CSV_FILE);
}

/** Entitlement data: the bytes that must never reach the stack's state. */
export const ENTITLEMENT_MARKER = "REAL-TIER-ENTITLEMENT-KEY-0f3c9a";

/** A webhook of another team's, whose caBundle the stack injects; it matches nothing, so it never gates a request. */
export const POLICY_WEBHOOK = "real-policy-webhook";
export const TRUST_CONFIGMAP = "trusted-webhook-ca";
export const OLM_AGGREGATE_VIEW = "aggregate-olm-view";

/** The objects that exist before the stack: namespaces, the shared sources, the CSI driver, the caInjection targets. */
export function preexistingObjects(): object[] {
    const namespace = (name: string) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
    // Keys differ per namespace: a pod gets both, and no key may come from two Secrets (docs/subscriptions.md, "Key overlap").
    const entitlement = (namespace: string, prefix: string) => ({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "etc-pki-entitlement", namespace },
        type: "Opaque",
        stringData: {
            [`${prefix}.pem`]: `-----BEGIN CERTIFICATE-----\n${ENTITLEMENT_MARKER}\n-----END CERTIFICATE-----\n`,
            [`${prefix}-key.pem`]: ENTITLEMENT_MARKER,
        },
    });
    // What OLM's own install leaves on a cluster: its aggregate role, as OLM ships it
    // (operator-lifecycle-manager deploy/chart/templates/0000_50_olm_09-aggregated.clusterrole.yaml),
    // which the stack adopts (upsertExistingObjects, retainOnDelete), and OLMConfig/cluster, which it patches.
    const olmAggregateView = {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: {
            name: OLM_AGGREGATE_VIEW,
            labels: Object.fromEntries(["admin", "edit", "view"].map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, "true"])),
        },
        rules: [
            {
                apiGroups: ["operators.coreos.com"],
                resources: ["clusterserviceversions", "catalogsources", "installplans", "subscriptions", "operatorgroups"],
                verbs: ["get", "list", "watch"],
            },
            {
                apiGroups: ["packages.operators.coreos.com"],
                resources: ["packagemanifests", "packagemanifests/icon"],
                verbs: ["get", "list", "watch"],
            },
        ],
    };
    const olmConfig = {
        apiVersion: "operators.coreos.com/v1",
        kind: "OLMConfig",
        metadata: { name: "cluster" },
        spec: { features: { packageServerSyncInterval: "12h" } },
    };
    return [
        olmAggregateView,
        olmConfig,
        namespace(CONFIG_NAMESPACE),
        namespace(TEAM_NAMESPACE),
        namespace(DRIVER.namespace),
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: DRIVER.name, namespace: DRIVER.namespace } },
        entitlement(CONFIG_NAMESPACE, "cluster-entitlement"),
        entitlement(TEAM_NAMESPACE, "team-entitlement"),
        {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "satellite-repos", namespace: CONFIG_NAMESPACE },
            data: { "redhat.repo": "[satellite]\nname=satellite\nbaseurl=https://satellite.invalid/pulp/repos\n" },
        },
        // The Shared Resource CSI driver as a cluster with it installed has it (its node plugin is not needed to admit pods).
        {
            apiVersion: "storage.k8s.io/v1",
            kind: "CSIDriver",
            metadata: { name: "csi.sharedresource.openshift.io" },
            spec: { attachRequired: false, podInfoOnMount: true, volumeLifecycleModes: ["Ephemeral"] },
        },
        {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: TRUST_CONFIGMAP, namespace: CONFIG_NAMESPACE, labels: { team: "security" } },
            data: { owner: "security team" },
        },
        {
            apiVersion: "admissionregistration.k8s.io/v1",
            kind: "ValidatingWebhookConfiguration",
            metadata: { name: POLICY_WEBHOOK, labels: { team: "policy" } },
            webhooks: [
                {
                    name: "policy.real.example.com",
                    admissionReviewVersions: ["v1"],
                    sideEffects: "None",
                    failurePolicy: "Ignore",
                    clientConfig: { service: { name: "policy-webhook", namespace: CONFIG_NAMESPACE, path: "/validate" } },
                    namespaceSelector: { matchLabels: { "real.example.com/policy": "enforced" } },
                    rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
                },
            ],
        },
    ];
}

/**
 * A team's build identity: ServiceAccount `name` in `namespace` and a RoleBinding `<name>-edit` to
 * `edit`, which the ClusterBundle's role aggregates to (so it may use the bundle's shares).
 */
export function editServiceAccount(namespace: string, name: string): KubeObject[] {
    return [
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "RoleBinding",
            metadata: { name: `${name}-edit`, namespace },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "edit" },
            subjects: [{ kind: "ServiceAccount", name, namespace }],
        },
    ];
}

/** The full stack: self-signed certificates, caInjection, subscriptions with both bundle kinds, one operator, the RBAC toggles. */
export function fullStackConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
        cluster: { name: "real", platform: "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
        certificates: { mode: "self-signed" },
        caInjection: [
            { kind: "ConfigMap", name: TRUST_CONFIGMAP, namespace: CONFIG_NAMESPACE },
            // The stack issues the policy backend's serving certificate, so the CA it injects is the one that backend serves.
            {
                kind: "ValidatingWebhookConfiguration",
                name: POLICY_WEBHOOK,
                caSource: { issue: { service: `${CONFIG_NAMESPACE}/policy-webhook`, secretName: "policy-webhook-tls" } },
            },
        ],
        subscriptions: {
            enabled: true,
            namespace: "subscription-injection",
            webhook: { replicas: 2, failurePolicy: "Fail", timeoutSeconds: 10 },
            clusterBundles: [
                {
                    name: "cluster",
                    entitlements: [{ name: "etc-pki-entitlement", namespace: CONFIG_NAMESPACE }],
                    yumRepositories: [{ name: "satellite-repos", namespace: CONFIG_NAMESPACE }],
                    aggregateToClusterRoles: ["admin", "edit"],
                },
            ],
            bundles: [
                { name: "subscription", namespace: TEAM_NAMESPACE, alwaysInject: true, entitlements: [{ name: "etc-pki-entitlement" }] },
            ],
            sharedResourceDriver: { serviceAccount: { ...DRIVER } },
        },
        // RBAC toggles: OLM's aggregate roles adopted, AllNamespaces permissions confined to rbacNamespaces, copied CSVs off.
        olm: {
            disableOLMAggregateCRDRoles: false,
            disableAggregateCRDRoles: false,
            disableAllNamespacePermissionPromotion: true,
            manageOLMConfig: true,
        },
        operators: [
            {
                name: "node-maintenance",
                csv: operatorBundle(realEnv("REAL_WORK")),
                namespace: "node-maintenance",
                createNamespace: true,
                targetNamespaces: [],
                rbacNamespaces: [TEAM_NAMESPACE],
            },
        ],
        webhookImage: {
            repository: `${realEnv("REAL_REGISTRY")}/cluster-platform/subscription-webhook`,
            baseImage: realEnv("REAL_BASE_IMAGE"),
            output: "registry",
        },
        aws: { enabled: false },
        ...overrides,
    };
}

/**
 * What a stack of fullStackConfig keeps on destroy, by design (retainOnDelete; docs/operations.md,
 * "Objects the stack does not own"): the subscription CRDs, with the teams' custom resources in them,
 * OLM's two aggregate roles (adopted where OLM made them: aggregate-olm-view here; aggregate-olm-edit,
 * which no fixture makes, created and then left as OLM's would be; components/operator/rbac.ts
 * olmAggregateRoles), and with the operator its CRD. With the operator's bundle installed more than
 * once (`installs` > 1, bench:real's operators family), also the per-API roles the installs share,
 * kept with the CRD as OLM leaves them: OLM's `ensureClusterRolesForCSV` names them
 * `<crd>-<version>-admin|edit|view|crdview` (components/operator/install.ts, declareRbac). As
 * helpers/destroy.ts refs.
 */
export function fullStackKept(options: { operator: boolean; installs?: number } = { operator: true }): string[] {
    const crd = "nodemaintenances.nodemaintenance.medik8s.io";
    const shared = options.operator && (options.installs ?? 1) > 1;
    return [
        "ClusterRole/aggregate-olm-edit",
        `ClusterRole/${OLM_AGGREGATE_VIEW}`,
        "CustomResourceDefinition/bundles.subscription.openshift.io",
        "CustomResourceDefinition/clusterbundles.subscription.openshift.io",
        ...(options.operator ? [`CustomResourceDefinition/${crd}`] : []),
        ...(shared ? ["admin", "edit", "view", "crdview"].map((suffix) => `ClusterRole/${crd}-v1beta1-${suffix}`) : []),
    ];
}

/** The repository's compiled webhook must exist: the image packages dist/webhook. */
export function requireBuild(root: string): void {
    if (!fs.existsSync(path.join(root, "dist", "webhook", "main.js"))) {
        throw new Error("dist/webhook/main.js is missing: run npm run build before the real tier");
    }
}

/** The sample widget operator's CRD, kept on destroy (a test deletes it). */
export const WIDGET_CRD = "widgets.samples.cluster-platform.io";

/**
 * A stack of operator installs alone (subscriptions and AWS off) on the run's cluster: what every
 * operator-focused real-tier file starts from.
 */
export function operatorsOnlyStack(
    operators: readonly object[],
    options: { platform?: "kubernetes" | "openshift"; certificates?: "self-signed" | "service-ca" } = {},
): Record<string, unknown> {
    return {
        cluster: { name: "real", platform: options.platform ?? "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
        certificates: { mode: options.certificates ?? "self-signed" },
        subscriptions: { enabled: false },
        aws: { enabled: false },
        operators,
    };
}

/**
 * A small stack (issue 39's day-2 tests): the sample widget operator, as its bundle ships, in a
 * namespace the stack creates. Its webhooks are configured but never called (no Widget is written).
 */
export function widgetOperatorStack(namespace: string): Record<string, unknown> {
    return operatorsOnlyStack([
        {
            name: "widgets",
            csv: path.resolve(
                __dirname,
                "..",
                "..",
                "fixtures",
                "operators",
                "widget-operator",
                "manifests",
                "widget-operator.clusterserviceversion.yaml",
            ),
            namespace,
            createNamespace: true,
            targetNamespaces: [],
        },
    ]);
}

/**
 * The widget CSV without its webhooks, and so without the serving-certificate volume its Deployments
 * mount: with no webhook OLM mounts no certificate, and a pod naming a Secret nobody provides would
 * never start (the pre-flight refuses it: components/operator/pod-references.ts).
 */
export function withoutWebhooks(csv: KubeObject): void {
    delete csv.spec.webhookdefinitions;
    for (const deployment of csv.spec.install.spec.deployments as KubeObject[]) {
        const pod = deployment.spec.template.spec;
        const certificates = new Set(
            ((pod.volumes ?? []) as KubeObject[]).filter((v) => v.secret?.secretName === "webhook-server-cert").map((v) => v.name),
        );
        pod.volumes = ((pod.volumes ?? []) as KubeObject[]).filter((v) => !certificates.has(v.name));
        for (const container of pod.containers as KubeObject[]) {
            container.volumeMounts = ((container.volumeMounts ?? []) as KubeObject[]).filter((m) => !certificates.has(m.name));
        }
    }
}

/** The sample widget operator's bundle (tests/fixtures/operators/widget-operator), as tests install it. */
const WIDGET_SAMPLE = path.resolve(__dirname, "..", "..", "fixtures", "operators", "widget-operator", "manifests");
const WIDGET_CSV_FILE = "widget-operator.clusterserviceversion.yaml";

/**
 * The sample widget bundle written under the run's work directory as `bundles/<name>`, its CSV and
 * the other manifests changed by `edit` (default: the webhooks dropped, since no operator container
 * runs here to serve them); returns the CSV's path.
 */
export function widgetBundle(name: string, edit: (csv: KubeObject, manifests: Map<string, KubeObject>) => void = withoutWebhooks): string {
    const dir = path.join(realEnv("REAL_WORK"), "bundles", name);
    fs.mkdirSync(dir, { recursive: true });
    const csv = parse(fs.readFileSync(path.join(WIDGET_SAMPLE, WIDGET_CSV_FILE), "utf8")) as KubeObject;
    const manifests = new Map(
        fs
            .readdirSync(WIDGET_SAMPLE)
            .filter((file) => file !== WIDGET_CSV_FILE)
            .map((file) => [file, parse(fs.readFileSync(path.join(WIDGET_SAMPLE, file), "utf8")) as KubeObject]),
    );
    edit(csv, manifests);
    fs.writeFileSync(path.join(dir, WIDGET_CSV_FILE), stringify(csv));
    for (const [file, object] of manifests) {
        fs.writeFileSync(path.join(dir, file), stringify(object));
    }
    return path.join(dir, WIDGET_CSV_FILE);
}
