/**
 * Which resources the cluster serves at an API group version, from the API server's discovery
 * document (`GET /apis/<group>/<version>`, an APIResourceList: resource names and verbs, never an
 * object), asked with the kubeconfig and context the provider uses. A 404 means the group version
 * is not served. Used by pre-flight checks that pick an API version, skip an optional object, or
 * refuse a bundle object whose API the cluster lacks, before anything is registered; and the
 * server's version (`GET /version`), which a CSV's minKubeVersion is compared with.
 */
import * as https from "node:https";
import { type LiveConnection, kubeConfigFor } from "./object-presence";

/** The resource plurals served at a group version (empty when it is not served). */
export type ServedResources = (groupVersion: string) => Promise<ReadonlySet<string>>;

/** Reads the plurals of an APIResourceList body (subresources such as `pods/status` left out). */
export function servedPlurals(body: unknown): Set<string> {
    const resources = (body as { resources?: unknown } | null)?.resources;
    const names = new Set<string>();
    if (!Array.isArray(resources)) return names;
    for (const resource of resources) {
        const name = (resource as { name?: unknown } | null)?.name;
        if (typeof name === "string" && !name.includes("/")) names.add(name);
    }
    return names;
}

/** `metav1.GroupVersion{Group, Version}.String()`, what discovery is asked for: the version alone for the core group. */
export function groupVersionOf(group: string, version: string): string {
    return group === "" ? version : `${group}/${version}`;
}

/** The kinds served at a group version and whether each is namespaced (undefined when the group version is not served). */
export type ServedKinds = (groupVersion: string) => Promise<ReadonlyMap<string, { namespaced: boolean }> | undefined>;

/** Reads the kinds of an APIResourceList body (subresources left out). */
export function servedKinds(body: unknown): Map<string, { namespaced: boolean }> {
    const resources = (body as { resources?: unknown } | null)?.resources;
    const kinds = new Map<string, { namespaced: boolean }>();
    if (!Array.isArray(resources)) return kinds;
    for (const resource of resources) {
        const { name, kind, namespaced } = (resource ?? {}) as { name?: unknown; kind?: unknown; namespaced?: unknown };
        if (typeof name === "string" && !name.includes("/") && typeof kind === "string")
            kinds.set(kind, { namespaced: namespaced === true });
    }
    return kinds;
}

/** Asks the API server the provider talks to. */
export function liveDiscovery(connection: LiveConnection, projectDirectory: string): ServedResources {
    return async (groupVersion) => {
        const body = await discoveryDocument(connection, projectDirectory, groupVersion);
        return body === undefined ? new Set() : servedPlurals(body);
    };
}

/** Asks the API server the provider talks to for kinds. */
export function liveKindDiscovery(connection: LiveConnection, projectDirectory: string): ServedKinds {
    return async (groupVersion) => {
        const body = await discoveryDocument(connection, projectDirectory, groupVersion);
        return body === undefined ? undefined : servedKinds(body);
    };
}

/** The APIResourceList of a group version (`/api/v1` for the core group), or undefined when it is not served. */
async function discoveryDocument(connection: LiveConnection, projectDirectory: string, groupVersion: string): Promise<unknown> {
    const pathname = groupVersion.includes("/") ? `/apis/${groupVersion}` : `/api/${groupVersion}`;
    const { status, text } = await getFromApiServer(connection, projectDirectory, pathname);
    if (status === 404) return undefined;
    if (status !== 200) throw new Error(`cannot read the API server's discovery of ${groupVersion}: HTTP ${status} to GET ${pathname}`);
    return JSON.parse(text);
}

/** The API server's version (`GET /version`, what discovery's `ServerVersion()` reads): its `gitVersion`. */
export type ServerVersion = () => Promise<string>;

/** Asks the API server the provider talks to. */
export function liveServerVersion(connection: LiveConnection, projectDirectory: string): ServerVersion {
    return async () => {
        const { status, text } = await getFromApiServer(connection, projectDirectory, "/version");
        if (status !== 200) throw new Error(`cannot read the API server's version: HTTP ${status} to GET /version`);
        const gitVersion = (JSON.parse(text) as { gitVersion?: unknown } | null)?.gitVersion;
        if (typeof gitVersion !== "string") throw new Error(`the API server's GET /version names no gitVersion: ${text.slice(0, 200)}`);
        return gitVersion;
    };
}

async function getFromApiServer(
    connection: LiveConnection,
    projectDirectory: string,
    pathname: string,
): Promise<{ status: number; text: string }> {
    const config = kubeConfigFor(connection, projectDirectory);
    const server = config.getCurrentCluster()?.server;
    if (!server) throw new Error(`the kubeconfig has no cluster for context ${JSON.stringify(config.getCurrentContext())}`);
    const options: https.RequestOptions = { method: "GET", headers: { Accept: "application/json" } };
    await config.applyToHTTPSOptions(options);
    const url = new URL(pathname, server);
    return new Promise<{ status: number; text: string }>((resolve, reject) => {
        const request = https.request(url, options, (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (chunk: Buffer) => chunks.push(chunk));
            response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
            response.on("error", reject);
        });
        request.on("error", reject);
        request.end();
    });
}

let override: ServedResources | undefined;

/** The discovery the program uses: the live one, unless a harness installed its own. */
export function apiDiscovery(connection: LiveConnection, projectDirectory: string): ServedResources {
    return override ?? liveDiscovery(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's discovery. */
export function setApiDiscovery(discovery: ServedResources | undefined): void {
    override = discovery;
}

let kindOverride: ServedKinds | undefined;

/** The kind discovery the program uses: the live one, unless a harness installed its own. */
export function apiKindDiscovery(connection: LiveConnection, projectDirectory: string): ServedKinds {
    return kindOverride ?? liveKindDiscovery(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's kind discovery. */
export function setApiKindDiscovery(discovery: ServedKinds | undefined): void {
    kindOverride = discovery;
}

let versionOverride: ServerVersion | undefined;

/** The server version the program uses: the live one, unless a harness installed its own. */
export function serverVersion(connection: LiveConnection, projectDirectory: string): ServerVersion {
    return versionOverride ?? liveServerVersion(connection, projectDirectory);
}

/** Installs (or, with undefined, removes) the harness's server version. */
export function setServerVersion(version: ServerVersion | undefined): void {
    versionOverride = version;
}
