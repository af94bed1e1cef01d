/**
 * A client of the OCI distribution API (the protocol of Docker Hub, ECR, GHCR, Quay, Harbor and
 * the CNCF distribution server), on Node's fetch: manifests, blob HEAD/GET, cross-repository
 * mount, monolithic or chunked uploads, manifest PUT/HEAD/DELETE, with anonymous, Basic and
 * Bearer-token authorization (the token flow of the distribution spec, with Basic credentials
 * at the token endpoint when there are any).
 */
import { CredentialSource, Credentials } from "./credentials";
import { MANIFEST_ACCEPT, sha256Digest } from "./oci";
import { isLoopbackRegistry, registryApiHost } from "./reference";
import { Challenge, parseChallenges } from "./www-authenticate";

/** Blobs up to this size go in one PUT; larger ones in PATCH chunks of this size. */
export const DEFAULT_CHUNK_SIZE = 16 * 1024 * 1024;

export interface RegistryClientOptions {
    credentials: CredentialSource;
    chunkSize?: number;
    userAgent?: string;
}

export class RegistryError extends Error {
    constructor(
        message: string,
        readonly status: number,
    ) {
        super(message);
        this.name = "RegistryError";
    }
}

interface RequestOptions {
    /** Scopes the request needs (`repository:<name>:pull[,push]`). */
    scopes: string[];
    headers?: Record<string, string>;
    body?: Buffer;
    /** Statuses that are answers, not errors. */
    expect: number[];
}

export interface FetchedManifest {
    mediaType: string;
    digest: string;
    bytes: Buffer;
}

/** One registry host; one instance per build shares its tokens. */
export class RegistryClient {
    readonly baseUrl: string;
    private challenge: Challenge | null | undefined;
    private readonly tokens = new Map<string, Promise<string>>();
    private credentials: Promise<Credentials | undefined> | undefined;
    private readonly chunkSize: number;

    constructor(
        readonly registry: string,
        private readonly options: RegistryClientOptions,
    ) {
        const scheme = isLoopbackRegistry(registry) ? "http" : "https";
        this.baseUrl = `${scheme}://${registryApiHost(registry)}`;
        this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    }

    // ------------------------------------------------------------------ manifests

    async getManifest(repository: string, reference: string): Promise<FetchedManifest> {
        const response = await this.request("GET", `/v2/${repository}/manifests/${reference}`, {
            scopes: [pull(repository)],
            headers: { Accept: MANIFEST_ACCEPT },
            expect: [200],
        });
        const bytes = Buffer.from(await response.arrayBuffer());
        const digest = sha256Digest(bytes);
        if (reference.startsWith("sha256:") && digest !== reference) {
            throw new RegistryError(
                `${this.registry}/${repository}@${reference}: the registry returned a manifest whose digest is ${digest}`,
                200,
            );
        }
        const mediaType =
            (JSON.parse(bytes.toString("utf8")) as { mediaType?: string }).mediaType ?? response.headers.get("content-type") ?? "";
        return { mediaType, digest, bytes };
    }

    async manifestExists(repository: string, digest: string): Promise<boolean> {
        const response = await this.request("HEAD", `/v2/${repository}/manifests/${digest}`, {
            scopes: [pull(repository)],
            headers: { Accept: MANIFEST_ACCEPT },
            expect: [200, 404],
        });
        return response.status === 200;
    }

    async putManifest(repository: string, reference: string, mediaType: string, bytes: Buffer): Promise<void> {
        const response = await this.request("PUT", `/v2/${repository}/manifests/${reference}`, {
            scopes: [push(repository)],
            headers: { "Content-Type": mediaType },
            body: bytes,
            expect: [201],
        });
        const stored = response.headers.get("docker-content-digest");
        if (stored !== null && stored !== sha256Digest(bytes)) {
            throw new RegistryError(
                `${this.registry}/${repository}: the registry stored the manifest as ${stored}, not ${sha256Digest(bytes)}`,
                201,
            );
        }
    }

    /** Deletes a manifest by digest; false when it was already gone. */
    async deleteManifest(repository: string, digest: string): Promise<boolean> {
        const response = await this.request("DELETE", `/v2/${repository}/manifests/${digest}`, {
            scopes: [`repository:${repository}:delete`, push(repository)],
            expect: [202, 404],
        });
        return response.status === 202;
    }

    // ------------------------------------------------------------------ blobs

    async blobExists(repository: string, digest: string): Promise<boolean> {
        const response = await this.request("HEAD", `/v2/${repository}/blobs/${digest}`, {
            scopes: [pull(repository)],
            expect: [200, 404],
        });
        return response.status === 200;
    }

    async getBlob(repository: string, digest: string): Promise<Buffer> {
        const response = await this.request("GET", `/v2/${repository}/blobs/${digest}`, { scopes: [pull(repository)], expect: [200] });
        const bytes = Buffer.from(await response.arrayBuffer());
        if (sha256Digest(bytes) !== digest) {
            throw new RegistryError(`${this.registry}/${repository}: blob ${digest} arrived with digest ${sha256Digest(bytes)}`, 200);
        }
        return bytes;
    }

    /**
     * Asks the registry to link `digest` from `from` (same registry) into `repository`: true when
     * it did; otherwise the upload session it opened instead, for the caller to upload into.
     */
    async mountBlob(repository: string, digest: string, from: string): Promise<{ mounted: true } | { mounted: false; location: string }> {
        const query = new URLSearchParams({ mount: digest, from }).toString();
        const response = await this.request("POST", `/v2/${repository}/blobs/uploads/?${query}`, {
            scopes: [push(repository), pull(from)],
            headers: { "Content-Length": "0" },
            expect: [201, 202],
        });
        return response.status === 201 ? { mounted: true } : { mounted: false, location: this.location(response) };
    }

    /** Uploads `data` as blob `digest`: one PUT when it fits a chunk, otherwise PATCH chunks and a closing PUT. */
    async uploadBlob(repository: string, digest: string, data: Buffer, session?: string): Promise<void> {
        const scopes = [push(repository)];
        let location = session;
        if (location === undefined) {
            const opened = await this.request("POST", `/v2/${repository}/blobs/uploads/`, {
                scopes,
                headers: { "Content-Length": "0" },
                expect: [202],
            });
            location = this.location(opened);
        }
        if (data.length > this.chunkSize) {
            for (let start = 0; start < data.length; start += this.chunkSize) {
                const chunk = data.subarray(start, Math.min(data.length, start + this.chunkSize));
                const patched = await this.request("PATCH", location, {
                    scopes,
                    headers: { "Content-Type": "application/octet-stream", "Content-Range": `${start}-${start + chunk.length - 1}` },
                    body: chunk,
                    expect: [202],
                });
                location = this.location(patched);
            }
            await this.request("PUT", withQuery(location, { digest }), { scopes, headers: { "Content-Length": "0" }, expect: [201] });
            return;
        }
        await this.request("PUT", withQuery(location, { digest }), {
            scopes,
            headers: { "Content-Type": "application/octet-stream" },
            body: data,
            expect: [201],
        });
    }

    // ------------------------------------------------------------------ HTTP and authorization

    private location(response: Response): string {
        const location = response.headers.get("location");
        if (location === null) {
            throw new RegistryError(
                `${this.registry}: the registry answered ${response.status} without a Location header`,
                response.status,
            );
        }
        return new URL(location, this.baseUrl).toString();
    }

    private async request(method: string, pathOrUrl: string, options: RequestOptions): Promise<Response> {
        const url = pathOrUrl.startsWith("http") ? pathOrUrl : `${this.baseUrl}${pathOrUrl}`;
        let authorization = await this.authorization(options.scopes, false);
        for (let attempt = 0; ; attempt++) {
            const headers: Record<string, string> = {
                "User-Agent": this.options.userAgent ?? "cluster-platform-webhook-image",
                ...options.headers,
            };
            if (authorization !== undefined) {
                headers.Authorization = authorization;
            }
            const response = await fetch(url, { method, headers, body: options.body, redirect: "follow" });
            if (response.status === 401 && attempt === 0) {
                await response.arrayBuffer().catch(() => undefined);
                this.challenge = pickChallenge(response.headers.get("www-authenticate"));
                authorization = await this.authorization(options.scopes, true);
                if (authorization === undefined) {
                    throw await this.failure(
                        method,
                        url,
                        response,
                        "the registry wants credentials and none were found (log in with `docker login` or `skopeo login`)",
                    );
                }
                continue;
            }
            if (!options.expect.includes(response.status)) {
                throw await this.failure(method, url, response);
            }
            return response;
        }
    }

    /** The Authorization header for `scopes`, learning the registry's challenge first when unknown. */
    private async authorization(scopes: string[], refresh: boolean): Promise<string | undefined> {
        if (this.challenge === undefined) {
            const probe = await fetch(`${this.baseUrl}/v2/`, {
                headers: { "User-Agent": this.options.userAgent ?? "cluster-platform-webhook-image" },
            });
            await probe.arrayBuffer().catch(() => undefined);
            this.challenge = probe.status === 401 ? pickChallenge(probe.headers.get("www-authenticate")) : null;
        }
        const challenge = this.challenge;
        if (challenge === null) {
            return undefined;
        }
        if (challenge.scheme === "basic") {
            const credentials = await this.loadCredentials();
            return credentials === undefined ? undefined : `Basic ${basic(credentials)}`;
        }
        const key = [...new Set(scopes)].sort().join(" ");
        if (refresh) {
            this.tokens.delete(key);
        }
        let token = this.tokens.get(key);
        if (token === undefined) {
            token = this.fetchToken(challenge, [...new Set(scopes)].sort());
            this.tokens.set(key, token);
            token.catch(() => this.tokens.delete(key));
        }
        return `Bearer ${await token}`;
    }

    private async fetchToken(challenge: Challenge, scopes: string[]): Promise<string> {
        const realm = challenge.params.realm;
        if (!realm) {
            throw new RegistryError(`${this.registry}: the Bearer challenge names no realm`, 401);
        }
        const url = new URL(realm);
        if (challenge.params.service) {
            url.searchParams.set("service", challenge.params.service);
        }
        for (const scope of scopes) {
            url.searchParams.append("scope", scope);
        }
        const credentials = await this.loadCredentials();
        const headers: Record<string, string> = { "User-Agent": this.options.userAgent ?? "cluster-platform-webhook-image" };
        if (credentials !== undefined) {
            headers.Authorization = `Basic ${basic(credentials)}`;
        }
        const response = await fetch(url, { headers });
        if (response.status !== 200) {
            const detail = (await response.text().catch(() => "")).slice(0, 200);
            throw new RegistryError(
                `${this.registry}: the token service ${url.origin}${url.pathname} refused ${scopes.join(" ")} (${response.status}${detail ? `: ${detail}` : ""})`,
                response.status,
            );
        }
        const body = (await response.json()) as { token?: string; access_token?: string };
        const token = body.token ?? body.access_token;
        if (!token) {
            throw new RegistryError(`${this.registry}: the token service answered without a token`, 200);
        }
        return token;
    }

    private loadCredentials(): Promise<Credentials | undefined> {
        this.credentials ??= this.options.credentials(this.registry);
        return this.credentials;
    }

    private async failure(method: string, url: string, response: Response, hint?: string): Promise<RegistryError> {
        const text = method === "HEAD" ? "" : await response.text().catch(() => "");
        let detail = "";
        try {
            const errors = (JSON.parse(text) as { errors?: Array<{ code?: string; message?: string }> }).errors ?? [];
            detail = errors.map((e) => [e.code, e.message].filter(Boolean).join(": ")).join("; ");
        } catch {
            detail = text.slice(0, 200);
        }
        const where = new URL(url);
        const parts = [`${method} ${where.host}${where.pathname}: ${response.status} ${response.statusText}`, detail, hint].filter(
            (p) => p,
        );
        return new RegistryError(parts.join(": "), response.status);
    }
}

function pull(repository: string): string {
    return `repository:${repository}:pull`;
}

function push(repository: string): string {
    return `repository:${repository}:pull,push`;
}

function basic(credentials: Credentials): string {
    return Buffer.from(`${credentials.username}:${credentials.password}`, "utf8").toString("base64");
}

/** Bearer when offered (it carries scopes), else Basic; null when the registry offers neither. */
function pickChallenge(header: string | null): Challenge | null {
    const challenges = header === null ? [] : parseChallenges(header);
    return challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic") ?? null;
}

function withQuery(location: string, params: Record<string, string>): string {
    const url = new URL(location);
    for (const [name, value] of Object.entries(params)) {
        url.searchParams.set(name, value);
    }
    return url.toString();
}
