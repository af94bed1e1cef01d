/**
 * Image references as the distribution project defines them (`[host[:port]/]path[:tag][@digest]`),
 * parsed without Pulumi or network access. The first path component is a registry host when it
 * contains a `.` or a `:`, or is `localhost`; otherwise the name is on Docker Hub, whose
 * one-component names live under `library/`.
 */

export const DOCKER_HUB = "docker.io";
/** The host Docker Hub's registry API answers on (`docker.io` itself only redirects). */
const DOCKER_HUB_API = "registry-1.docker.io";

const HOST_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const HOST = new RegExp(`^${HOST_COMPONENT}(?:\\.${HOST_COMPONENT})*(?::[0-9]+)?$`);
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const SHA256_DIGEST = /^sha256:[a-f0-9]{64}$/;
const MAX_NAME_LENGTH = 255;

const PATH_RULE = "must be lowercase letters and digits, joined by '.', '_', '__' or dashes";
export const PINNED_RULE = "must be pinned by digest: `name[:tag]@sha256:<64 hex digits>`";

/** Where an image lives: the registry host as written (or `docker.io`) and the repository path in it. */
export interface RepositoryName {
    /** `host[:port]`, `docker.io` when the name has no host. */
    registry: string;
    /** The path inside the registry, e.g. `library/node` or `team/webhook`. */
    path: string;
    /** Whether the text named its registry host explicitly. */
    explicitRegistry: boolean;
}

export interface ImageReference extends RepositoryName {
    tag?: string;
    digest?: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Splits `text` into host and path; `problem` names the first rule the text breaks. */
export function parseRepository(text: string): Parsed<RepositoryName> {
    const slash = text.indexOf("/");
    const first = slash < 0 ? text : text.slice(0, slash);
    const hasHost = slash >= 0 && (first.includes(".") || first.includes(":") || first === "localhost");
    const rest = hasHost ? text.slice(slash + 1) : text;
    if (rest.includes("@") || rest.includes(":")) {
        return { ok: false, problem: "has a tag or digest; give the repository alone" };
    }
    const registry = hasHost ? first : DOCKER_HUB;
    if (hasHost && !HOST.test(registry)) {
        return { ok: false, problem: `registry host ${JSON.stringify(registry)} is not a host name with an optional port` };
    }
    if (rest === "") {
        return { ok: false, problem: "has no repository path after the registry host" };
    }
    const components = rest.split("/");
    const bad = components.find((c) => !PATH_COMPONENT.test(c));
    if (bad !== undefined) {
        return { ok: false, problem: `path component ${JSON.stringify(bad)} ${PATH_RULE}` };
    }
    if (text.length > MAX_NAME_LENGTH) {
        return { ok: false, problem: `is ${text.length} characters long, more than ${MAX_NAME_LENGTH}` };
    }
    const path = registry === DOCKER_HUB && components.length === 1 ? `library/${rest}` : rest;
    return { ok: true, value: { registry, path, explicitRegistry: hasHost } };
}

/** Parses `name[:tag][@sha256:...]`. */
export function parseImageReference(text: string): Parsed<ImageReference> {
    let rest = text;
    let digest: string | undefined;
    const at = rest.indexOf("@");
    if (at >= 0) {
        digest = rest.slice(at + 1);
        rest = rest.slice(0, at);
        if (!SHA256_DIGEST.test(digest)) {
            return { ok: false, problem: `digest ${JSON.stringify(digest)} is not "sha256:" followed by 64 lowercase hex digits` };
        }
    }
    let tag: string | undefined;
    const lastSlash = rest.lastIndexOf("/");
    const colon = rest.indexOf(":", lastSlash + 1);
    if (colon >= 0) {
        tag = rest.slice(colon + 1);
        rest = rest.slice(0, colon);
        if (!TAG.test(tag)) {
            return {
                ok: false,
                problem: `tag ${JSON.stringify(tag)} is not 1-128 letters, digits, '_', '.' or '-' (not starting with '.' or '-')`,
            };
        }
    }
    const name = parseRepository(rest);
    if (!name.ok) {
        return name;
    }
    return { ok: true, value: { ...name.value, tag, digest } };
}

/** A reference pinned by digest, or the rule it breaks. */
export function parsePinnedReference(text: string): Parsed<ImageReference & { digest: string }> {
    const parsed = parseImageReference(text);
    if (!parsed.ok) {
        return parsed;
    }
    if (parsed.value.digest === undefined) {
        return { ok: false, problem: PINNED_RULE };
    }
    return { ok: true, value: { ...parsed.value, digest: parsed.value.digest } };
}

/** The host to send registry API requests to. */
export function registryApiHost(registry: string): string {
    return registry === DOCKER_HUB ? DOCKER_HUB_API : registry;
}

/** `registry/path` as people write it (Docker Hub names keep their `docker.io/` prefix). */
export function formatRepository(name: RepositoryName): string {
    return `${name.registry}/${name.path}`;
}

/** An Amazon ECR registry host: `<account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]`. */
export interface EcrRegistry {
    accountId: string;
    region: string;
}

const ECR_HOST = /^(\d{12})\.dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/;

export function ecrRegistry(registry: string): EcrRegistry | undefined {
    const match = ECR_HOST.exec(registry);
    return match ? { accountId: match[1], region: match[2] } : undefined;
}

/** Whether to talk plain HTTP: only to loopback registries, as Docker treats them by default. */
export function isLoopbackRegistry(registry: string): boolean {
    const host = registry.replace(/:\d+$/, "");
    return host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
