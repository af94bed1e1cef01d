/**
 * Registry authorization against the real distribution server: the Bearer token flow (with a
 * token service the test runs) and Basic (htpasswd), with credentials where `docker login`,
 * `skopeo login` and credential helpers keep them.
 */
import { execFile, execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { buildAndPublish, planImage } from "../../components/webhook-image/build";
import { environmentCredentials } from "../../components/webhook-image/credentials";
import { buildNodeBaseLayout, NodeBaseLayout, pushBase } from "../helpers/node-base-image";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { startTokenServer, TokenServer } from "../helpers/token-server";
import { imageContent, makeProject } from "../helpers/webhook-project";
import { requireTools } from "../helpers/system-tools";

requireTools("docker-registry", "skopeo", "htpasswd", "openssl");

const USER = { username: "pusher", password: "s3cret-push" };
const basicAuth = (u: { username: string; password: string }) => Buffer.from(`${u.username}:${u.password}`).toString("base64");

let work: string;
let base: NodeBaseLayout;
let project: string;

beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "image-auth-"));
    base = buildNodeBaseLayout(work);
    project = makeProject();
});

afterAll(() => {
    rmSync(work, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
});

/** Pushes the base with skopeo's own login, then builds the webhook image with `env` as the environment. */
async function buildWith(registry: LocalRegistry, baseImage: string, env: NodeJS.ProcessEnv, repository = "webhook/app") {
    const content = imageContent(project, baseImage);
    const plan = await planImage(content);
    return buildAndPublish(
        { ...content, repository: `${registry.host}/${repository}`, output: "registry" },
        { credentials: environmentCredentials(env), expectedLayers: plan.layers },
    );
}

async function pushBaseWithCredentials(registry: LocalRegistry): Promise<string> {
    const file = path.join(work, `skopeo-auth-${registry.host.replace(/[:.]/g, "_")}.json`);
    writeFileSync(file, JSON.stringify({ auths: { [registry.host]: { auth: basicAuth(USER) } } }));
    return (await pushBase(base, registry.host, "base/node", "oci-index", { ...process.env, REGISTRY_AUTH_FILE: file })).pinned;
}

describe("Bearer token flow", () => {
    let tokens: TokenServer;
    let registry: LocalRegistry;
    let baseImage: string;

    beforeAll(async () => {
        tokens = await startTokenServer(work, USER);
        registry = await startRegistry({
            kind: "token",
            realm: tokens.realm,
            service: tokens.service,
            issuer: tokens.issuer,
            rootCertBundle: tokens.rootCertBundle,
        });
        baseImage = await pushBaseWithCredentials(registry);
    });

    afterAll(async () => {
        await registry?.stop();
        await tokens?.close();
    });

    test("GIVEN credentials in the containers auth file WHEN the image is pushed THEN one token covers pushing and mounting from the base repository, and the base layer is mounted", async () => {
        const authFile = path.join(work, "containers-auth.json");
        writeFileSync(authFile, JSON.stringify({ auths: { [registry.host]: { auth: basicAuth(USER) } } }));
        tokens.requests.length = 0;

        const image = await buildWith(registry, baseImage, { REGISTRY_AUTH_FILE: authFile, HOME: work });

        expect(image.report.mounted).toHaveLength(1);
        expect(registry.mountedBlobs("webhook/app")).toEqual(image.report.mounted);
        expect(tokens.requests).toContainEqual({
            scopes: ["repository:base/node:pull", "repository:webhook/app:pull,push"],
            authenticated: true,
        });
        expect(tokens.requests.every((r) => r.authenticated)).toBe(true);
        // Asynchronously: skopeo asks this process's token service for its token.
        const inspected = JSON.parse(
            (
                await promisify(execFile)("skopeo", [
                    "inspect",
                    "--tls-verify=false",
                    "--creds",
                    `${USER.username}:${USER.password}`,
                    "--config",
                    `docker://${image.imageRef}`,
                ])
            ).stdout,
        ) as { config: { User: string } };
        expect(inspected.config.User).toBe("65532:65532");
    });

    test("GIVEN no credentials WHEN the image is pushed THEN the token service's refusal is reported with the scopes asked for", async () => {
        await expect(
            buildWith(registry, baseImage, { HOME: work, DOCKER_CONFIG: path.join(work, "empty") }, "webhook/anonymous"),
        ).rejects.toThrow(
            `${registry.host}: the token service http://${tokens.realm.slice(7)} refused repository:base/node:pull (401: {"details":"incorrect username or password"})`,
        );
    });
});

describe("Basic authorization (htpasswd)", () => {
    let registry: LocalRegistry;
    let baseImage: string;

    beforeAll(async () => {
        const htpasswd = path.join(work, "htpasswd");
        writeFileSync(htpasswd, execFileSync("htpasswd", ["-Bbn", USER.username, USER.password], { encoding: "utf8" }));
        registry = await startRegistry({ kind: "htpasswd", file: htpasswd });
        baseImage = await pushBaseWithCredentials(registry);
    });

    afterAll(async () => {
        await registry?.stop();
    });

    test("GIVEN `docker login` credentials in DOCKER_CONFIG WHEN the image is pushed THEN it is in the registry", async () => {
        const dockerConfig = path.join(work, "docker");
        mkdirSync(dockerConfig, { recursive: true });
        writeFileSync(path.join(dockerConfig, "config.json"), JSON.stringify({ auths: { [registry.host]: { auth: basicAuth(USER) } } }));

        const image = await buildWith(registry, baseImage, { DOCKER_CONFIG: dockerConfig, HOME: work });

        const manifest = JSON.parse(
            execFileSync(
                "skopeo",
                ["inspect", "--tls-verify=false", "--creds", `${USER.username}:${USER.password}`, "--raw", `docker://${image.imageRef}`],
                { encoding: "utf8" },
            ),
        ) as { layers: unknown[] };
        expect(manifest.layers).toHaveLength(3);
    });

    test("GIVEN a credential helper named in credHelpers WHEN the image is pushed THEN the helper is asked for the registry and its answer is used", async () => {
        const dockerConfig = path.join(work, "docker-helper");
        const bin = path.join(work, "bin");
        mkdirSync(dockerConfig, { recursive: true });
        mkdirSync(bin, { recursive: true });
        const asked = path.join(work, "helper-asked");
        const helper = path.join(bin, "docker-credential-testhelper");
        writeFileSync(
            helper,
            `#!/bin/sh\n[ "$1" = get ] || exit 1\ncat > '${asked}'\nprintf '{"ServerURL":"x","Username":"${USER.username}","Secret":"${USER.password}"}'\n`,
        );
        chmodSync(helper, 0o755);
        writeFileSync(path.join(dockerConfig, "config.json"), JSON.stringify({ credHelpers: { [registry.host]: "testhelper" } }));

        const image = await buildWith(
            registry,
            baseImage,
            { DOCKER_CONFIG: dockerConfig, HOME: work, PATH: `${bin}:${process.env.PATH}` },
            "webhook/helper",
        );

        expect(image.imageRef).toMatch(new RegExp(`^${registry.host}/webhook/helper@sha256:[0-9a-f]{64}$`));
        expect(execFileSync("cat", [asked], { encoding: "utf8" })).toBe(registry.host);
    });

    test("GIVEN no credentials WHEN the image is pushed THEN the error names the request, the status and how to log in", async () => {
        const digest = baseImage.slice(baseImage.indexOf("@") + 1);
        await expect(
            buildWith(registry, baseImage, { HOME: work, DOCKER_CONFIG: path.join(work, "empty") }, "webhook/anonymous"),
        ).rejects.toThrow(
            new Error(
                `GET ${registry.host}/v2/base/node/manifests/${digest}: 401 Unauthorized: the registry wants credentials and none were found (log in with \`docker login\` or \`skopeo login\`)`,
            ),
        );
    });
});
