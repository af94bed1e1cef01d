/**
 * Plugin resolution on the real CLI (issue 34, point 2), the path that decides which provider
 * version an admin's run uses. The language host reports the program's packages as upstream's
 * does (GetRequiredPackages: node_modules packages with `pulumi.resource`), the engine looks each
 * plugin up (pulumi/pulumi sdk/go/common/workspace/plugins.go `GetPluginPath`: the project's
 * plugins, then $PATH, then the plugin cache), and with automatic acquisition disabled a missing
 * one is an error, never a download (pkg/resource/deploy/providers/registry.go `loadProvider`).
 * What the engine received and where it found each plugin is read from its own log (`-v=7`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { applyObjects } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, requireBuild } from "./helpers/fixtures";
import { destroyStack } from "./helpers/destroy";
import { cliPath, describe as explain, javascriptProject, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, { version: string }>;
};
const lockVersion = (name: string) => lock.packages[`node_modules/@pulumi/${name}`].version;

/** A small stack of the repository's program: a CA injected into a ConfigMap (kubernetes and tls providers). */
function smallStack(name: string): Record<string, unknown> {
    return {
        cluster: { name, platform: "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
        caInjection: [{ kind: "ConfigMap", name: `${name}-trust`, namespace: CONFIG_NAMESPACE }],
        olm: { disableOLMAggregateCRDRoles: true },
        aws: { enabled: false },
    };
}

/** REAL_BIN without one plugin: a directory of links to every other entry. */
function binWithout(plugin: string): string {
    const bin = realEnv("REAL_BIN");
    const dir = path.join(realEnv("REAL_WORK"), `bin-without-${plugin}`);
    fs.mkdirSync(dir, { recursive: true });
    for (const entry of fs.readdirSync(bin).filter((e) => e !== plugin && !e.startsWith("."))) {
        fs.symlinkSync(path.join(bin, entry), path.join(dir, entry));
    }
    return dir;
}

/** Entries of the stack's plugin cache ($PULUMI_HOME/plugins): what the engine installed or downloaded. */
const pluginCache = (stack: TestStack) =>
    fs.existsSync(path.join(stack.home, "plugins")) ? fs.readdirSync(path.join(stack.home, "plugins")) : [];

let stack: TestStack;

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
        {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "plugins-trust", namespace: CONFIG_NAMESPACE },
            data: { owner: "platform" },
        },
    ]);
    stack = new TestStack("plugins", smallStack("plugins"));
});

afterAll(() => destroyStack(stack));

describe("plugin resolution on the real CLI", () => {
    test("GIVEN REAL_BIN on PATH and automatic acquisition disabled WHEN the program is applied THEN the engine is told the lockfile's packages, finds kubernetes and tls on PATH at those versions, and downloads nothing", () => {
        const up = stack.up(["-v=7", "--logtostderr", "--logflow"]);
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up).slice(-4000) }).toEqual({ status: 0, output: "" });
        const log = up.stderr;
        // What the language host reported (pkg/engine/plugins.go gatherPackagesFromProgram), once per run.
        const required = [
            ...new Set(
                [...log.matchAll(/gatherPackagesFromProgram\(\): package (\S+) \(\S*\) is required by language host/g)].map((m) => m[1]),
            ),
        ].sort();
        // Every pulumi.resource package installed is reported, aws-native too (the aws-tags pack's schema
        // source, @pulumi/aws-native): the engine pre-installs them all, though the program loads neither AWS provider here.
        expect(required).toEqual(["aws", "aws-native", "kubernetes", "tls"].map((name) => `${name}-${lockVersion(name)}`));
        // Where the engine found the plugins it loaded: on PATH, in REAL_BIN, asked for the lockfile's versions.
        const found = [
            ...new Set(
                [...log.matchAll(/GetPluginPath\(resource, (\w+), ([^,]+), [^)]*\): found on \$PATH ([^\s"\\]+)/g)].map(
                    (m) => `${m[1]} ${m[2]} ${m[3]}`,
                ),
            ),
        ].sort();
        expect(found).toEqual(
            ["kubernetes", "tls"].map(
                (name) => `${name} ${lockVersion(name)} ${path.join(realEnv("REAL_BIN"), `pulumi-resource-${name}`)}`,
            ),
        );
        // The engine says so to the user too (sdk/go/common/workspace/plugins.go, a plugin found on PATH).
        expect(
            [
                ...new Set(
                    [...up.stdout.matchAll(/warning: using (pulumi-resource-\w+) from \$PATH at (\S+)/g)].map((m) => `${m[1]} ${m[2]}`),
                ),
            ].sort(),
        ).toEqual(
            ["kubernetes", "tls"].map((name) => `pulumi-resource-${name} ${path.join(realEnv("REAL_BIN"), `pulumi-resource-${name}`)}`),
        );
        expect({ downloads: /Downloading plugin/i.test(up.stdout + up.stderr), cache: pluginCache(stack) }).toEqual({
            downloads: false,
            cache: [],
        });
    });

    test.each(["kubernetes", "tls"])(
        "GIVEN PATH without pulumi-resource-%s and automatic acquisition disabled WHEN the program is previewed THEN it fails naming the plugin and the version asked for, and downloads nothing",
        (plugin) => {
            const result = stack.run(["preview", "--stack", stack.name, "--non-interactive", "--color", "never"], {
                PATH: [binWithout(`pulumi-resource-${plugin}`), ...cliPath().split(path.delimiter).slice(1)].join(path.delimiter),
            });
            const output = result.stdout + result.stderr;
            expect(result.status).not.toBe(0);
            expect(output).toContain(
                `error: no resource plugin 'pulumi-resource-${plugin}' found in the workspace at version v${lockVersion(plugin)} or on your $PATH`,
            );
            expect({ downloads: /Downloading plugin/i.test(output), cache: pluginCache(stack) }).toEqual({ downloads: false, cache: [] });
        },
    );

    test("GIVEN a program asking for a kubernetes provider newer than REAL_BIN's WHEN previewed THEN the engine prints the plugin version warning and the real tier's CLI runs refuse it", () => {
        // The check every TestStack run makes (helpers/stack.ts), shown to fail on the engine's real warning.
        const dir = javascriptProject(
            path.join(realEnv("REAL_WORK"), "newer-provider"),
            "newer-provider",
            `const k8s = require("@pulumi/kubernetes");
new k8s.Provider("newer", { context: process.env.REAL_CONTEXT || "real", kubeconfig: "" }, { version: "9.9.9" });
`,
        );
        const newer = new TestStack("newer-provider", {}, { projectDirectory: dir });
        expect(() => newer.preview()).toThrow(
            `printed the plugin version warning "resource plugin kubernetes is expected to have version >=9.9.9, but has ${lockVersion("kubernetes")}"`,
        );
    });
});
