/**
 * Whether objects exist in the cluster, asked without reading them: the pre-flight's way to check
 * Secrets (entitlement keys), ConfigMaps, namespaces and OLMConfig before anything is registered.
 *
 * Why not `k8s.core.v1.Secret.get`: the Kubernetes provider's Read returns the whole live object
 * as the resource's state (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go, Read:
 * `checkpointObject(liveInputs, liveObj, ...)`), so a read Secret's data lands in every checkpoint
 * (encrypted, but present); the provider has no metadata-only read and no invoke that gets an
 * object. Instead the program asks the API server itself, with the kubeconfig and context the
 * provider uses, for the object's metadata only: `Accept:
 * application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (the JSON form client-go's metadata
 * client asks for, kubernetes/kubernetes staging/src/k8s.io/client-go/metadata/metadata.go, Get;
 * without its trailing plain `application/json` fallback, so a server that cannot answer with
 * metadata alone answers 406, an error here, never the whole object). Only the HTTP
 * status is used (200 present, 404 absent); the body, whose annotations may hold kubectl's
 * last-applied copy of a Secret's data, is never parsed. Nothing of it is registered, logged or
 * returned, so nothing reaches the state, the outputs or the render.
 */
import * as https from "node:https";
import * as path from "node:path";
// Types only: the client's KubeConfig is loaded when a live cluster is asked, without the
// client's generated API (kube-config-class.ts), not by every render and test that never asks one.
import type { KubeConfig } from "@kubernetes/client-node";
import type { ClusterConnection } from "./cluster";
import { kubeConfigClass } from "./kube-config-class";
import type { ObjectRef, RequiredObject } from "./object-refs";

/** A connection to a cluster the program can ask: every kind but rendering to a directory. */
export type LiveConnection = Exclude<ClusterConnection, { kind: "renderYamlToDirectory" }>;

/** `unknown` only when nothing can be asked (an offline render without `--cluster`). */
export type Presence = "present" | "absent" | "unknown";

export type PresenceLookup = (refs: readonly ObjectRef[]) => Promise<Presence[]>;

export const PARTIAL_OBJECT_METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/** The REST path of one object: `/api/v1/namespaces/<ns>/secrets/<name>`, `/apis/<group>/<version>/<plural>/<name>`. */
export function apiPath(ref: ObjectRef): string {
    const scope = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : "";
    return `${versionPath(ref.apiVersion)}${scope}/${ref.plural}/${encodeURIComponent(ref.name)}`;
}

/** `/api/v1` for the core group, `/apis/<group>/<version>` for the others. */
function versionPath(apiVersion: string): string {
    return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

/** `Secret "openshift-config/etc-pki-entitlement"`. */
export function describeRef(ref: Pick<ObjectRef, "kind" | "namespace" | "name">): string {
    return `${ref.kind} ${JSON.stringify(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name)}`;
}

/**
 * The client configuration the Kubernetes provider builds from the same connection
 * (`kubernetesConnectionArgs`): the default kubeconfig at a named context, a named kubeconfig
 * file's current context, or the pod's service account.
 */
export function kubeConfigFor(connection: LiveConnection, projectDirectory: string): KubeConfig {
    const KubeConfigClass = kubeConfigClass();
    const config = new KubeConfigClass();
    switch (connection.kind) {
        case "kubeContext":
            config.loadFromDefault();
            config.setCurrentContext(connection.context);
            break;
        case "kubeconfig":
            config.loadFromFile(path.resolve(projectDirectory, connection.path));
            break;
        case "inCluster":
            config.loadFromCluster();
            break;
    }
    return config;
}

/** The client configuration and the API server's URL for `connection`; an Error when the kubeconfig names no cluster. */
function apiServerOf(connection: LiveConnection, projectDirectory: string): { config: KubeConfig; server: string } {
    const config = kubeConfigFor(connection, projectDirectory);
    const server = config.getCurrentCluster()?.server;
    if (!server) {
        throw new Error(`the kubeconfig has no cluster for context ${JSON.stringify(config.getCurrentContext())}`);
    }
    return { config, server };
}

/** Asks the API server the provider talks to (see `kubeConfigFor`) whether each object exists. */
export function liveMetadataLookup(connection: LiveConnection, projectDirectory: string): PresenceLookup {
    return async (refs) => {
        const { config, server } = apiServerOf(connection, projectDirectory);
        return Promise.all(
            refs.map((ref) =>
                apiGet(config, new URL(apiPath(ref), server), PARTIAL_OBJECT_METADATA_ACCEPT, false).then(({ status }) =>
                    presenceOf(ref, status),
                ),
            ),
        );
    };
}

function presenceOf(ref: ObjectRef, status: number): Presence {
    if (status === 200) {
        return "present";
    }
    if (status === 404) {
        return "absent";
    }
    throw new Error(
        `cannot check that ${describeRef(ref)} exists: the API server answered HTTP ${status} to GET ${apiPath(ref)} (metadata only)`,
    );
}

/**
 * One GET to the API server with the kubeconfig's credentials: the status, and the body as text
 * when `keepBody` (otherwise it is drained unread, for the questions only the status answers).
 */
async function apiGet(config: KubeConfig, url: URL, accept: string, keepBody: boolean): Promise<{ status: number; body: string }> {
    const options: https.RequestOptions = { method: "GET", headers: { Accept: accept } };
    await config.applyToHTTPSOptions(options);
    return new Promise((resolve, reject) => {
        const request = https.request(url, options, (response) => {
            let text = "";
            if (keepBody) {
                response.setEncoding("utf8");
                response.on("data", (chunk: string) => (text += chunk));
            } else {
                response.resume();
            }
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
            response.on("error", reject);
        });
        request.on("error", reject);
        request.end();
    });
}

let override: PresenceLookup | undefined;

/**
 * The lookup the program uses: the live one, unless a harness that runs the program without a
 * cluster (the offline render, which answers from `--cluster`) installed its own.
 */
export function presenceLookup(connection: LiveConnection, projectDirectory: string): PresenceLookup {
    return override ?? liveMetadataLookup(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's lookup. */
export function setPresenceLookup(lookup: PresenceLookup | undefined): void {
    override = lookup;
}

export interface ExistenceCheck {
    problems: { path: string; message: string }[];
    /** Objects that could not be asked about (an offline render without `--cluster`). */
    unchecked: RequiredObject[];
}

/** One problem per required object that does not exist, all at once. */
export async function checkExisting(required: readonly RequiredObject[], lookup: PresenceLookup): Promise<ExistenceCheck> {
    const presence = required.length > 0 ? await lookup(required.map((r) => r.ref)) : [];
    return {
        problems: required
            .filter((_, i) => presence[i] === "absent")
            .map((r) => ({ path: r.path, message: `${describeRef(r.ref)} does not exist in the cluster: ${r.why}` })),
        unchecked: required.filter((_, i) => presence[i] === "unknown"),
    };
}

/**
 * An object the pre-flight reads whole (a CRD's `status.storedVersions`, an OperatorCondition),
 * `absent` when the API server answers 404, `unknown` when nothing can be asked.
 */
export type ObjectRead = Record<string, unknown> | "absent" | "unknown";

export type ObjectReader = (refs: readonly ObjectRef[]) => Promise<ObjectRead[]>;

/** Kinds whose content must never be read by the program (only their existence, above). */
const NEVER_READ = new Set(["Secret"]);

/** Reads whole objects from the API server the provider talks to; refuses Secrets, whose data would then be in the program. */
export function liveObjectReader(connection: LiveConnection, projectDirectory: string): ObjectReader {
    return async (refs) => {
        const refused = refs.filter((ref) => NEVER_READ.has(ref.kind));
        if (refused.length > 0) {
            throw new Error(`the pre-flight never reads ${refused.map(describeRef).join(", ")}: only whether it exists`);
        }
        const { config, server } = apiServerOf(connection, projectDirectory);
        return Promise.all(refs.map((ref) => bodyOf(config, new URL(apiPath(ref), server), ref)));
    };
}

async function bodyOf(config: KubeConfig, url: URL, ref: ObjectRef): Promise<ObjectRead> {
    const { status, body } = await apiGet(config, url, "application/json", true);
    if (status === 404) {
        return "absent";
    }
    if (status !== 200) {
        throw new Error(`cannot read ${describeRef(ref)}: the API server answered HTTP ${status} to GET ${apiPath(ref)}`);
    }
    return JSON.parse(body) as Record<string, unknown>;
}

let readerOverride: ObjectReader | undefined;

/** The reader the program uses: the live one, unless a harness (the offline render) installed its own. */
export function objectReader(connection: LiveConnection, projectDirectory: string): ObjectReader {
    return readerOverride ?? liveObjectReader(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's reader. */
export function setObjectReader(reader: ObjectReader | undefined): void {
    readerOverride = reader;
}

/**
 * A kind's collection at one version, across all namespaces: the custom resources OLM validates
 * before it replaces a CRD (components/operator/crd-compatibility.ts). They are read whole for that
 * check only: nothing of them is registered, returned in outputs or logged but field paths.
 */
export interface CollectionRef {
    apiVersion: string;
    kind: string;
    plural: string;
}

/** Every object of a collection (none when the version is not served), or `unknown` when nothing can be asked. */
export type CollectionRead = Record<string, unknown>[] | "unknown";

/**
 * `reduce`, when given, keeps of each object only what it returns (nothing: the object is dropped),
 * applied as each page arrives, so a long collection (every pod of a cluster) never sits whole in memory.
 */
export type ObjectLister = (
    ref: CollectionRef,
    reduce?: (item: Record<string, unknown>) => Record<string, unknown> | undefined,
) => Promise<CollectionRead>;

/** Objects per page: client-go's pager default (k8s.io/client-go/tools/pager, `defaultPageSize`). */
const PAGE_SIZE = 500;

/** Lists whole objects, page by page, from the API server the provider talks to; refuses Secrets like the reader. */
export function liveObjectLister(connection: LiveConnection, projectDirectory: string): ObjectLister {
    return async (ref, reduce) => {
        if (NEVER_READ.has(ref.kind)) {
            throw new Error(`the pre-flight never reads ${ref.kind} objects: only whether one exists`);
        }
        const { config, server } = apiServerOf(connection, projectDirectory);
        const items: Record<string, unknown>[] = [];
        let next = "";
        do {
            const url = new URL(`${versionPath(ref.apiVersion)}/${ref.plural}`, server);
            url.searchParams.set("limit", String(PAGE_SIZE));
            if (next) {
                url.searchParams.set("continue", next);
            }
            const { status, body } = await apiGet(config, url, "application/json", true);
            if (status === 404) {
                return [];
            }
            if (status !== 200) {
                throw new Error(
                    `cannot list ${ref.kind} objects at ${ref.apiVersion}: the API server answered HTTP ${status} to GET ${url.pathname}`,
                );
            }
            const page = JSON.parse(body) as { items?: Record<string, unknown>[]; metadata?: { continue?: string } };
            for (const item of page.items ?? []) {
                const kept = reduce ? reduce(item) : item;
                if (kept) {
                    items.push(kept);
                }
            }
            next = page.metadata?.continue ?? "";
        } while (next);
        return items;
    };
}

let listerOverride: ObjectLister | undefined;

/** The lister the program uses: the live one, unless a harness (the offline render) installed its own. */
export function objectLister(connection: LiveConnection, projectDirectory: string): ObjectLister {
    return listerOverride ?? liveObjectLister(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's lister. */
export function setObjectLister(lister: ObjectLister | undefined): void {
    listerOverride = lister;
}
