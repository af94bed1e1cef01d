/**
 * The community catalog as test input: the 248 bundles of ../shared/testdata/community-bundles,
 * what OLM's Go tooling makes of each (tests/catalog/oracle/community-bundles.expected.json,
 * computed by Go over the upstream libraries, never by the program), every install of each bundle
 * in each install mode its CSV supports, and the program's plan and render of those installs.
 * `npm run test:catalog` (tests/catalog/run.ts) uses it; so can
 * any check that must hold for "every operator the program installs" (e.g. the k8s-rbac pack).
 *
 * API:
 * - `readCatalogOracle()`: the Go oracle's table (`files`, `bundles`).
 * - `catalogInstalls(oracle, only?)`: one `CatalogInstall` per bundle and supported install mode, each
 *   with its own operator name and namespace (`c<n>`), so any set of them can share one stack.
 * - `planCatalogInstall(install)`: `planOperators` for that one install (pure, no cluster).
 * - `catalogVerdict(install, plan)`: whether the program refuses it, and why, including the
 *   pre-flight's cluster checks answered by `catalogCluster` (a fresh cluster) and CURRENT_CLUSTER_KINDS.
 * - `catalogCluster(installs)`: what a fresh cluster holds for those installs (their namespaces, each
 *   namespace's `default` ServiceAccount and `kube-root-ca.crt` ConfigMap).
 * - `renderCatalogInstalls(installs)`: the whole program rendered with those installs as its operators.
 * - `clusterObjectKeys(plan)`, `catalogBatches(installs, keysOf, size)`: installs grouped so no two in a group
 *   declare one cluster object.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { OlmConfig, OperatorConfig } from "../../components/config/schema";
import { olmSchema, operatorsSchema } from "../../components/config/schema";
import type { InstallModeType } from "../../components/operator/csv";
import { missingApiProblems } from "../../components/operator/bundle-objects";
import { nativeApiProblems } from "../../components/operator/native-apis";
import { planOperators, type OperatorPlan } from "../../components/operator/plan";
import type { GoYamlResult } from "../../components/shared/go-yaml";
import { describeRef } from "../../components/shared/object-presence";
import type { KubeObject } from "../../scripts/render/cluster-state";
import { CURRENT_CLUSTER_KINDS, type RenderResult } from "../../scripts/render/render";
import { MINIMAL, renderConfig, ROOT } from "./render";

export const BUNDLES_ROOT = path.resolve(ROOT, "..", "shared", "testdata", "community-bundles");
export const ORACLE_TABLE = path.join(ROOT, "tests", "catalog", "oracle", "community-bundles.expected.json");

export interface GoDecoded {
    error?: string;
    empty?: boolean;
    sha256?: string;
}
export interface OracleRule {
    apiGroups?: string[];
    resources?: string[];
    resourceNames?: string[];
    nonResourceURLs?: string[];
    verbs: string[];
}
export interface OracleObject {
    file: string;
    apiVersion: string;
    kind: string;
    name: string;
    handling: "crd" | "typed" | "supported" | "unsupported";
    typedError?: string;
    rules?: OracleRule[];
    subjects?: { kind: string; name: string; namespace?: string; apiGroup?: string }[];
    roleRef?: { kind: string; name: string; apiGroup: string };
}
export interface OracleBundle {
    opm: { error?: string; objects?: { apiVersion: string; kind: string; name: string }[] };
    validation: { loadError?: string; errors: { type: string; field?: string; detail: string }[]; warnings: unknown[] };
    csv?: {
        file: string;
        name: string;
        typedError?: string;
        installModes: InstallModeType[];
        deployments: string[];
        serviceAccounts: string[];
        ownedCRDs: { name: string; version: string; kind: string }[];
        permissions: { serviceAccount: string; cluster: boolean; rules: OracleRule[] | null }[];
        webhooks: string[];
        apiServices: string[];
    };
    objects: OracleObject[];
    refusals: { rule: string; source: string; file?: string; detail: string }[];
}
export interface CatalogOracle {
    files: Record<string, { opm: GoDecoded; documents: GoDecoded[] }>;
    bundles: Record<string, OracleBundle>;
}

export function readCatalogOracle(): CatalogOracle {
    return JSON.parse(fs.readFileSync(ORACLE_TABLE, "utf8")) as CatalogOracle;
}

export interface CatalogInstall {
    /** `<operator>/<version>`, the oracle's key. */
    bundle: string;
    mode: InstallModeType;
    /** The operator's config entry (validated by the config schema). */
    config: OperatorConfig;
}

const MODE_TARGETS: Record<InstallModeType, (namespace: string) => string[]> = {
    AllNamespaces: () => [],
    OwnNamespace: (namespace) => [namespace],
    SingleNamespace: (namespace) => [`${namespace}-t`],
    MultiNamespace: (namespace) => [`${namespace}-a`, `${namespace}-b`],
};

/** Every bundle in every install mode its CSV supports (by the Go oracle), in bundle then mode order. */
export function catalogInstalls(oracle: CatalogOracle, only?: (bundle: string) => boolean): CatalogInstall[] {
    const installs: CatalogInstall[] = [];
    for (const bundle of Object.keys(oracle.bundles).sort()) {
        const facts = oracle.bundles[bundle];
        if (only && !only(bundle)) continue;
        const modes = facts.csv?.installModes.length ? facts.csv.installModes : (["AllNamespaces"] as InstallModeType[]);
        for (const mode of modes) {
            const name = `c${installs.length}`;
            const csv = path.join(BUNDLES_ROOT, bundle, "manifests", facts.csv?.file ?? csvFileOf(bundle));
            const [config] = operatorsSchema.parse([{ name, csv, namespace: name, targetNamespaces: MODE_TARGETS[mode](name) }]);
            installs.push({ bundle, mode, config });
        }
    }
    return installs;
}

/** The bundle's CSV file when Go found none (a bundle that does not parse): the file named like one. */
function csvFileOf(bundle: string): string {
    const files = fs.readdirSync(path.join(BUNDLES_ROOT, bundle, "manifests")).sort();
    return files.find((f) => f.includes("clusterserviceversion")) ?? files[0];
}

export const CATALOG_OLM: OlmConfig = olmSchema.parse({});

export function planCatalogInstall(install: CatalogInstall): ReturnType<typeof planOperators> {
    return planOperators([install.config], CATALOG_OLM, ROOT);
}

/**
 * A fresh cluster for these installs: their namespaces with what Kubernetes puts in every
 * namespace, and the objects an admin created first (`supplied`: what the pre-flight said a
 * Deployment's pods need and nobody provides).
 */
export function catalogCluster(installs: readonly CatalogInstall[], supplied: readonly KubeObject[] = []): KubeObject[] {
    const namespaces = [...new Set(installs.flatMap((i) => [i.config.namespace, ...i.config.targetNamespaces]))].sort();
    return namespaces
        .flatMap((namespace): KubeObject[] => [
            { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
            { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace } },
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kube-root-ca.crt", namespace } },
        ])
        .concat(supplied);
}

/** The objects the pre-flight found missing for a plan, as an admin would create them before installing. */
export function suppliedObjects(plan: OperatorPlan): KubeObject[] {
    return plan.clusterReferences.map((r) => ({
        apiVersion: r.ref.apiVersion,
        kind: r.ref.kind,
        metadata: { name: r.ref.name, ...(r.ref.namespace ? { namespace: r.ref.namespace } : {}) },
    }));
}

export interface CatalogVerdict {
    refused: boolean;
    /** Every problem, as the pre-flight reports it. */
    problems: string[];
    /** The problems only the program raises: pods that could not start (OLM installs such a bundle). */
    podProblems: string[];
}

/** The pre-flight's verdict on one install on a fresh cluster serving CURRENT_CLUSTER_KINDS (bundle objects' APIs, the CSV's nativeAPIs). */
export async function catalogVerdict(install: CatalogInstall, planned: ReturnType<typeof planOperators>): Promise<CatalogVerdict> {
    const problems = planned.problems.map((p) => `cluster-platform:${p.path}: ${p.message}`);
    const podProblems: string[] = [];
    const plan: OperatorPlan | undefined = planned.plans[0];
    if (plan) {
        const present = new Set(
            catalogCluster([install]).map((o) => `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`),
        );
        for (const required of plan.clusterReferences) {
            if (!present.has(describeRef(required.ref))) {
                podProblems.push(
                    `cluster-platform:${required.path}: ${describeRef(required.ref)} does not exist in the cluster: ${required.why}`,
                );
            }
        }
        const served = async (groupVersion: string) =>
            CURRENT_CLUSTER_KINDS[groupVersion] ? new Map(Object.entries(CURRENT_CLUSTER_KINDS[groupVersion])) : undefined;
        problems.push(
            ...(await missingApiProblems(plan.bundleObjects, served)).map(
                (m) => `cluster-platform:operators[0].csv: ${JSON.stringify(install.config.csv)}: ${m}`,
            ),
        );
        problems.push(
            ...(await nativeApiProblems([plan], [install.config], served)).map((p) => `cluster-platform:${p.path}: ${p.message}`),
        );
    }
    return { refused: problems.length + podProblems.length > 0, problems: [...problems, ...podProblems], podProblems };
}

/** The cluster-scoped objects a plan declares (a CRD, cluster RBAC, a cluster-scoped bundle object, an APIService), as keys. */
export function clusterObjectKeys(plan: OperatorPlan): string[] {
    return [
        ...plan.crds.filter((c) => c.manifest).map((c) => `CustomResourceDefinition ${c.name}`),
        ...plan.rbac.filter((o) => !o.metadata.namespace).map((o) => `${o.kind} ${o.metadata.name}`),
        ...plan.bundleObjects.filter((o) => !o.namespace).map((o) => `${o.kind} ${o.name}`),
        ...plan.deployments.flatMap((d) => d.apiServices ?? []).map((a) => `APIService ${a.name}`),
        // OLM's fixed-name serving-certificate bindings (certresources.go) are per Service, so per install namespace: not shared.
    ];
}

/**
 * Installs grouped (at most `size` each, in order, each into the first group with room) so that no
 * two in a group declare the same cluster-scoped object; `keysOf` gives an install's
 * `clusterObjectKeys` (computed where it was planned).
 */
export function catalogBatches<T>(installs: readonly T[], keysOf: (install: T) => readonly string[], size: number): T[][] {
    const batches: { installs: T[]; keys: Set<string> }[] = [];
    for (const install of installs) {
        const keys = keysOf(install);
        const batch = batches.find((b) => b.installs.length < size && keys.every((k) => !b.keys.has(k)));
        if (batch) {
            batch.installs.push(install);
            keys.forEach((k) => batch.keys.add(k));
        } else {
            batches.push({ installs: [install], keys: new Set(keys) });
        }
    }
    return batches.map((b) => b.installs);
}

/** The whole program rendered (preview) with these installs, on a live-shaped Kubernetes stack over `catalogCluster`. */
export function renderCatalogInstalls(installs: readonly CatalogInstall[], supplied: readonly KubeObject[] = []): Promise<RenderResult> {
    return renderConfig({ ...MINIMAL, operators: installs.map((i) => ({ ...i.config })) }, { cluster: catalogCluster(installs, supplied) });
}

/** An object OLM creates when it installs a bundle; `olmLabels`: it carries OLM's bundle label `olm.managed: "true"`. */
export interface OlmCreatedObject {
    readonly kind: string;
    readonly name: string;
    /** Unset for a cluster-scoped object. */
    readonly namespace?: string;
    readonly olmLabels: boolean;
}

/** Bundle kinds OLM creates cluster-wide (catalog/supportedresources.go's cluster-scoped kinds and cluster RBAC). */
const CLUSTER_SCOPED_BUNDLE_KINDS = new Set([
    "ClusterRole",
    "ClusterRoleBinding",
    "PriorityClass",
    "ConsoleYAMLSample",
    "ConsoleQuickStart",
    "ConsoleCLIDownload",
    "ConsoleLink",
    "ConsolePlugin",
]);

/**
 * Every object OLM creates from a bundle installed into `namespace`, from the Go oracle's facts and
 * the CSV as Go decoded it (never from the program's plan): the CSV's Deployments, ServiceAccounts
 * and APIServices, the bundle's CRDs, and each other bundle object (catalog/operator.go
 * `ExecutePlan`), with OLM's label unless OLM's certificate step replaces it (`servingObjects`).
 */
export function olmCreatedObjects(facts: OracleBundle, namespace: string, csvDecoded: GoYamlResult): OlmCreatedObject[] {
    const csv = facts.csv!;
    const replaced = new Set(servingObjects(csvDecoded, namespace).map((o) => `${o.kind} ${o.namespace}/${o.name}`));
    return [
        ...csv.deployments.map((name) => ({ kind: "Deployment", name, namespace, olmLabels: false })),
        ...csv.serviceAccounts.map((name) => ({ kind: "ServiceAccount", name, namespace, olmLabels: false })),
        ...csv.apiServices.map((name) => ({ kind: "APIService", name, olmLabels: false })),
        ...facts.objects.map((object): OlmCreatedObject => {
            if (object.handling === "crd") return { kind: "CustomResourceDefinition", name: object.name, olmLabels: false };
            if (CLUSTER_SCOPED_BUNDLE_KINDS.has(object.kind)) return { kind: object.kind, name: object.name, olmLabels: true };
            return {
                kind: object.kind,
                name: object.name,
                namespace,
                olmLabels: !replaced.has(`${object.kind} ${namespace}/${object.name}`),
            };
        }),
    ];
}

/**
 * The objects OLM's install of the CSV makes for each Deployment that serves a webhook or an owned
 * APIService, read from the CSV as Go decoded it: the Service `<deployment>-service`, its Secret
 * `<service>-cert` and that Secret's Role and RoleBinding. A bundle object of one of these names
 * is replaced: `installCertRequirementsForDeployment` deletes the bundle's Service and creates its
 * own, and updates the Secret, Role and RoleBinding to its own, none with the label olm.managed
 * (operator-framework/operator-lifecycle-manager pkg/controller/install/certresources.go;
 * `ServiceName`, `SecretName`).
 */
export function servingObjects(decoded: GoYamlResult, namespace: string): { kind: string; name: string; namespace: string }[] {
    const spec = ((decoded.ok
        ? ((decoded.value as Record<string, unknown> | null)?.spec as Record<string, unknown> | undefined)
        : undefined) ?? {}) as Record<string, unknown>;
    const owned =
        ((spec.apiservicedefinitions as Record<string, unknown> | undefined)?.owned as Record<string, unknown>[] | undefined) ?? [];
    const served = new Set(
        [...((spec.webhookdefinitions as Record<string, unknown>[] | undefined) ?? []), ...owned]
            .map((d) => d.deploymentName)
            .filter((d): d is string => typeof d === "string" && d !== ""),
    );
    return [...served].flatMap((deployment) => {
        const service = `${deployment}-service`;
        return [
            { kind: "Service", name: service, namespace },
            ...["Secret", "Role", "RoleBinding"].map((kind) => ({ kind, name: `${service}-cert`, namespace })),
        ];
    });
}
