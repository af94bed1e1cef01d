/**
 * A small stand-in for the Kubernetes API over plain HTTP, enough for the real
 * @kubernetes/client-node code: list (with limit/continue, cluster-wide or per namespace, selected by
 * `metadata.name`), watch (chunked JSON lines from a resourceVersion, 410 Gone when it is too old),
 * get, server-side apply and delete of one object, and SubjectAccessReview create. Each bearer token
 * is a user; `authorizeRequest` judges every request with the attributes the API server's request
 * info gives it (kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go: a
 * list or watch takes the name of a `metadata.name` field selector; a server-side apply that creates
 * is authorized as `create` too, handlers/patch.go). It records every request so tests can count what
 * each client read.
 */
import { execFile } from "node:child_process";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

export interface StoredObject {
    apiVersion: string;
    kind: string;
    metadata: {
        name: string;
        namespace?: string;
        resourceVersion?: string;
        generation?: number;
        labels?: Record<string, string>;
        [field: string]: unknown;
    };
    [field: string]: unknown;
}

interface Collection {
    /** URL prefix without namespace, e.g. /api/v1 or /apis/subscription.openshift.io/v1alpha1. */
    base: string;
    plural: string;
    namespaced: boolean;
    listKind: string;
}

const COLLECTIONS: Record<string, Collection> = {
    SharedSecret: {
        base: "/apis/sharedresource.openshift.io/v1alpha1",
        plural: "sharedsecrets",
        namespaced: false,
        listKind: "SharedSecretList",
    },
    SharedConfigMap: {
        base: "/apis/sharedresource.openshift.io/v1alpha1",
        plural: "sharedconfigmaps",
        namespaced: false,
        listKind: "SharedConfigMapList",
    },
    Secret: { base: "/api/v1", plural: "secrets", namespaced: true, listKind: "SecretList" },
    ConfigMap: { base: "/api/v1", plural: "configmaps", namespaced: true, listKind: "ConfigMapList" },
    Bundle: { base: "/apis/subscription.openshift.io/v1alpha1", plural: "bundles", namespaced: true, listKind: "BundleList" },
    ClusterBundle: {
        base: "/apis/subscription.openshift.io/v1alpha1",
        plural: "clusterbundles",
        namespaced: false,
        listKind: "ClusterBundleList",
    },
};

interface Event {
    resourceVersion: number;
    plural: string;
    type: "ADDED" | "MODIFIED" | "DELETED";
    object: StoredObject;
}

interface Watcher {
    plural: string;
    namespace?: string;
    name?: string;
    response: http.ServerResponse;
}

export interface RecordedRequest {
    method: string;
    path: string;
    query: Record<string, string>;
    body?: unknown;
    /** The user the bearer token names (`users`), or "" for an unknown token. */
    user: string;
}

/** What the API server's request info makes of a request, as an authorizer sees it. */
export interface RequestAttributes {
    user: string;
    verb: string;
    group: string;
    resource: string;
    namespace?: string;
    name?: string;
}

export interface SubjectAccessReviewSpec {
    user: string;
    groups?: string[];
    resourceAttributes: { group: string; resource: string; verb: string; name: string; version?: string; namespace?: string };
}

/** What the stand-in reads of a ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1). */
export interface AdmissionPolicy {
    policy: {
        metadata: { name: string };
        spec: {
            matchConstraints: { resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[] };
            validations: { expression: string; message?: string; messageExpression?: string; reason?: string }[];
        };
    };
    binding: { metadata: { name: string }; spec: { policyName: string; validationActions: string[] } };
}

/** Evaluates CEL expressions in a child process (see cel-eval.mjs). */
function evaluateCel(expressions: string[], context: Record<string, unknown>): Promise<{ value?: unknown; error?: string }[]> {
    return new Promise((resolve, reject) => {
        const child = execFile(process.execPath, [path.join(__dirname, "cel-eval.mjs")], (error, stdout) =>
            error ? reject(error) : resolve(JSON.parse(stdout)),
        );
        child.stdin?.end(JSON.stringify({ expressions, context }));
    });
}

export class FakeKubeApi {
    private readonly server: http.Server;
    private readonly objects = new Map<string, StoredObject>();
    private readonly history: Event[] = [];
    private readonly watchers = new Set<Watcher>();
    private resourceVersion = 1000;
    /** Events older than this resourceVersion are gone (a watch from before gets 410). */
    private compactedBefore = 0;
    readonly requests: RecordedRequest[] = [];
    /** Decides SubjectAccessReviews; default: allow everything. */
    authorize: (spec: SubjectAccessReviewSpec) => boolean = () => true;
    /** When set, SubjectAccessReview creates answer with this HTTP status. */
    failReviewsWith: number | undefined;
    /**
     * RBAC of the caller for lists and watches: given the request's path and its name field
     * selector (as the API server's request info names a `metadata.name=` selected list), false
     * answers 403 Forbidden. Default: everything allowed.
     */
    mayList: (path: string, name: string | undefined) => boolean = () => true;
    /** Bearer token → user name (the kubeconfig of `kubeConfig(token)`); unknown tokens are "". */
    readonly users = new Map<string, string>([["fake-token", "system:serviceaccount:webhook"]]);
    /** RBAC of every request to a collection or an object, by its request attributes. Default: allowed. */
    authorizeRequest: (attributes: RequestAttributes) => boolean = () => true;
    /** ValidatingAdmissionPolicies enforced on create (POST) and update (PUT), as an API server does. */
    admissionPolicies: AdmissionPolicy[] = [];
    url = "";

    constructor() {
        this.server = http.createServer((req, res) => this.handle(req, res));
    }

    /** Listens on `port` (default: an ephemeral one; a restart passes the old one). */
    async start(port = 0): Promise<string> {
        await new Promise<void>((resolve) => this.server.listen(port, "127.0.0.1", resolve));
        this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
        return this.url;
    }

    async stop(): Promise<void> {
        this.closeWatches();
        this.server.closeAllConnections();
        await new Promise((resolve) => this.server.close(resolve));
    }

    /** The port it listens on (0 before the first start). */
    get port(): number {
        return this.url ? Number(new URL(this.url).port) : 0;
    }

    kubeConfig(token = "fake-token"): KubeConfig {
        const config = new KubeConfig();
        config.loadFromOptions({
            clusters: [{ name: "fake", server: this.url, skipTLSVerify: true }],
            users: [{ name: "webhook", token }],
            contexts: [{ name: "fake", cluster: "fake", user: "webhook" }],
            currentContext: "fake",
        });
        return config;
    }

    /** A kubeconfig file's text pointing at this API, as the user of `token`. */
    kubeconfigText(token = "fake-token"): string {
        return JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "fake", cluster: { server: this.url } }],
            users: [{ name: "webhook", user: { token } }],
            contexts: [{ name: "fake", context: { cluster: "fake", user: "webhook" } }],
            "current-context": "fake",
        });
    }

    private key(kind: string, namespace: string | undefined, name: string): string {
        return `${kind}/${namespace ?? ""}/${name}`;
    }

    /** Creates or updates an object (bumping resourceVersion, and generation on update). */
    put(object: StoredObject): StoredObject {
        const key = this.key(object.kind, object.metadata.namespace, object.metadata.name);
        const previous = this.objects.get(key);
        const stored: StoredObject = structuredClone(object);
        stored.metadata.resourceVersion = String(++this.resourceVersion);
        stored.metadata.uid = previous?.metadata.uid ?? `uid-${this.resourceVersion}`;
        stored.metadata.generation = previous ? (previous.metadata.generation ?? 1) + 1 : (object.metadata.generation ?? 1);
        this.objects.set(key, stored);
        this.emit({
            resourceVersion: this.resourceVersion,
            plural: COLLECTIONS[object.kind].plural,
            type: previous ? "MODIFIED" : "ADDED",
            object: stored,
        });
        return stored;
    }

    remove(kind: string, namespace: string | undefined, name: string): void {
        const key = this.key(kind, namespace, name);
        const previous = this.objects.get(key);
        if (!previous) return;
        this.objects.delete(key);
        const deleted = structuredClone(previous);
        deleted.metadata.resourceVersion = String(++this.resourceVersion);
        this.emit({ resourceVersion: this.resourceVersion, plural: COLLECTIONS[kind].plural, type: "DELETED", object: deleted });
    }

    /** The stored object, if any (a copy). */
    get(kind: string, namespace: string | undefined, name: string): StoredObject | undefined {
        const found = this.objects.get(this.key(kind, namespace, name));
        return found && structuredClone(found);
    }

    /** Watches open now, as "plural namespace name" (namespace and name empty when not selected). */
    openWatches(): string[] {
        return [...this.watchers].map((watcher) => `${watcher.plural} ${watcher.namespace ?? ""} ${watcher.name ?? ""}`.trim());
    }

    /** Ends every open watch, as an API server does when a watch times out. */
    closeWatches(): void {
        for (const watcher of this.watchers) watcher.response.end();
        this.watchers.clear();
    }

    /** Forgets the event history: a watch resuming from an older resourceVersion gets 410 Gone. */
    compact(): void {
        this.compactedBefore = this.resourceVersion + 1;
        this.history.length = 0;
    }

    /** Requests made since `from` (an index into `requests`), as "METHOD path" with watch marked. */
    requestsSince(from: number): string[] {
        return this.requests.slice(from).map((request) => `${request.method} ${request.path}${request.query.watch ? " (watch)" : ""}`);
    }

    private emit(event: Event): void {
        this.history.push(event);
        for (const watcher of this.watchers) {
            if (
                watcher.plural === event.plural &&
                (!watcher.namespace || watcher.namespace === event.object.metadata.namespace) &&
                (watcher.name === undefined || watcher.name === event.object.metadata.name)
            ) {
                watcher.response.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
            }
        }
    }

    private route(path: string): { collection: Collection; namespace?: string } | undefined {
        for (const collection of Object.values(COLLECTIONS)) {
            if (path === `${collection.base}/${collection.plural}`) return { collection };
            const prefix = `${collection.base}/namespaces/`;
            if (collection.namespaced && path.startsWith(prefix) && path.endsWith(`/${collection.plural}`)) {
                const namespace = path.slice(prefix.length, -(collection.plural.length + 1));
                if (!namespace.includes("/")) return { collection, namespace };
            }
        }
        return undefined;
    }

    /** A collection path followed by one object's name. */
    private routeItem(path: string): { collection: Collection; namespace?: string; name: string; kind: string } | undefined {
        const cut = path.lastIndexOf("/");
        const target = this.route(path.slice(0, cut));
        if (!target) return undefined;
        const kind = Object.keys(COLLECTIONS).find((other) => COLLECTIONS[other] === target.collection) as string;
        return { ...target, name: decodeURIComponent(path.slice(cut + 1)), kind };
    }

    private forbidden(res: http.ServerResponse, attributes: RequestAttributes): void {
        const where = attributes.namespace ? ` in the namespace "${attributes.namespace}"` : " at the cluster scope";
        this.json(res, 403, {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            code: 403,
            reason: "Forbidden",
            message: `${attributes.resource}${attributes.name ? ` "${attributes.name}"` : ""} is forbidden: User "${attributes.user}" cannot ${attributes.verb} resource "${attributes.resource}" in API group "${attributes.group}"${where}`,
        });
    }

    /** GET, PATCH (server-side apply) and DELETE of one object, authorized as the API server would. */
    private item(req: http.IncomingMessage, path: string, body: unknown, user: string, res: http.ServerResponse): boolean {
        const target = this.routeItem(path);
        if (!target) return false;
        const group = target.collection.base.startsWith("/apis/") ? target.collection.base.split("/")[2] : "";
        const attributes = (verb: string): RequestAttributes => ({
            user,
            verb,
            group,
            resource: target.collection.plural,
            namespace: target.namespace,
            name: target.name,
        });
        const existing = this.objects.get(this.key(target.kind, target.namespace, target.name));
        const notFound = () =>
            this.json(res, 404, {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                code: 404,
                reason: "NotFound",
                message: `"${target.name}" not found`,
            });
        if (req.method === "GET") {
            if (!this.authorizeRequest(attributes("get"))) return (this.forbidden(res, attributes("get")), true);
            if (!existing) return (notFound(), true);
            this.json(res, 200, existing);
            return true;
        }
        if (req.method === "DELETE") {
            if (!this.authorizeRequest(attributes("delete"))) return (this.forbidden(res, attributes("delete")), true);
            if (!existing) return (notFound(), true);
            this.remove(target.kind, target.namespace, target.name);
            this.json(res, 200, { kind: "Status", apiVersion: "v1", status: "Success" });
            return true;
        }
        if (req.method === "PATCH" && String(req.headers["content-type"]).startsWith("application/apply-patch")) {
            if (!this.authorizeRequest(attributes("patch"))) return (this.forbidden(res, attributes("patch")), true);
            if (!existing && !this.authorizeRequest(attributes("create"))) return (this.forbidden(res, attributes("create")), true);
            const applied = body as StoredObject;
            this.json(
                res,
                existing ? 200 : 201,
                this.put({
                    ...applied,
                    kind: target.kind,
                    metadata: { ...applied.metadata, name: target.name, namespace: target.namespace },
                }),
            );
            return true;
        }
        return false;
    }

    private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
        const url = new URL(req.url ?? "/", "http://fake");
        const query = Object.fromEntries(url.searchParams.entries());
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
            const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))?.[1] ?? "";
            const user = this.users.get(token) ?? "";
            this.requests.push({ method: req.method ?? "GET", path: url.pathname, query, body, user });
            if (req.method === "POST" && url.pathname === "/apis/authorization.k8s.io/v1/subjectaccessreviews")
                return this.review(body, res);
            if (req.method === "POST" || req.method === "PUT") return void this.write(req.method, url.pathname, body, res);
            const target = this.route(url.pathname);
            if (!target && this.item(req, url.pathname, body, user, res)) return;
            if (req.method !== "GET" || !target)
                return this.json(res, 404, { kind: "Status", apiVersion: "v1", status: "Failure", code: 404, reason: "NotFound" });
            const name = /^metadata\.name=(.+)$/.exec(query.fieldSelector ?? "")?.[1];
            const watching = query.watch === "true" || query.watch === "1";
            const group = target.collection.base.startsWith("/apis/") ? target.collection.base.split("/")[2] : "";
            const attributes: RequestAttributes = {
                user,
                verb: watching ? "watch" : "list",
                group,
                resource: target.collection.plural,
                namespace: target.namespace,
                name,
            };
            if (!this.authorizeRequest(attributes)) return this.forbidden(res, attributes);
            if (!this.mayList(url.pathname, name))
                return this.json(res, 403, {
                    kind: "Status",
                    apiVersion: "v1",
                    status: "Failure",
                    code: 403,
                    reason: "Forbidden",
                    message: `${target.collection.plural} is forbidden: User "system:serviceaccount:webhook" cannot list resource "${target.collection.plural}" in the namespace "${target.namespace}"`,
                });
            if (query.watch === "true" || query.watch === "1")
                return this.watch(target.collection, target.namespace, Number(query.resourceVersion || 0), res, name);
            return this.list(target.collection, target.namespace, query, res, name);
        });
    }

    /**
     * Create (POST to the collection) or update (PUT to the object) after the admission policies,
     * as the API server's validating admission policy plugin answers a denial
     * (kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/dispatcher.go):
     * 422, the validation's reason (default Invalid), and
     * `<resource>.<group> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>' denied request: <message>`.
     */
    private async write(method: "POST" | "PUT", pathname: string, object: StoredObject, res: http.ServerResponse): Promise<void> {
        const itemPath = method === "PUT" ? pathname.slice(0, pathname.lastIndexOf("/")) : pathname;
        const target = this.route(itemPath);
        if (!target || !object?.metadata?.name)
            return this.json(res, 404, { kind: "Status", apiVersion: "v1", status: "Failure", code: 404, reason: "NotFound" });
        const kind = Object.keys(COLLECTIONS).find((name) => COLLECTIONS[name] === target.collection) as string;
        const existing = this.objects.get(this.key(kind, target.namespace, object.metadata.name));
        if (method === "POST" && existing)
            return this.json(res, 409, { kind: "Status", apiVersion: "v1", status: "Failure", code: 409, reason: "AlreadyExists" });
        if (method === "PUT" && !existing)
            return this.json(res, 404, { kind: "Status", apiVersion: "v1", status: "Failure", code: 404, reason: "NotFound" });
        const operation = method === "POST" ? "CREATE" : "UPDATE";
        const group = target.collection.base.startsWith("/apis/") ? target.collection.base.split("/")[2] : "";
        for (const { policy, binding } of this.admissionPolicies) {
            if (binding.spec.policyName !== policy.metadata.name || !binding.spec.validationActions.includes("Deny")) continue;
            const matched = policy.spec.matchConstraints.resourceRules.some(
                (rule) =>
                    rule.apiGroups.includes(group) &&
                    rule.resources.includes(target.collection.plural) &&
                    rule.operations.includes(operation),
            );
            if (!matched) continue;
            const context = { object, oldObject: existing ?? null };
            const results = await evaluateCel(
                policy.spec.validations.map((v) => v.expression),
                context,
            );
            const failed = policy.spec.validations.findIndex((_, i) => results[i].value !== true);
            if (failed < 0) continue;
            const validation = policy.spec.validations[failed];
            const message = validation.messageExpression
                ? String((await evaluateCel([validation.messageExpression], context))[0].value)
                : (validation.message ?? `failed expression: ${validation.expression}`);
            const resource = group ? `${target.collection.plural}.${group}` : target.collection.plural;
            return this.json(res, 422, {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                code: 422,
                reason: validation.reason ?? "Invalid",
                message: `${resource} "${object.metadata.name}" is forbidden: ValidatingAdmissionPolicy '${policy.metadata.name}' with binding '${binding.metadata.name}' denied request: ${message}`,
            });
        }
        this.json(
            res,
            method === "POST" ? 201 : 200,
            this.put({ ...object, kind, metadata: { ...object.metadata, namespace: target.namespace } }),
        );
    }

    private json(res: http.ServerResponse, status: number, value: unknown): void {
        const text = JSON.stringify(value);
        res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
    }

    private list(
        collection: Collection,
        namespace: string | undefined,
        query: Record<string, string>,
        res: http.ServerResponse,
        name: string | undefined,
    ): void {
        const kind = Object.keys(COLLECTIONS).find((other) => COLLECTIONS[other] === collection) as string;
        const all = [...this.objects.values()]
            .filter(
                (object) =>
                    object.kind === kind &&
                    (!namespace || object.metadata.namespace === namespace) &&
                    (name === undefined || object.metadata.name === name),
            )
            .sort((a, b) =>
                this.key(kind, a.metadata.namespace, a.metadata.name).localeCompare(this.key(kind, b.metadata.namespace, b.metadata.name)),
            );
        const offset = Number(query.continue || 0);
        const limit = Number(query.limit || 0) || all.length;
        const items = all.slice(offset, offset + limit);
        const more = offset + limit < all.length;
        this.json(res, 200, {
            apiVersion: collection.base === "/api/v1" ? "v1" : collection.base.slice("/apis/".length),
            kind: collection.listKind,
            metadata: { resourceVersion: String(this.resourceVersion), ...(more ? { continue: String(offset + limit) } : {}) },
            items,
        });
    }

    private watch(collection: Collection, namespace: string | undefined, from: number, res: http.ServerResponse, name?: string): void {
        res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
        if (from < this.compactedBefore) {
            res.end(
                `${JSON.stringify({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", status: "Failure", code: 410, reason: "Expired", message: "too old resource version" } })}\n`,
            );
            return;
        }
        const watcher: Watcher = { plural: collection.plural, namespace, name, response: res };
        for (const event of this.history) {
            if (
                event.resourceVersion > from &&
                event.plural === collection.plural &&
                (!namespace || event.object.metadata.namespace === namespace) &&
                (name === undefined || event.object.metadata.name === name)
            ) {
                res.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
            }
        }
        this.watchers.add(watcher);
        res.on("close", () => this.watchers.delete(watcher));
    }

    private review(body: { spec: SubjectAccessReviewSpec }, res: http.ServerResponse): void {
        if (this.failReviewsWith)
            return this.json(res, this.failReviewsWith, {
                kind: "Status",
                apiVersion: "v1",
                status: "Failure",
                code: this.failReviewsWith,
            });
        const allowed = this.authorize(body.spec);
        this.json(res, 201, { ...body, status: allowed ? { allowed: true } : { allowed: false, reason: "no RBAC policy matched" } });
    }
}

export function secret(namespace: string, name: string, data: Record<string, string>): StoredObject {
    return { apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, type: "Opaque", data };
}

export function configMap(namespace: string, name: string, data: Record<string, string>): StoredObject {
    return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

export function bundleObject(
    namespace: string | undefined,
    name: string,
    spec: { entitlements: { name: string; namespace?: string }[]; yumRepositories?: { name: string; namespace?: string }[] },
    alwaysInject = false,
): StoredObject {
    return {
        apiVersion: "subscription.openshift.io/v1alpha1",
        kind: namespace ? "Bundle" : "ClusterBundle",
        metadata: {
            name,
            ...(namespace ? { namespace } : {}),
            ...(alwaysInject ? { labels: { "subscription.openshift.io/always-inject": "true" } } : {}),
        },
        spec,
    };
}
