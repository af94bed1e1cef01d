/**
 * Registry credentials, found at run time where the tools people already use keep them, and
 * never stored in Pulumi state:
 *
 * 1. an Amazon ECR registry: an authorization token from ECR's GetAuthorizationToken, with AWS
 *    credentials from the environment (the SDK's default chain: env vars, profile, SSO, IMDS);
 * 2. Docker's config (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`):
 *    `credHelpers[host]`, then `auths[host]`, then `credsStore` (as `docker login` leaves them);
 * 3. the containers auth file (`$REGISTRY_AUTH_FILE`, `$XDG_RUNTIME_DIR/containers/auth.json`,
 *    `~/.config/containers/auth.json`), as `skopeo login`/`podman login` leave them.
 *
 * Nothing found means anonymous access.
 */
import { execFile } from "node:child_process";
import { promises as fs } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DOCKER_HUB, ecrRegistry } from "./reference";

export interface Credentials {
    username: string;
    password: string;
}

export type CredentialSource = (registry: string) => Promise<Credentials | undefined>;

interface AuthFile {
    auths?: Record<string, { auth?: string; username?: string; password?: string }>;
    credHelpers?: Record<string, string>;
    credsStore?: string;
}

/** The keys a registry may be stored under (`docker login` writes Docker Hub as its v1 URL). */
export function authKeys(registry: string): string[] {
    if (registry === DOCKER_HUB) {
        return ["https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"];
    }
    return [registry, `https://${registry}`, `http://${registry}`, `https://${registry}/v1/`, `https://${registry}/v2/`];
}

/** `user:password` from an `auths` entry (its base64 `auth`, or separate fields). */
export function credentialsFromAuthEntry(
    entry: { auth?: string; username?: string; password?: string } | undefined,
): Credentials | undefined {
    if (entry === undefined) {
        return undefined;
    }
    if (entry.auth) {
        const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
        const colon = decoded.indexOf(":");
        return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    return entry.username !== undefined && entry.password !== undefined
        ? { username: entry.username, password: entry.password }
        : undefined;
}

async function readAuthFile(file: string): Promise<AuthFile | undefined> {
    try {
        return JSON.parse(await fs.readFile(file, "utf8")) as AuthFile;
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return undefined;
        }
        throw new Error(`cannot read registry credentials from ${file}: ${(error as Error).message}`);
    }
}

function dockerConfigFile(env: NodeJS.ProcessEnv): string {
    return path.join(env.DOCKER_CONFIG ?? path.join(os.homedir(), ".docker"), "config.json");
}

function containersAuthFiles(env: NodeJS.ProcessEnv): string[] {
    if (env.REGISTRY_AUTH_FILE) {
        return [env.REGISTRY_AUTH_FILE];
    }
    return [
        ...(env.XDG_RUNTIME_DIR ? [path.join(env.XDG_RUNTIME_DIR, "containers", "auth.json")] : []),
        path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), ".config"), "containers", "auth.json"),
    ];
}

/** Runs `docker-credential-<helper> get` with the registry on stdin, as Docker does. */
function fromHelper(helper: string, registry: string, env: NodeJS.ProcessEnv): Promise<Credentials | undefined> {
    return new Promise((resolve, reject) => {
        const child = execFile(`docker-credential-${helper}`, ["get"], { timeout: 60_000, env }, (error, stdout) => {
            if (error) {
                if (/credentials not found/i.test(stdout)) {
                    resolve(undefined);
                } else {
                    reject(new Error(`docker-credential-${helper} get failed for ${registry}: ${error.message.split("\n")[0]}`));
                }
                return;
            }
            const reply = JSON.parse(stdout) as { Username?: string; Secret?: string };
            resolve(
                reply.Username !== undefined && reply.Secret !== undefined
                    ? { username: reply.Username, password: reply.Secret }
                    : undefined,
            );
        });
        child.stdin?.end(registry);
    });
}

async function fromFile(file: string, registry: string, env: NodeJS.ProcessEnv): Promise<Credentials | undefined> {
    const config = await readAuthFile(file);
    if (config === undefined) {
        return undefined;
    }
    const keys = authKeys(registry);
    const helper = keys.map((k) => config.credHelpers?.[k]).find((h) => h !== undefined);
    if (helper !== undefined) {
        return fromHelper(helper, registry, env);
    }
    for (const key of keys) {
        const found = credentialsFromAuthEntry(config.auths?.[key]);
        if (found !== undefined) {
            return found;
        }
    }
    return config.credsStore ? fromHelper(config.credsStore, registry, env) : undefined;
}

/** ECR's registry credentials: user `AWS` and a 12-hour token, for the account and region of the host. */
async function fromEcr(registry: string): Promise<Credentials> {
    const ecr = ecrRegistry(registry) as { accountId: string; region: string };
    const { ECRClient, GetAuthorizationTokenCommand } = require("@aws-sdk/client-ecr") as typeof import("@aws-sdk/client-ecr");
    const client = new ECRClient({ region: ecr.region, useFipsEndpoint: registry.includes(".dkr.ecr-fips.") });
    try {
        const reply = await client.send(new GetAuthorizationTokenCommand({}));
        const token = reply.authorizationData?.[0]?.authorizationToken;
        const decoded = token === undefined ? "" : Buffer.from(token, "base64").toString("utf8");
        const colon = decoded.indexOf(":");
        if (colon < 0) {
            throw new Error("the reply holds no authorization token");
        }
        return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    } catch (error) {
        throw new Error(
            `cannot get an ECR authorization token for ${registry} (account ${ecr.accountId}, region ${ecr.region}): ${(error as Error).message}; the AWS credentials in this environment need ecr:GetAuthorizationToken`,
        );
    } finally {
        client.destroy();
    }
}

/** The default lookup described above, reading `env` (the process environment) at call time. */
export function environmentCredentials(env: NodeJS.ProcessEnv = process.env): CredentialSource {
    const cache = new Map<string, Promise<Credentials | undefined>>();
    return (registry) => {
        let found = cache.get(registry);
        if (found === undefined) {
            found = (async () => {
                if (ecrRegistry(registry) !== undefined) {
                    return fromEcr(registry);
                }
                for (const file of [dockerConfigFile(env), ...containersAuthFiles(env)]) {
                    const credentials = await fromFile(file, registry, env);
                    if (credentials !== undefined) {
                        return credentials;
                    }
                }
                return undefined;
            })();
            cache.set(registry, found);
        }
        return found;
    };
}
