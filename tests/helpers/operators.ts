/**
 * Helpers for operator-install tests: the real CSVs (read independently of the code under
 * test), renders of the whole program with operators configured, and the rendered objects.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import type { RenderOptions, RenderResult } from "../../scripts/render/render";
import { renderConfig, ROOT } from "./render";
import { temporaryDirectory } from "./temporary";

export const CSV_DIR = "../shared/testdata/csvs";

/**
 * The two sample bundles written for the tests (placeholder images): widgets, an AllNamespaces
 * operator with validating, mutating and conversion webhooks; backups, a namespaced one.
 */
export const SAMPLE_CSVS = {
    widgets: "tests/fixtures/operators/widget-operator/manifests/widget-operator.clusterserviceversion.yaml",
    backups: "tests/fixtures/operators/backup-operator/manifests/backup-operator.clusterserviceversion.yaml",
};

/** OLM's OperatorCondition CRD as an OpenShift cluster serves it (`operators.coreos.com/v2`), for the operator pre-flight read. */
export const OPERATOR_CONDITION_CRD = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "operatorconditions.operators.coreos.com" },
    spec: {
        group: "operators.coreos.com",
        names: { plural: "operatorconditions", kind: "OperatorCondition" },
        scope: "Namespaced",
        versions: [{ name: "v2", served: true, storage: true }],
    },
};
export const CSV_FILES = fs.readdirSync(path.join(ROOT, CSV_DIR)).sort();
/** The real CSVs that do not support AllNamespaces. */
export const NAMESPACED_CSVS = ["etcdoperator-0.9.4.clusterserviceversion.yaml", "prometheusoperator-0.22.2.clusterserviceversion.yaml"];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- CSVs are read as plain YAML, independently of the typed parser under test
export type Yaml = any;

const parsedCsvs = new Map<string, unknown>();

/**
 * A real CSV as plain YAML (not through the parser under test): a fresh copy each call, since
 * callers change what they get; each file is parsed once per test folder (some CSVs are hundreds
 * of kilobytes, and the operator tests read the same ones many times).
 */
export function readCsv(file: string): Yaml {
    if (!parsedCsvs.has(file)) {
        parsedCsvs.set(file, parse(fs.readFileSync(path.join(ROOT, CSV_DIR, file), "utf8")));
    }
    return structuredClone(parsedCsvs.get(file));
}

/** A bundle folder in a temporary directory holding `csv` (and optional other manifests); returns the CSV's absolute path. */
export function writeBundle(csv: Yaml, others: Yaml[] = []): string {
    const folder = temporaryDirectory("bundle-");
    const file = path.join(folder, "operator.clusterserviceversion.yaml");
    fs.writeFileSync(file, stringify(csv));
    others.forEach((o, i) => fs.writeFileSync(path.join(folder, `object-${i}.yaml`), stringify(o)));
    return file;
}

/** node-maintenance with every install mode supported, so its webhook can be scoped; returns the CSV's path. */
export function scopableBundle(): string {
    const csv = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
    csv.spec.installModes = ["OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"].map((type) => ({
        type,
        supported: true,
    }));
    return writeBundle(csv);
}

export interface OperatorsRenderOptions {
    olm?: Record<string, boolean>;
    platform?: "openshift" | "kubernetes";
    /** Render to a directory (no live cluster: no patches, no reads). */
    renderYaml?: boolean;
    certificates?: Record<string, unknown>;
    render?: Omit<Partial<RenderOptions>, "config" | "cluster">;
}

/** Renders the whole program with `operators` (and nothing else but a cluster). */
export function renderOperators(operators: Record<string, unknown>[], options: OperatorsRenderOptions = {}): Promise<RenderResult> {
    return renderConfig(
        {
            cluster: {
                name: "test",
                platform: options.platform ?? "kubernetes",
                ...(options.renderYaml ? { renderYamlToDirectory: "out/test" } : { kubeContext: "test" }),
            },
            ...(options.olm ? { olm: options.olm } : {}),
            ...(options.certificates ? { certificates: options.certificates } : {}),
            operators,
        },
        options.render ?? {},
    );
}

export type KubeObject = {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    [key: string]: Yaml;
};

/** The rendered objects (not patches), optionally of some kinds. */
export function objectsOf(result: RenderResult, ...kinds: string[]): KubeObject[] {
    return result.manifests
        .filter((m) => !m.patch)
        .map((m) => m.object as KubeObject)
        .filter((o) => kinds.length === 0 || kinds.includes(o.kind));
}

/** The rendered server-side-apply patches. */
export function patchesOf(result: RenderResult): KubeObject[] {
    return result.manifests.filter((m) => m.patch).map((m) => m.object as KubeObject);
}

/** The one rendered object of `kind` named `name` (in `namespace`). */
export function objectNamed(result: RenderResult, kind: string, name: string, namespace?: string): KubeObject {
    const found = objectsOf(result, kind).filter((o) => o.metadata.name === name && o.metadata.namespace === namespace);
    if (found.length !== 1) {
        throw new Error(
            `expected one ${kind} ${namespace ?? ""}/${name}, found ${found.length}: ${objectsOf(result, kind)
                .map((o) => `${o.metadata.namespace ?? ""}/${o.metadata.name}`)
                .join(", ")}`,
        );
    }
    return found[0];
}

export const RBAC_KINDS = ["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"];

/** `Kind namespace/name`. */
export function keyOf(o: KubeObject): string {
    return `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}

/** What decides an RBAC object's effect: identity, rules or binding, and aggregation labels. */
export function rbacEssence(o: KubeObject): Record<string, unknown> {
    const labels = o.metadata.labels ?? {};
    const aggregation = Object.fromEntries(Object.entries(labels).filter(([k]) => k.includes("aggregate-to")));
    return {
        key: keyOf(o),
        generatedBy: labels["cluster-platform.io/generated-by"],
        ...(Object.keys(aggregation).length > 0 ? { aggregation } : {}),
        ...(o.rules ? { rules: o.rules } : {}),
        ...(o.roleRef ? { roleRef: o.roleRef, subjects: o.subjects } : {}),
    };
}

/** Every RBAC object of a render, as essences sorted by key. */
export function rbacSet(result: RenderResult): Record<string, unknown>[] {
    return objectsOf(result, ...RBAC_KINDS)
        .map(rbacEssence)
        .sort((a, b) => String(a.key).localeCompare(String(b.key)));
}

/** The sample widget CRD's v1 schema, written out as tests/fixtures/operators/widget-operator declares it. */
export const WIDGET_V1_SCHEMA = {
    type: "object",
    properties: {
        spec: {
            type: "object",
            required: ["replicas"],
            properties: {
                replicas: { type: "integer", minimum: 1, maximum: 10 },
                color: { type: "string", enum: ["red", "green", "blue"] },
            },
        },
        status: { type: "object", properties: { readyReplicas: { type: "integer" } } },
    },
};
