/**
 * The provider is safe to serialize: its closure (what the engine stores in state and runs in a
 * separate Node.js process) holds no secrets and no machine paths, and works when loaded the way
 * the engine's dynamic-provider host loads it (require-from-string in a plain `node` process).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { planImage } from "../../components/webhook-image/build";
import type { WebhookImageInputs } from "../../components/webhook-image/operations";
import { buildNodeBaseLayout, pushBase } from "../helpers/node-base-image";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { imageContent, makeProject, ROOT } from "../helpers/webhook-project";
import { requireTools } from "../helpers/system-tools";
import { tsxCommand } from "../helpers/tsx";

requireTools("docker-registry", "skopeo");

const run = promisify(execFile);
const SECRET = "registry-password-that-must-not-leak";

/** What the engine's dynamic-provider host does with `__provider`: load it and call a method. */
const HOST = `
const requireFromString = require(require.resolve("require-from-string", { paths: [require.resolve("@pulumi/pulumi")] }));
const fs = require("node:fs");
const [textFile, method, argsFile] = process.argv.slice(1);
const provider = requireFromString(fs.readFileSync(textFile, "utf8")).handler();
provider[method](...JSON.parse(fs.readFileSync(argsFile, "utf8"))).then(
    (result) => process.stdout.write(JSON.stringify(result ?? null)),
    (error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); },
);
`;

describe("the serialized provider", () => {
    let registry: LocalRegistry;
    let work: string;
    let project: string;
    let serialized: { text: string; containsSecrets: boolean };

    beforeAll(async () => {
        registry = await startRegistry();
        work = mkdtempSync(path.join(os.tmpdir(), "image-serialized-"));
        project = makeProject();
        const { stdout } = await run(...tsxCommand(path.join(__dirname, "support", "serialize-provider.ts")), {
            cwd: ROOT,
            env: { ...process.env, REGISTRY_PASSWORD: SECRET, DOCKER_CONFIG: path.join(work, "docker") },
        });
        serialized = JSON.parse(stdout) as typeof serialized;
    });

    afterAll(async () => {
        await registry?.stop();
        rmSync(work, { recursive: true, force: true });
        rmSync(project, { recursive: true, force: true });
    });

    test("GIVEN the provider WHEN serialized as a dynamic resource does THEN the closure holds no secret, no environment and no absolute path, only the operations module's relative path", () => {
        expect(serialized.containsSecrets).toBe(false);
        expect(serialized.text).not.toContain(SECRET);
        expect(serialized.text).not.toContain(ROOT);
        expect(serialized.text).not.toContain("process.env");
        expect(serialized.text).toContain('__provider.operationsModule = "components/webhook-image/operations"');
    });

    test("GIVEN the serialized text WHEN a plain node process outside the project calls diff THEN it answers from the closure alone, loading no module of the project", async () => {
        // The host's working directory holds no project: were diff to load the operations module
        // (and through it tsx and the build's libraries), the call would fail.
        const outside = path.join(work, "outside");
        mkdirSync(outside);
        writeFileSync(path.join(outside, "provider.js"), serialized.text);
        const olds = {
            repository: "registry.example/webhook",
            output: "registry",
            contentHash: "sha256:aa",
            deleteOnDestroy: false,
            digest: "sha256:d1",
        };
        const diff = async (news: Record<string, unknown>): Promise<unknown> => {
            writeFileSync(path.join(outside, "args.json"), JSON.stringify(["registry.example/webhook", olds, news]));
            const { stdout } = await run(
                process.execPath,
                ["-e", HOST, path.join(outside, "provider.js"), "diff", path.join(outside, "args.json")],
                {
                    cwd: outside,
                    env: { PATH: process.env.PATH, HOME: work, NODE_PATH: path.join(ROOT, "node_modules") },
                },
            );
            return JSON.parse(stdout);
        };

        expect(await diff({ ...olds, digest: undefined })).toEqual({ changes: false, replaces: [], deleteBeforeReplace: false });
        expect(await diff({ ...olds, contentHash: "sha256:bb" })).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
        expect(await diff({ ...olds, repository: "registry.example/other" })).toEqual({
            changes: true,
            replaces: ["repository"],
            deleteBeforeReplace: false,
        });
    });

    test("GIVEN the serialized text WHEN a plain node process in the project directory loads it and calls create THEN the image is built and pushed", async () => {
        const base = (await pushBase(buildNodeBaseLayout(work), registry.host, "base/node", "oci-index")).pinned;
        const content = imageContent(project, base);
        const plan = await planImage(content);
        const inputs: WebhookImageInputs = {
            ...content,
            repository: `${registry.host}/webhook/serialized`,
            output: "registry",
            contentHash: plan.contentHash,
            layers: plan.layers,
            deleteOnDestroy: false,
        };
        writeFileSync(path.join(work, "provider.js"), serialized.text);
        writeFileSync(path.join(work, "args.json"), JSON.stringify([inputs]));

        const { stdout } = await run(
            process.execPath,
            ["-e", HOST, path.join(work, "provider.js"), "create", path.join(work, "args.json")],
            { cwd: ROOT, env: { PATH: process.env.PATH, HOME: work } },
        );
        const created = JSON.parse(stdout) as { id: string; outs: { imageRef: string; digest: string } };

        expect(created.id).toBe(inputs.repository);
        expect(created.outs.imageRef).toBe(`${inputs.repository}@${created.outs.digest}`);
        const { stdout: raw } = await run("skopeo", ["inspect", "--tls-verify=false", "--raw", `docker://${created.outs.imageRef}`]);
        expect((JSON.parse(raw) as { layers: unknown[] }).layers).toHaveLength(3);
    });
});
