/**
 * Pre-flight and plan of every operator install: reads each bundle, checks everything a CSV
 * and the stack config can get wrong (all problems at once, before any resource is
 * registered), and derives what the components will declare. Pure apart from reading the
 * bundle files; index.ts runs it before it constructs anything.
 */
import { webhookDescriptionProblems } from "../admission-webhook/rules";
import { admissionWebhookProblems } from "../admission-webhook/structure";
import { webhookCertificateVolumes } from "../admission-webhook/build";
import type { OlmConfig, OperatorConfig } from "../config/schema";
import { DNS1123_SUBDOMAIN_RULE, isDns1123Subdomain } from "../shared/k8s-names";
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { WebhookBackend } from "../admission-webhook/contract";
import { ApiServicePlan, apiServicesByDeployment } from "./apiservices";
import { CrdObject, loadBundle, LoadedBundle, ManifestReader } from "./bundle";
import { BundleObjectPlan, bundleObjectKey, planBundleObjects } from "./bundle-objects";
import {
    inEveryNamespace,
    inEveryOpenShiftNamespace,
    operatorCreators,
    PodRequirement,
    podReferences,
    referenceKey,
    serviceAccountPullSecrets,
    servingCertSecrets,
} from "./pod-references";
import { OPERATOR_LABEL, platformLabels } from "../shared/labels";
import { ClusterServiceVersion, InstallModeType, permissionsOf } from "./csv";
import { CertificateMount, DeploymentInput, withCertificateMount } from "./deployments";
import {
    installModeListProblems,
    installModeSet,
    requestedInstallMode,
    supportsAllNamespacesOnly,
    unsupportedInstallMode,
} from "./install-modes";
import { minKubeVersionParseProblem } from "./min-kube-version";
import type { NativeApi } from "./native-apis";
import { contentHash } from "./names";
import { podSelectorOf } from "./pod-selector";
import { effectiveReplicas, singlePodWarning } from "./replicas";
import { shareClusterObjects, SharedObjects } from "./shared-objects";
import type { UpgradeEdges } from "./upgrade-path";
import { OperatorConditionObject, operatorConditionFor } from "./olm-environment";
import {
    deriveOperatorRbac,
    objectKey,
    OlmToggles,
    OwnedApi,
    RbacObject,
    ServedCertificate,
    serviceAccountOf,
    servingCertificateRbac,
    watchNamespaces,
} from "./rbac";
import { ConversionPlan, DeploymentWebhooks, webhookCertSecretName, webhooksByDeployment, webhookServiceNameOf } from "./webhooks";

export interface CrdPlan {
    name: string;
    /** Its kind, as the CSV's owned entry names it (a CRD patch must name group and kind: crd-identity.ts). */
    kind: string;
    /** The manifest from the bundle folder; undefined when the CRD must already exist. */
    manifest?: CrdObject;
    /** The conversion webhook that converts it, if any. */
    conversion?: ConversionPlan;
    /** Set when another install of the same bundle declares it (shared-objects.ts): that install's name. */
    sharedFrom?: string;
}

export interface DeploymentPlan {
    name: string;
    /** Everything `deploymentFor` needs except the certificate mount (added by the component). */
    input: DeploymentInput;
    /** What the deployment serves, when it backs webhooks. */
    webhooks?: DeploymentWebhooks;
    /** The owned APIServices it serves. */
    apiServices?: ApiServicePlan[];
    /** Its Service and serving certificate, when it backs webhooks or APIServices. */
    served?: ServedDeployment;
}

/** A deployment the install fronts with a Service and a serving certificate, as OLM does. */
export interface ServedDeployment extends ServedCertificate {
    /** The Service's backend (one port: the webhooks' or the APIServices' containerPort). */
    backend: WebhookBackend;
}

/** The ConfigMap whose replacement removes the old webhooks before deployments roll (docs/operators.md, *Webhook upgrades*). */
export interface WebhookGeneration {
    name: string;
    hash: string;
    /** Canonical JSON of every admission webhook with its backend. */
    definitions: string;
}

export interface OperatorPlan {
    config: OperatorConfig;
    csvName: string;
    installMode: InstallModeType;
    /** `olm.targetNamespaces` / WATCH_NAMESPACE. */
    watchNamespaces: string[];
    /**
     * Set when an AllNamespaces install is confined to its `rbacNamespaces` (promotion disabled):
     * its webhooks see those namespaces only (webhooks.ts, `webhookScopeOf`).
     */
    confinedNamespaces?: string[];
    serviceAccounts: string[];
    crds: CrdPlan[];
    rbac: RbacObject[];
    deployments: DeploymentPlan[];
    webhookGeneration: WebhookGeneration;
    /** The OperatorCondition OLM would generate for the CSV (declared where the cluster serves it). */
    operatorCondition: OperatorConditionObject;
    /**
     * Cluster-scoped objects (`objectKey`) this install shares with other installs of the same
     * bundle in other namespaces (shared-objects.ts): declared by the first such install, kept
     * on its removal (the next install takes them back), absent from the others' plans.
     */
    shared: SharedObjects;
    /** The CSV's upgrade edges, checked against the installed CSV (upgrade-path.ts). */
    edges: UpgradeEdges;
    /** `spec.minKubeVersion` ("" for none), checked against a live cluster's version before registration (min-kube-version.ts). */
    minKubeVersion: string;
    /** `spec.nativeAPIs`, checked against a live cluster's discovery before registration (native-apis.ts). */
    nativeApis: NativeApi[];
    /**
     * The bundle's other objects, as OLM's ExecutePlan creates them (bundle-objects.ts). A bundle
     * ServiceAccount the CSV also names is not here: it is `serviceAccountObjects`' entry.
     */
    bundleObjects: BundleObjectPlan[];
    /** The bundle's own ServiceAccount objects for ServiceAccounts the CSV names (declared with their content). */
    serviceAccountObjects: Record<string, Record<string, unknown>>;
    /** Objects the Deployments' pods need that neither the bundle nor the stack provides: the cluster must have them (pre-flight). */
    clusterReferences: PodRequirement[];
}

export interface OperatorsPlan {
    plans: OperatorPlan[];
    problems: Problem[];
    warnings: string[];
}

/** The three RBAC toggles out of the `olm` config section. */
export function togglesOf(olm: OlmConfig): OlmToggles {
    return {
        disableOLMAggregateCRDRoles: olm.disableOLMAggregateCRDRoles,
        disableAggregateCRDRoles: olm.disableAggregateCRDRoles,
        disableAllNamespacePermissionPromotion: olm.disableAllNamespacePermissionPromotion,
    };
}

/** Plans every operator and checks the set (objects two installs would both declare). */
export function planOperators(operators: readonly OperatorConfig[], olm: OlmConfig, projectRoot: string): OperatorsPlan {
    const problems: Problem[] = [];
    const warnings: string[] = [];
    const plans: OperatorPlan[] = [];
    const reader = new ManifestReader();
    operators.forEach((config, index) => {
        const result = planOperator(config, index, olm, projectRoot, reader);
        problems.push(...result.problems);
        warnings.push(...result.warnings);
        if (result.plan) {
            plans.push(result.plan);
        }
    });
    const sharing = shareClusterObjects(plans, operators);
    problems.push(...sharing.problems, ...collisions(sharing.plans, operators));
    return { plans: sharing.plans, problems, warnings };
}

interface SingleResult {
    plan?: OperatorPlan;
    problems: Problem[];
    warnings: string[];
}

export function planOperator(
    config: OperatorConfig,
    index: number,
    olm: OlmConfig,
    projectRoot: string,
    reader = new ManifestReader(),
): SingleResult {
    const csvPath = formatPath(["operators", index, "csv"]);
    // The bundle file in full (a long path cut short would not name the bundle).
    const fileProblem = (field: string, message: string): Problem => ({
        path: csvPath,
        message: `${JSON.stringify(config.csv)}${field === "" ? "" : ` ${field}`}: ${message}`,
    });
    const loaded = loadBundle(projectRoot, config.csv, reader);
    if (!loaded.ok) {
        return { problems: loaded.problems.map((p) => fileProblem(p.field, p.message)), warnings: [] };
    }
    const bundle = loaded.bundle;
    const csv = bundle.csv;
    const problems: Problem[] = [];
    const warnings: string[] = [];
    const warn = (text: string) => warnings.push(`${csvPath}: operator ${describeValue(config.name)}: ${text}`);
    const toggles = togglesOf(olm);

    problems.push(...csvStructureProblems(csv).map((p) => fileProblem(p.field, p.message)));
    // A minKubeVersion OLM cannot read refuses the CSV whatever the cluster; one it can read is compared with a live cluster's version (pre-flight).
    const unreadable = minKubeVersionParseProblem(csv.spec.minKubeVersion ?? "");
    if (unreadable !== undefined) problems.push(fileProblem("spec.minKubeVersion", unreadable));

    // Install modes: the list itself, then the shape targetNamespaces asks for.
    for (const message of installModeListProblems(csv)) {
        problems.push(fileProblem("spec.installModes", message));
    }
    const modes = installModeSet(csv);
    const unsupported = unsupportedInstallMode(modes, config.namespace, config.targetNamespaces);
    if (unsupported) {
        problems.push({
            path: formatPath(["operators", index, "targetNamespaces"]),
            message: `operator ${describeValue(config.name)}: ${describeValue(config.targetNamespaces)}: ${unsupported}`,
        });
    }

    // Webhooks: OLM's rules, then the mapping onto one Service per deployment.
    const deployments = csv.spec.install.spec.deployments;
    const owned = csv.spec.customresourcedefinitions?.owned ?? [];
    const webhookProblems = webhookDescriptionProblems(csv.spec.webhookdefinitions ?? [], {
        operator: config.name,
        deployments: deployments.map((d) => ({ name: d.name, portNames: namedPorts(d.spec.template.spec.containers) })),
        ownedCrds: owned.map((c) => c.name),
        allNamespacesOnly: supportsAllNamespacesOnly(modes),
    });
    problems.push(...webhookProblems.map((p) => fileProblem("", p.message)));
    const mapping = webhooksByDeployment(config.name, csv, config.namespace);
    problems.push(...mapping.problems.map((p) => fileProblem(p.field, p.message)));
    if (problems.length === 0) {
        // The AdmissionWebhook component's own structural rules, on what this install will pass it
        // (they also cover what the CSV checks above do not, such as the Service name).
        for (const [deploymentName, entry] of mapping.byDeployment) {
            const structural = admissionWebhookProblems({
                backend: entry.backend,
                webhooks: entry.webhooks,
                targetNamespaces: config.targetNamespaces.length === 0 ? undefined : config.targetNamespaces,
            }).filter((p) => !(p.path === "webhooks" && entry.conversions.length > 0));
            for (const p of structural) {
                problems.push(
                    fileProblem(
                        "",
                        `operator ${describeValue(config.name)}: deployment ${describeValue(deploymentName)}: ${p.path}: ${p.message}`,
                    ),
                );
            }
        }
    }

    for (const [deploymentName, entry] of mapping.byDeployment) {
        const deployment = deployments.find((d) => d.name === deploymentName);
        const replicas = deployment ? effectiveReplicas(deployment, config.config) : 1;
        const warning = singlePodWarning(deploymentName, entry.webhooks, replicas, formatPath(["operators", index, "config"]));
        if (warning) {
            warn(warning);
        }
    }

    // Owned APIServices: OLM's pre-flight rules, then one Service port per deployment.
    const apiServiceMapping = apiServicesByDeployment(config.name, csv, config.namespace);
    problems.push(...apiServiceMapping.problems.map((p) => fileProblem(p.field, p.message)));
    const served = servedDeployments(config.name, csv, config.namespace, mapping.byDeployment, apiServiceMapping.byDeployment);
    problems.push(...served.problems.map((p) => fileProblem(p.field, p.message)));

    // Owned CRDs: manifests from the bundle folder.
    const crds = crdPlans(bundle, mapping.byDeployment, problems, warn, fileProblem);
    reportRequired(csv, warn);
    if (bundle.skipped.length > 0) {
        warn(`left out of the bundle as OLM's bundle parser (opm) leaves them out: ${bundle.skipped.join("; ")}`);
    }
    const serviceAccounts = serviceAccountsOf(csv);
    const bundlePlan = planBundleObjects(bundle.objects, {
        csvName: csv.metadata.name,
        namespace: config.namespace,
        labels: platformLabels("operator", { [OPERATOR_LABEL]: config.name }),
        serviceAccounts,
    });
    problems.push(...bundlePlan.problems.map((p) => fileProblem(p.field, p.message)));
    const serviceAccountObjects: Record<string, Record<string, unknown>> = {};
    const bundleObjects = bundlePlan.objects.filter((o) => {
        if (o.kind === "ServiceAccount" && serviceAccounts.includes(o.name)) {
            serviceAccountObjects[o.name] = o.manifest;
            return false;
        }
        return true;
    });

    const rbacNamespaces = config.rbacNamespaces;
    if (config.targetNamespaces.length === 0 && toggles.disableAllNamespacePermissionPromotion && supportsAllNamespacesOnly(modes)) {
        warn(
            `its CSV supports only AllNamespaces, and with olm.disableAllNamespacePermissionPromotion it gets permissions in ${(rbacNamespaces ?? []).length > 0 ? `rbacNamespaces (${(rbacNamespaces ?? []).join(", ")})` : "no namespace (rbacNamespaces is empty)"} only, while it expects to watch every namespace: it may fail or see part of the cluster`,
        );
    }
    const watch = watchNamespaces({ targetNamespaces: config.targetNamespaces, rbacNamespaces, toggles });
    const { permissions, clusterPermissions } = permissionsOf(csv);
    const rbac = deriveOperatorRbac({
        operator: config.name,
        csvName: csv.metadata.name,
        namespace: config.namespace,
        targetNamespaces: config.targetNamespaces,
        rbacNamespaces,
        permissions,
        clusterPermissions,
        ownedApis: ownedApis(csv),
        toggles,
    });
    for (const deployment of served.byDeployment.values()) {
        rbac.push(...servingCertificateRbac(deployment, config.name));
    }
    const overrideWatchNamespace = config.targetNamespaces.length === 0 && toggles.disableAllNamespacePermissionPromotion;
    const deploymentPlans: DeploymentPlan[] = deployments.map((deployment) => ({
        name: deployment.name,
        input: {
            operator: config.name,
            csvName: csv.metadata.name,
            ...(csv.spec.version === undefined ? {} : { csvVersion: csv.spec.version }),
            namespace: config.namespace,
            deployment,
            csvAnnotations: csv.metadata.annotations ?? {},
            watchNamespaces: watch,
            overrideWatchNamespace,
            ...(config.config ? { overrides: config.config } : {}),
        },
        webhooks: mapping.byDeployment.get(deployment.name),
        apiServices: apiServiceMapping.byDeployment.get(deployment.name),
        served: served.byDeployment.get(deployment.name),
    }));

    // A bundle object named like one the stack generates for the install: OLM's CSV install replaces it with its own.
    const generated = new Set([
        ...rbac.map(objectKey),
        ...[...served.byDeployment.values()].flatMap((d) => [
            `Service ${config.namespace}/${d.serviceName}`,
            `Secret ${config.namespace}/${d.secretName}`,
        ]),
    ]);
    for (const object of bundleObjects.filter((o) => generated.has(bundleObjectKey(o)))) {
        warn(
            `bundle file ${describeValue(object.file)}: ${bundleObjectKey(object)} is replaced by the one the stack generates for the CSV, as OLM's install of the CSV replaces it`,
        );
    }
    bundleObjects.splice(0, bundleObjects.length, ...bundleObjects.filter((o) => !generated.has(bundleObjectKey(o))));
    const clusterReferences = unprovidedReferences(
        config,
        index,
        csv,
        { served: new Set(served.byDeployment.keys()), serviceAccounts, bundleObjects: bundlePlan.objects },
        warn,
    );

    if (problems.length > 0) {
        return { problems, warnings };
    }
    return {
        problems,
        warnings,
        plan: {
            config,
            csvName: csv.metadata.name,
            installMode: requestedInstallMode(config.namespace, config.targetNamespaces),
            watchNamespaces: watch,
            ...(overrideWatchNamespace ? { confinedNamespaces: watch } : {}),
            serviceAccounts,
            crds,
            rbac,
            deployments: deploymentPlans,
            // Named after the install's first name, so a rename (previousNames) leaves the webhooks alone.
            webhookGeneration: webhookGenerationOf(config.previousNames?.[0] ?? config.name, mapping.byDeployment),
            operatorCondition: operatorConditionFor(csv, config.namespace, config.name),
            shared: { declared: [], fromOthers: {} },
            edges: {
                csvName: csv.metadata.name,
                replaces: csv.spec.replaces,
                skips: csv.spec.skips ?? [],
                skipRange: csv.metadata.annotations?.["olm.skipRange"],
            },
            minKubeVersion: csv.spec.minKubeVersion ?? "",
            nativeApis: csv.spec.nativeAPIs ?? [],
            bundleObjects,
            serviceAccountObjects,
            clusterReferences,
        },
    };
}

/**
 * The objects the Deployments' pods need (pod-references.ts) that neither the bundle nor the
 * stack provides, for the pre-flight to ask the cluster about, and warnings for the ones a real
 * install provides later or does without. The stack provides the ServiceAccounts it creates and
 * each served deployment's serving Secret (OLM's certificate volumes replace the bundle's own of
 * the same name, and its mounts at the same paths); every namespace has what Kubernetes puts in
 * each (`EVERY_NAMESPACE`). OpenShift also provides its service CA ConfigMap and the Secrets its
 * service-ca creates for the bundle's annotated Services (required on Kubernetes only); another
 * Deployment of the CSV may create the object at start (`operatorCreators`: a warning); a
 * missing image pull Secret does not stop the pod (a warning).
 */
function unprovidedReferences(
    config: OperatorConfig,
    index: number,
    csv: ClusterServiceVersion,
    provided: { served: ReadonlySet<string>; serviceAccounts: readonly string[]; bundleObjects: readonly BundleObjectPlan[] },
    warn: (text: string) => void,
): PodRequirement[] {
    const namespace = config.namespace;
    const deployments = csv.spec.install.spec.deployments;
    const keys = new Set([
        ...provided.bundleObjects.map(bundleObjectKey),
        ...provided.serviceAccounts.map((sa) => `ServiceAccount ${namespace}/${sa}`),
        ...[...provided.served].map((d) => `Secret ${namespace}/${webhookCertSecretName(d)}`),
    ]);
    const serviceAccountObjects = new Map(
        provided.bundleObjects.filter((o) => o.kind === "ServiceAccount").map((o) => [o.name, o.manifest]),
    );
    const servingCerts = servingCertSecrets(provided.bundleObjects.filter((o) => o.kind === "Service").map((o) => o.manifest));
    const identities = deployments.map((d) => ({
        name: d.name,
        serviceAccount: d.spec.template.spec.serviceAccountName || "default",
    }));
    const { permissions, clusterPermissions } = permissionsOf(csv);
    const grants = [
        ...permissions.map((p) => ({ serviceAccount: serviceAccountOf(p), cluster: false, rules: p.rules })),
        ...clusterPermissions.map((p) => ({ serviceAccount: serviceAccountOf(p), cluster: true, rules: p.rules })),
    ];
    const required: PodRequirement[] = [];
    deployments.forEach((deployment, i) => {
        const at = (field: string) =>
            `${JSON.stringify(config.csv)} ${formatPath(["spec", "install", "spec", "deployments", i, "spec"])}.${field}`;
        // The pod as OLM deploys it: a served deployment gets OLM's certificate volumes, which replace
        // the bundle's volume or mount of the same name or path (its Secret is provided above).
        const spec = provided.served.has(deployment.name)
            ? {
                  ...deployment.spec,
                  template: {
                      ...deployment.spec.template,
                      spec: withCertificateMount(
                          deployment.spec.template.spec as Parameters<typeof withCertificateMount>[0],
                          webhookCertificateVolumes(webhookCertSecretName(deployment.name)) as unknown as CertificateMount,
                      ),
                  },
              }
            : deployment.spec;
        const references = podReferences(spec as unknown as Record<string, unknown>, namespace);
        const serviceAccount = deployment.spec.template.spec.serviceAccountName ?? "default";
        const account = serviceAccountObjects.get(serviceAccount);
        const pullSecrets = account
            ? serviceAccountPullSecrets(account, namespace).map((r) => ({ ...r, field: `(its ServiceAccount's) ${r.field}` }))
            : [];
        const who = `deployment ${describeValue(deployment.name)} of operator ${describeValue(config.name)}`;
        for (const reference of [...references, ...pullSecrets]) {
            const key = referenceKey(reference.ref);
            if (keys.has(key) || inEveryNamespace(reference.ref)) continue;
            const service = reference.ref.kind === "Secret" ? servingCerts.get(reference.ref.name) : undefined;
            const openShiftProvides = service
                ? `OpenShift's service-ca creates it for the bundle's Service ${describeValue(service)} (its serving-cert-secret-name annotation)`
                : inEveryOpenShiftNamespace(reference.ref);
            // Who provides it on OpenShift is known; only otherwise may another Deployment of the CSV be the one.
            const creators = openShiftProvides ? [] : operatorCreators(reference.ref, deployment.name, identities, grants);
            if (reference.pullOnly) {
                warn(
                    `${who} names image pull Secret ${key} (${at(reference.field)}), which neither its bundle nor this stack provides: unless it exists, the kubelet pulls its images with the node's credentials or none (an image that needs it fails to pull)`,
                );
            } else if (creators.length > 0) {
                warn(
                    `${who} needs ${key} (${at(reference.field)}), which neither its bundle nor this stack provides; deployment ${creators.map((c) => describeValue(c)).join(", ")} of the same CSV may create it (its ServiceAccount may create ${reference.ref.plural}), and its pods wait until it exists`,
                );
            } else {
                const fix = service
                    ? `on Kubernetes, where no service-ca runs, create a kubernetes.io/tls Secret ${describeValue(reference.ref.name)} for Service ${describeValue(service)} first (cert-manager can issue one)`
                    : "create it first, or add it to the bundle";
                required.push({
                    ref: reference.ref,
                    path: formatPath(["operators", index, "csv"]),
                    why: `${who} needs it (${at(reference.field)}), and neither its bundle nor this stack provides it${openShiftProvides ? ` (${openShiftProvides}, on OpenShift only)` : ""}, so ${openShiftProvides ? "on Kubernetes " : ""}its pods would never start (OLM would install the bundle all the same and leave them waiting); ${fix}`,
                    ...(openShiftProvides ? { openShiftProvides } : {}),
                });
            }
        }
    });
    return required;
}

/** OLM's checks on names a CSV gives objects (duplicate or invalid deployment and ServiceAccount names). */
function csvStructureProblems(csv: ClusterServiceVersion): { field: string; message: string }[] {
    const problems: { field: string; message: string }[] = [];
    const seen = new Map<string, number>();
    csv.spec.install.spec.deployments.forEach((deployment, i) => {
        const field = formatPath(["spec", "install", "spec", "deployments", i, "name"]);
        const first = seen.get(deployment.name);
        if (first !== undefined) {
            problems.push({
                field,
                message: `duplicate strategy deployment spec ${describeValue(deployment.name)} (already at deployments[${first}])`,
            });
        }
        seen.set(deployment.name, i);
        if (!isDns1123Subdomain(deployment.name)) {
            problems.push({ field, message: `${describeValue(deployment.name)} ${DNS1123_SUBDOMAIN_RULE}` });
        }
    });
    const { permissions, clusterPermissions } = permissionsOf(csv);
    for (const [list, key] of [
        [permissions, "permissions"],
        [clusterPermissions, "clusterPermissions"],
    ] as const) {
        list.forEach((permission, i) => {
            const sa = serviceAccountOf(permission);
            if (!isDns1123Subdomain(sa)) {
                problems.push({
                    field: formatPath(["spec", "install", "spec", key, i, "serviceAccountName"]),
                    message: `${describeValue(sa)} ${DNS1123_SUBDOMAIN_RULE}`,
                });
            }
        });
    }
    return problems;
}

/**
 * Every deployment that serves webhooks, conversion webhooks or APIServices, with its Service
 * backend and ServiceAccount. OLM gives such a Service one port per distinct containerPort; this
 * stack gives it one, so a deployment's APIServices must use its webhooks' port (reported otherwise).
 */
function servedDeployments(
    operator: string,
    csv: ClusterServiceVersion,
    namespace: string,
    webhooks: Map<string, DeploymentWebhooks>,
    apiServices: Map<string, ApiServicePlan[]>,
): { byDeployment: Map<string, ServedDeployment>; problems: { field: string; message: string }[] } {
    const problems: { field: string; message: string }[] = [];
    const byDeployment = new Map<string, ServedDeployment>();
    for (const deployment of csv.spec.install.spec.deployments) {
        const webhookBackend = webhooks.get(deployment.name)?.backend;
        const served = apiServices.get(deployment.name) ?? [];
        if (!webhookBackend && served.length === 0) {
            continue;
        }
        const matchLabels = deployment.spec.selector.matchLabels ?? {};
        const port = served[0]?.service.port;
        const backend: WebhookBackend = webhookBackend ?? {
            deploymentName: deployment.name,
            namespace,
            matchLabels: podSelectorOf(deployment.name, matchLabels),
            servicePort: port,
            targetPort: port,
        };
        for (const apiService of served) {
            if (
                apiService.service.port !== backend.servicePort ||
                (webhookBackend && webhookBackend.targetPort !== apiService.service.port)
            ) {
                problems.push({
                    field: "spec.apiservicedefinitions.owned",
                    message: `operator ${describeValue(operator)}: owned APIService ${describeValue(apiService.name)} is served on port ${apiService.service.port}, but deployment ${describeValue(deployment.name)} already serves ${backend.servicePort} → ${backend.targetPort}; this stack gives each deployment one Service port`,
                });
            }
        }
        if (!webhookBackend && Object.keys(matchLabels).length === 0) {
            problems.push({
                field: "spec.apiservicedefinitions.owned",
                message: `operator ${describeValue(operator)}: deployment ${describeValue(deployment.name)} has no spec.selector.matchLabels, so the APIService's Service cannot select its pods`,
            });
        }
        const serviceName = webhookServiceNameOf(deployment.name);
        byDeployment.set(deployment.name, {
            backend,
            serviceName,
            secretName: webhookCertSecretName(deployment.name),
            namespace,
            // OLM binds the deployment's ServiceAccount, `default` when the pod names none (certresources.go).
            serviceAccount: deployment.spec.template.spec.serviceAccountName || "default",
        });
    }
    return { byDeployment, problems };
}

function namedPorts(containers: { ports?: { name?: string }[] }[]): string[] {
    return containers.flatMap((c) => (c.ports ?? []).flatMap((p) => (p.name ? [p.name] : [])));
}

function crdPlans(
    bundle: LoadedBundle,
    byDeployment: Map<string, DeploymentWebhooks>,
    problems: Problem[],
    warn: (text: string) => void,
    fileProblem: (field: string, message: string) => Problem,
): CrdPlan[] {
    const owned = bundle.csv.spec.customresourcedefinitions?.owned ?? [];
    const conversions = new Map<string, ConversionPlan>();
    for (const entry of byDeployment.values()) {
        for (const conversion of entry.conversions) {
            conversions.set(conversion.crd, conversion);
        }
    }
    const names = [...new Set(owned.map((c) => c.name))];
    const missing = names.filter((n) => !bundle.crds.has(n));
    if (bundle.crds.size > 0 && missing.length > 0) {
        for (const name of missing) {
            problems.push(
                fileProblem(
                    "spec.customresourcedefinitions.owned",
                    `owned custom resource definition ${describeValue(name)} not found in the bundle folder next to the CSV`,
                ),
            );
        }
    } else if (missing.length > 0) {
        warn(
            `no CRD manifests next to ${describeValue(bundle.csvFile)}: the owned CRDs (${missing.join(", ")}) must already exist in the cluster`,
        );
    }
    // OLM's requirement check: each owned entry's version must be served (`olm/requirements.go`, "CRD version not served").
    owned.forEach((entry, index) => {
        const manifest = bundle.crds.get(entry.name)?.object;
        if (manifest && !manifest.spec.versions.some((v) => v.name === entry.version && v.served)) {
            problems.push(
                fileProblem(
                    formatPath(["spec", "customresourcedefinitions", "owned", index, "version"]),
                    `custom resource definition ${describeValue(entry.name)}: version ${describeValue(entry.version)} is not served by its manifest (OLM's requirement status: CRD version not served)`,
                ),
            );
        }
    });
    return names.map((name) => {
        const manifest = bundle.crds.get(name)?.object;
        const conversion = conversions.get(name);
        if (conversion && manifest?.spec.preserveUnknownFields === true) {
            problems.push(
                fileProblem(
                    "spec.webhookdefinitions",
                    `custom resource definition ${describeValue(name)} must have .spec.preserveUnknownFields set to false to let API Server call webhook to do the conversion`,
                ),
            );
        }
        if (conversion && !manifest) {
            warn(
                `the conversion webhook ${describeValue(conversion.webhook)} is set on the existing CRD ${describeValue(name)} by a server-side-apply patch (live clusters only)`,
            );
        }
        const kind = manifest?.spec.names.kind ?? owned.find((o) => o.name === name)?.kind ?? "";
        return { name, kind, ...(manifest ? { manifest } : {}), ...(conversion ? { conversion } : {}) };
    });
}

function reportRequired(csv: ClusterServiceVersion, warn: (text: string) => void): void {
    const required = [
        ...(csv.spec.customresourcedefinitions?.required ?? []).map((c) => `${c.name} (${c.version})`),
        ...(csv.spec.apiservicedefinitions?.required ?? []).map((a) => `${a.version}.${a.group}`),
    ];
    if (required.length > 0) {
        warn(
            `requires APIs another operator provides (${required.join(", ")}); this stack does not resolve dependencies, install their operators too`,
        );
    }
}

/**
 * The APIs the per-API aggregate roles cover, as OLM derives them (operator-framework/
 * operator-lifecycle-manager `pkg/controller/operators/olm/operatorgroup.go`,
 * `ensureClusterRolesForCSV`): each owned CRD entry of the CSV with its `version` and `kind`, its
 * plural and group split from its name; each owned APIService with its name as the resource. A
 * CRD version the CSV does not list gets no roles of its own, as under OLM: the rules name the
 * group and resource, not the version, so the listed version's roles cover every version.
 */
export function ownedApis(csv: ClusterServiceVersion): OwnedApi[] {
    const apis: OwnedApi[] = [];
    const seen = new Set<string>();
    const add = (api: OwnedApi) => {
        const key = `${api.source}/${api.name}/${api.version}`;
        if (!seen.has(key)) {
            seen.add(key);
            apis.push(api);
        }
    };
    for (const owned of csv.spec.customresourcedefinitions?.owned ?? []) {
        const dot = owned.name.indexOf(".");
        add({
            name: owned.name,
            group: owned.name.slice(dot + 1),
            plural: owned.name.slice(0, dot),
            version: owned.version,
            kind: owned.kind,
            source: "CustomResourceDefinition",
        });
    }
    for (const owned of csv.spec.apiservicedefinitions?.owned ?? []) {
        add({ name: owned.name, group: owned.group, plural: owned.name, version: owned.version, kind: owned.kind, source: "APIService" });
    }
    return apis;
}

/** Every ServiceAccount the install needs: those its permissions bind and its deployments run as. */
export function serviceAccountsOf(csv: ClusterServiceVersion): string[] {
    const { permissions, clusterPermissions } = permissionsOf(csv);
    const names = [
        ...[...permissions, ...clusterPermissions].map(serviceAccountOf),
        ...csv.spec.install.spec.deployments.map((d) => d.spec.template.spec.serviceAccountName ?? "default"),
    ];
    return [...new Set(names)].filter((n) => n !== "default");
}

function webhookGenerationOf(operator: string, byDeployment: Map<string, DeploymentWebhooks>): WebhookGeneration {
    const definitions = [...byDeployment.values()]
        .filter((entry) => entry.webhooks.length > 0)
        .map((entry) => ({ backend: entry.backend, webhooks: entry.webhooks }));
    const hash = contentHash(definitions);
    return { name: webhookGenerationName(operator, hash), hash, definitions: JSON.stringify(definitions, null, 2) };
}

/** The webhook generation ConfigMap's name: the install's first name (a rename keeps it, so the webhooks stay) and the set's hash. */
export function webhookGenerationName(firstName: string, hash: string): string {
    return `${firstName}-webhooks-${hash}`;
}

/** Kubernetes objects two operator installs would both declare (a real cluster holds one). */
function collisions(plans: readonly OperatorPlan[], operators: readonly OperatorConfig[]): Problem[] {
    const owner = new Map<string, string>();
    const problems: Problem[] = [];
    const indexOf = (name: string) => operators.findIndex((o) => o.name === name);
    for (const plan of plans) {
        const namespace = plan.config.namespace;
        const keys = [
            ...plan.serviceAccounts.map((sa) => `ServiceAccount ${namespace}/${sa}`),
            ...plan.deployments.map((d) => `Deployment ${namespace}/${d.name}`),
            ...plan.deployments.filter((d) => d.served).map((d) => `Service ${namespace}/${webhookServiceNameOf(d.name)}`),
            ...plan.deployments.filter((d) => d.served).map((d) => `Secret ${namespace}/${webhookCertSecretName(d.name)}`),
            ...plan.deployments.flatMap((d) => d.apiServices ?? []).map((a) => `APIService ${a.name}`),
            `OperatorCondition ${namespace}/${plan.operatorCondition.metadata.name}`,
            // Declared CRDs (manifest or conversion patch); a CRD that must already exist is nobody's.
            ...plan.crds.filter((c) => c.manifest || c.conversion).map((c) => `CustomResourceDefinition ${c.name}`),
            ...plan.rbac.map(objectKey),
            ...plan.bundleObjects.map(bundleObjectKey),
            ...Object.keys(plan.serviceAccountObjects).map((sa) => `ServiceAccount ${namespace}/${sa}`),
        ];
        for (const key of new Set(keys)) {
            const other = owner.get(key);
            if (other !== undefined && other !== plan.config.name) {
                problems.push({
                    path: formatPath(["operators", indexOf(plan.config.name)]),
                    message: `operator ${describeValue(plan.config.name)}: ${key} is also declared by operator ${describeValue(other)} (operators[${indexOf(other)}]); one cluster object cannot belong to two installs`,
                });
            } else {
                owner.set(key, plan.config.name);
            }
        }
    }
    return problems;
}
