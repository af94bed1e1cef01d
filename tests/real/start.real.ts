/**
 * `npm start` on the real CLI (issue 25, 3h): the embedded local stack (Pulumi.local.yaml, which
 * renders manifests instead of applying them) runs to completion and leaves the work tree as it
 * was, first with REAL_BIN on PATH, then on a machine with no CLI and no download but with Go,
 * where npm start builds the CLI through real:tools (here reusing this run's tool cache). Hermetic
 * tier only (scripts/real/test.ts leaves it out with --cluster existing): it runs the tools this
 * repository builds.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileBackendUrl, PLUGIN_VERSION_WARNING, realEnv, REPO_ROOT, runTemp } from "./helpers/stack";

/** Tracked and untracked changes git sees (ignored files, out/ and dist/, aside). */
const treeStatus = () => spawnSync("git", ["status", "--porcelain"], { cwd: REPO_ROOT, encoding: "utf8" }).stdout;

function startEnv(name: string, pathDirs: string[]): NodeJS.ProcessEnv {
    const home = path.join(realEnv("REAL_WORK"), "start", name);
    fs.mkdirSync(home, { recursive: true });
    return {
        PATH: [...pathDirs, path.dirname(process.execPath), "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(path.delimiter),
        HOME: home,
        PULUMI_HOME: path.join(home, ".pulumi"),
        // Its own state, not the developer's ./.pulumi-state.
        PULUMI_BACKEND_URL: fileBackendUrl(home),
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
        NO_COLOR: "1",
        TMPDIR: runTemp(),
        // An admin's machine names a cluster: the render-to-directory stack must not take it (the SDK
        // would fill the provider's kubeconfig from it, which provider 4.25.0 refuses beside a render directory).
        KUBECONFIG: realEnv("REAL_KUBECONFIG"),
    };
}

function goDirectory(): string {
    const go = spawnSync("go", ["env", "GOROOT"], { encoding: "utf8" });
    if (go.status !== 0) {
        throw new Error("go is not on PATH: the real tier builds its tools with it");
    }
    return path.join(go.stdout.trim(), "bin");
}

describe("npm start on the real CLI", () => {
    test("3h GIVEN REAL_BIN on PATH WHEN npm start runs THEN the local stack is up and the tree is as it was", () => {
        const before = treeStatus();
        const result = spawnSync("npm", ["start"], {
            cwd: REPO_ROOT,
            env: startEnv("on-path", [process.env.REAL_BIN ?? ""]),
            encoding: "utf8",
        });
        expect({ status: result.status, stderr: result.status === 0 ? "" : result.stderr + result.stdout }).toEqual({
            status: 0,
            stderr: "",
        });
        expect(result.stdout).toMatch(/Resources:\n[\s\S]*\d+ (created|unchanged)/);
        expect(result.stdout).not.toMatch(PLUGIN_VERSION_WARNING);
        expect(treeStatus()).toBe(before);
    });

    test("3h GIVEN no CLI on PATH, no download, and Go WHEN the start script runs THEN it builds the CLI through real:tools, says so, and runs the local stack", () => {
        const before = treeStatus();
        // This run's tool cache (REAL_BIN is <cache>/bin/<key>), so the build is a reuse here; on a fresh machine it is the cold build.
        const cache = path.dirname(path.dirname(realEnv("REAL_BIN")));
        const env = { ...startEnv("built", [goDirectory()]), REAL_CACHE: cache };
        const result = spawnSync(process.execPath, [path.join(REPO_ROOT, "scripts", "start.js")], {
            cwd: REPO_ROOT,
            env,
            encoding: "utf8",
        });
        expect({ status: result.status, stderr: result.status === 0 ? "" : result.stderr + result.stdout }).toEqual({
            status: 0,
            stderr: "",
        });
        expect(result.stderr).toContain(
            "npm start: no Pulumi CLI on PATH and none could be downloaded; building one from Go modules with npm run real:tools",
        );
        expect(result.stderr).toMatch(/^REAL_BIN=/m);
        expect(result.stdout).toMatch(/Resources:\n/);
        expect(result.stdout).not.toMatch(PLUGIN_VERSION_WARNING);
        expect(treeStatus()).toBe(before);
    });
});
