/**
 * The objects of a bundle folder other than the CSV and its CRDs, installed as OLM's catalog
 * operator installs them (operator-framework/operator-lifecycle-manager
 * `pkg/controller/operators/catalog/operator.go`, `ExecutePlan`, one step per object of the bundle,
 * `pkg/controller/registry/resolver/steps.go`, `NewStepResourceFromBundle`):
 *
 * - OLM dispatches on the object's kind alone: a `Secret`, `ConfigMap`, `Service`,
 *   `ServiceAccount`, `Role` or `RoleBinding` is decoded into the core/RBAC type and created in the
 *   operator's namespace, whatever group its apiVersion names; a `ClusterRole` or
 *   `ClusterRoleBinding` cluster-wide; each gets the label `olm.managed: "true"`.
 * - The kinds of `catalog/supportedresources.go` (`isSupported`) are created as they are, at their
 *   apiVersion, in the operator's namespace when the API is namespaced; a cluster-scoped one also
 *   gets OLM's owner labels (`olm.owner`, `olm.owner.kind`, `olm.owner.namespace`, from
 *   `ownerutil.AddOwnerLabels`), pointing at the CSV.
 * - Any other kind fails the InstallPlan (`StepStatusUnsupportedResource`): refused here.
 * - A kind whose API the cluster does not serve fails it too, with the message of
 *   `catalog/not_found.go` (checked against discovery before registration: `missingApiProblems`).
 *
 * OLM also puts an owner reference to the CSV on namespaced objects; the stack creates no CSV (a
 * reference to a missing owner would have the garbage collector delete the object), so it leaves
 * that out and its own labels say who owns them. A bundle ServiceAccount that the CSV's permissions
 * also name is one object: OLM creates the bundle's first, and its own later step changes nothing
 * (`step_ensurer.go`, `EnsureServiceAccount`: only fields the generated one sets are compared).
 * Pure.
 */
import { describeValue, formatPath, Problem } from "../shared/problems";
import type { ServedKinds } from "../shared/discovery";
import type { BundleObject } from "./bundle";
import { plainCopy } from "./deployments";

/** OLM's label on everything ExecutePlan creates (`install.OLMManagedLabelKey`, certresources.go). */
export const OLM_MANAGED_LABEL = "olm.managed";
/** OLM's owner labels (`pkg/lib/ownerutil/util.go`). */
export const OLM_OWNER_LABELS = { name: "olm.owner", kind: "olm.owner.kind", namespace: "olm.owner.namespace" } as const;

/**
 * How ExecutePlan creates each kind it knows by name: the type it decodes into, its scope, and the
 * type's top-level fields besides apiVersion, kind and metadata (k8s.io/api core/v1 and rbac/v1
 * `types.go`; `status` is dropped before). Its `json.Unmarshal` leaves every other field out, and
 * so does the API server: ecr-secret-operator 0.6.0 ships "Secret"s with a `spec`.
 */
const TYPED_KINDS: Record<string, { apiVersion: string; namespaced: boolean; fields: readonly string[] }> = {
    Secret: { apiVersion: "v1", namespaced: true, fields: ["data", "stringData", "type", "immutable"] },
    ConfigMap: { apiVersion: "v1", namespaced: true, fields: ["data", "binaryData", "immutable"] },
    Service: { apiVersion: "v1", namespaced: true, fields: ["spec"] },
    ServiceAccount: { apiVersion: "v1", namespaced: true, fields: ["secrets", "imagePullSecrets", "automountServiceAccountToken"] },
    Role: { apiVersion: "rbac.authorization.k8s.io/v1", namespaced: true, fields: ["rules"] },
    RoleBinding: { apiVersion: "rbac.authorization.k8s.io/v1", namespaced: true, fields: ["subjects", "roleRef"] },
    ClusterRole: { apiVersion: "rbac.authorization.k8s.io/v1", namespaced: false, fields: ["rules", "aggregationRule"] },
    ClusterRoleBinding: { apiVersion: "rbac.authorization.k8s.io/v1", namespaced: false, fields: ["subjects", "roleRef"] },
};

/**
 * `catalog/supportedresources.go` `supportedKinds`, with each API's scope (ExecutePlan asks
 * discovery for it; these are the scopes those APIs have; discovery decides on a live cluster).
 */
export const SUPPORTED_KINDS: Record<string, { namespaced: boolean }> = {
    PrometheusRule: { namespaced: true },
    ServiceMonitor: { namespaced: true },
    PodDisruptionBudget: { namespaced: true },
    PriorityClass: { namespaced: false },
    VerticalPodAutoscaler: { namespaced: true },
    ConsoleYAMLSample: { namespaced: false },
    ConsoleQuickStart: { namespaced: false },
    ConsoleCLIDownload: { namespaced: false },
    ConsoleLink: { namespaced: false },
    ConsolePlugin: { namespaced: false },
    NetworkPolicy: { namespaced: true },
};

/** One bundle object as the stack declares it. */
export interface BundleObjectPlan {
    /** The bundle file it comes from. */
    file: string;
    apiVersion: string;
    kind: string;
    name: string;
    /** The operator's namespace for a namespaced kind. */
    namespace?: string;
    /** The object to declare: OLM's labels and the stack's, the namespace set. */
    manifest: Record<string, unknown>;
    /** A Secret: its data enters state only as a Pulumi secret. */
    secret: boolean;
    /** Created through the dynamic client at its own apiVersion (a supported kind), whose API must be served. */
    dynamic: boolean;
}

export interface BundleObjectsInput {
    csvName: string;
    namespace: string;
    /** The stack's labels for the install's objects. */
    labels: Record<string, string>;
    /** The ServiceAccounts the install creates from the CSV (a bundle one of the same name replaces it). */
    serviceAccounts: readonly string[];
}

export interface BundleObjectsResult {
    objects: BundleObjectPlan[];
    problems: { field: string; message: string }[];
}

/** The key an object has in the cluster (`Kind namespace/name`, `Kind name`), as rbac.ts's objectKey. */
export function bundleObjectKey(object: { kind: string; name: string; namespace?: string }): string {
    return `${object.kind} ${object.namespace ? `${object.namespace}/` : ""}${object.name}`;
}

export function planBundleObjects(objects: readonly BundleObject[], input: BundleObjectsInput): BundleObjectsResult {
    const problems: { field: string; message: string }[] = [];
    const planned: BundleObjectPlan[] = [];
    const seen = new Map<string, string>();
    for (const object of objects) {
        const where = `bundle file ${describeValue(object.file)} (${object.kind} ${describeValue(object.name)})`;
        const typed = TYPED_KINDS[object.kind];
        const supported = SUPPORTED_KINDS[object.kind];
        if (!typed && !supported) {
            problems.push({
                field: "",
                message: `${where}: kind ${describeValue(object.kind)} is not one OLM installs from a bundle: its InstallPlan fails on it (UnsupportedResource; operator-lifecycle-manager catalog/operator.go ExecutePlan, catalog/supportedresources.go lists ${Object.keys(SUPPORTED_KINDS).join(", ")} besides ${Object.keys(TYPED_KINDS).join(", ")})`,
            });
            continue;
        }
        if (object.name === "") {
            problems.push({
                field: "",
                message: `${where} metadata.name: is missing: the API server refuses an object without a name, so OLM's InstallPlan fails`,
            });
            continue;
        }
        const namespaced = typed ? typed.namespaced : supported.namespaced;
        const namespace = namespaced ? input.namespace : undefined;
        const apiVersion = typed ? typed.apiVersion : object.apiVersion;
        if (!typed && !/^[^/]+\/[^/]+$/.test(apiVersion) && !/^v\d/.test(apiVersion)) {
            problems.push({
                field: "",
                message: `${where} apiVersion: ${describeValue(object.apiVersion)} names no API group version, so OLM cannot create it (discovery finds no such group version)`,
            });
            continue;
        }
        const key = bundleObjectKey({ kind: object.kind, name: object.name, namespace });
        const first = seen.get(key);
        if (first !== undefined) {
            // OLM creates the first and updates it with the second (step_ensurer.go): the last file wins.
            const index = planned.findIndex((p) => bundleObjectKey(p) === key);
            planned.splice(index, 1);
        }
        seen.set(key, object.file);
        const problem = typed ? typedShapeProblem(object) : undefined;
        if (problem) {
            problems.push({ field: "", message: `${where} ${problem}` });
            continue;
        }
        planned.push({
            file: object.file,
            apiVersion,
            kind: object.kind,
            name: object.name,
            ...(namespace ? { namespace } : {}),
            manifest: manifestOf(object, apiVersion, namespace, input, !typed && !namespaced),
            secret: object.kind === "Secret",
            dynamic: !typed,
        });
    }
    return { objects: planned, problems };
}

/** OLM's labels over the stack's over the bundle's; the namespace set or dropped; no status, no owner references. */
function manifestOf(
    object: BundleObject,
    apiVersion: string,
    namespace: string | undefined,
    input: BundleObjectsInput,
    ownerLabels: boolean,
): Record<string, unknown> {
    const { status: _status, ...rest } = plainCopy(object.object) as Record<string, unknown>;
    const metadata = { ...((rest.metadata as Record<string, unknown> | undefined) ?? {}) };
    delete metadata.namespace;
    delete metadata.ownerReferences;
    delete metadata.resourceVersion;
    delete metadata.uid;
    delete metadata.creationTimestamp;
    delete metadata.generateName;
    const labels = {
        ...((metadata.labels as Record<string, string> | undefined) ?? {}),
        ...input.labels,
        [OLM_MANAGED_LABEL]: "true",
        ...(ownerLabels
            ? {
                  [OLM_OWNER_LABELS.name]: input.csvName,
                  [OLM_OWNER_LABELS.kind]: "ClusterServiceVersion",
                  [OLM_OWNER_LABELS.namespace]: input.namespace,
              }
            : {}),
    };
    return asStored(object.kind, {
        ...rest,
        apiVersion,
        kind: object.kind,
        metadata: { ...metadata, name: object.name, ...(namespace ? { namespace } : {}), labels },
    });
}

/**
 * A typed object as the API server stores it, where the bundle writes what the server drops or
 * replaces: declared as written, every preview would show the stored form changing back. Each was
 * found by the real tier's server-side dry-run of every bundle object of the community catalog
 * (tests/real/catalog-sample.real.ts): fields the Go type does not have are left out
 * (`TYPED_KINDS`' fields); an empty or null top-level map or list (`data: {}`, `data: null`, `rules: []`)
 * is left out, as the server's JSON leaves it out or stores null; a Service port's `targetPort` of
 * 0 or "" becomes its `port` (kubernetes `pkg/apis/core/v1/defaults.go`, `SetDefaults_Service`).
 * Supported kinds of other APIs are created as they are. Pure.
 */
export function asStored(kind: string, manifest: Record<string, unknown>): Record<string, unknown> {
    const fields = TYPED_KINDS[kind]?.fields;
    if (!fields) return manifest;
    const empty = (value: unknown) => value === null || (typeof value === "object" && Object.keys(value as object).length === 0);
    const stored = Object.fromEntries(
        Object.entries(manifest).filter(
            ([field, value]) => ["apiVersion", "kind", "metadata"].includes(field) || (fields.includes(field) && !empty(value)),
        ),
    );
    const spec = stored.spec as { ports?: unknown } | undefined;
    if (kind !== "Service" || !spec || !Array.isArray(spec.ports)) return stored;
    const ports = spec.ports.map((port: unknown) => {
        const p = port as { port?: unknown; targetPort?: unknown } | null;
        return p && typeof p === "object" && (p.targetPort === 0 || p.targetPort === "") && typeof p.port === "number"
            ? { ...p, targetPort: p.port }
            : port;
    });
    return { ...stored, spec: { ...spec, ports } };
}

/**
 * What decoding into the core type refuses (ExecutePlan's `json.Unmarshal`, "error parsing step
 * manifest"): Secret data must be base64 text, ConfigMap data and Secret stringData text (YAML 1.1
 * reads `on`, `yes`, `0755` as other types), a ConfigMap's binaryData base64.
 */
function typedShapeProblem(object: BundleObject): string | undefined {
    const body = object.object as Record<string, unknown>;
    if (object.kind === "Service") {
        // OLM creates any kind Service as a core Service; the API server refuses one without ports
        // unless it is headless or an ExternalName (kubernetes pkg/apis/core/validation, ValidateService).
        const spec = (body.spec ?? {}) as { ports?: unknown; clusterIP?: unknown; type?: unknown };
        if ((!Array.isArray(spec.ports) || spec.ports.length === 0) && spec.clusterIP !== "None" && spec.type !== "ExternalName") {
            return `spec.ports: is required: OLM creates every object of kind Service as a core Service (apiVersion ${describeValue(object.apiVersion)} notwithstanding), and the API server refuses one without ports unless it is headless, so OLM's InstallPlan fails`;
        }
    }
    const maps: [string, "text" | "base64"][] =
        object.kind === "Secret"
            ? [
                  ["data", "base64"],
                  ["stringData", "text"],
              ]
            : object.kind === "ConfigMap"
              ? [
                    ["data", "text"],
                    ["binaryData", "base64"],
                ]
              : [];
    for (const [field, format] of maps) {
        const value = body[field];
        if (value === undefined || value === null) continue;
        if (typeof value !== "object" || Array.isArray(value)) {
            return `${field}: ${describeValue(value)} is not a map of strings, so OLM cannot decode the object (its InstallPlan fails: error parsing step manifest)`;
        }
        for (const [key, entry] of Object.entries(value)) {
            if (typeof entry !== "string" && entry !== null) {
                return `${formatPath([field, key])}: ${describeValue(entry)} is not a string (a YAML 1.1 reader, as OLM's, reads unquoted on/yes/numbers as other types), so OLM cannot decode the object (its InstallPlan fails: error parsing step manifest)`;
            }
            if (format === "base64" && typeof entry === "string" && !isBase64(entry)) {
                return `${formatPath([field, key])}: a value of ${entry.length} characters is not base64, so OLM cannot decode the object (its InstallPlan fails: error parsing step manifest)`;
            }
        }
    }
    return undefined;
}

/** Go's encoding/json []byte: standard base64 with padding. */
function isBase64(text: string): boolean {
    return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

/**
 * OLM's failure for a bundle object whose API the cluster lacks (`catalog/not_found.go`,
 * `gvkNotFoundError`), for each dynamic object whose kind discovery does not list.
 */
export async function missingApiProblems(objects: readonly BundleObjectPlan[], served: ServedKinds): Promise<string[]> {
    const problems: string[] = [];
    const byGroupVersion = new Map<string, Promise<ReadonlyMap<string, { namespaced: boolean }> | undefined>>();
    for (const object of objects.filter((o) => o.dynamic)) {
        if (!byGroupVersion.has(object.apiVersion)) byGroupVersion.set(object.apiVersion, served(object.apiVersion));
        const kinds = await byGroupVersion.get(object.apiVersion)!;
        if (!kinds?.has(object.kind)) {
            const [group, version] = object.apiVersion.includes("/") ? object.apiVersion.split("/") : ["", object.apiVersion];
            problems.push(
                `bundle file ${describeValue(object.file)}: api-server resource not found installing ${object.kind} ${object.name}: GroupVersionKind ${group}/${version}, Kind=${object.kind} not found on the cluster (OLM's InstallPlan fails the same way, operator-lifecycle-manager catalog/not_found.go); install the operator that serves it first, or remove the object from the bundle`,
            );
        }
    }
    return problems;
}

/** `missingApiProblems` for every install, each naming its config key and bundle. */
export async function bundleApiProblems(
    plans: readonly { config: { name: string; csv: string }; bundleObjects: readonly BundleObjectPlan[] }[],
    operators: readonly { name: string }[],
    served: ServedKinds,
): Promise<Problem[]> {
    const problems: Problem[] = [];
    for (const plan of plans) {
        const index = operators.findIndex((o) => o.name === plan.config.name);
        for (const message of await missingApiProblems(plan.bundleObjects, served)) {
            problems.push({ path: formatPath(["operators", index, "csv"]), message: `${JSON.stringify(plan.config.csv)}: ${message}` });
        }
    }
    return problems;
}
