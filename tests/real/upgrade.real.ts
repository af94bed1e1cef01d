/**
 * Upgrading a stack from the previous release (issue 39, point 2). The release's program (its
 * commit from CHANGELOG.md, checked out as a `git worktree`) runs `up`; `npm run upgrade-check`
 * then plans exactly what CHANGELOG.md's Unreleased section announces for an existing stack (no
 * step: the Namespace's delete timeout is recorded without one), the current program applies it,
 * the state holds the new timeout, and the next preview is empty.
 *
 * One small stack: the sample widget operator in a namespace the stack creates.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { releaseCommit } from "../../scripts/upgrade/check";
import { kubectlRun } from "./helpers/kubectl";
import { requireBuild, WIDGET_CRD, widgetOperatorStack } from "./helpers/fixtures";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const RELEASE = "0.1.0";
const STACK = "upgrade";

let stack: TestStack;
let worktree: string;

/** Points the stack's project at a program checkout. */
function programAt(project: string, checkout: string): void {
    const yaml = parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8")) as Record<string, unknown>;
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), stringify({ ...yaml, main: path.relative(project, checkout) }));
}

beforeAll(() => {
    requireBuild(REPO_ROOT);
    const git = (args: string[]) => spawnSync("git", ["-C", REPO_ROOT, ...args], { encoding: "utf8" });
    const commit = releaseCommit(RELEASE, fs.readFileSync(path.join(REPO_ROOT, "CHANGELOG.md"), "utf8"), (rev) => {
        const r = git(["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
        return r.status === 0 ? r.stdout.trim() : undefined;
    });
    worktree = path.join(realEnv("REAL_WORK"), "release-program");
    const added = git(["worktree", "add", "--detach", worktree, commit]);
    if (added.status !== 0) throw new Error(`git worktree add ${commit} failed: ${added.stderr}`);
    fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(worktree, "node_modules"));

    const project = path.join(realEnv("REAL_WORK"), "stacks", STACK, "project");
    fs.mkdirSync(project, { recursive: true });
    programAt(project, worktree);
    stack = new TestStack(STACK, widgetOperatorStack("widgets-upgrade"), { projectDirectory: project });
});

afterAll(() => {
    stack?.destroy();
    kubectlRun(["delete", "crd", WIDGET_CRD, "--ignore-not-found"]);
    if (worktree) spawnSync("git", ["-C", REPO_ROOT, "worktree", "remove", "--force", worktree]);
});

describe(`upgrading a stack from release ${RELEASE} (issue 39)`, () => {
    test("GIVEN a stack applied by the previous release's program WHEN upgrade-check runs with the current one THEN it plans exactly what CHANGELOG.md announces (no step, nothing dangerous), the current program applies it recording the Namespace's delete timeout, and the next preview is empty", () => {
        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });

        programAt(stack.project, REPO_ROOT);
        const check = spawnSync(
            process.execPath,
            [
                require.resolve("tsx/cli"),
                path.join(REPO_ROOT, "scripts", "upgrade", "check.ts"),
                "--from",
                RELEASE,
                "--stack",
                STACK,
                "--json",
            ],
            { cwd: stack.project, env: { ...process.env, ...stack.env() }, encoding: "utf8", maxBuffer: 64 << 20 },
        );
        expect({ status: check.status, stderr: check.status === 0 ? "" : check.stderr }).toEqual({ status: 0, stderr: "" });
        const plan = JSON.parse(check.stdout) as { upgrade: unknown[]; drift: unknown[]; dangerous: unknown[] };
        expect({ upgrade: plan.upgrade, drift: plan.drift, dangerous: plan.dangerous }).toEqual({ upgrade: [], drift: [], dangerous: [] });

        const applied = stack.up();
        expect({ status: applied.status, output: applied.status === 0 ? "" : explain(applied) }).toEqual({ status: 0, output: "" });
        expect(stack.customTimeouts("kubernetes:core/v1:Namespace::namespace-widgets-upgrade")).toEqual({ delete: 60 });

        const preview = stack.preview(["--expect-no-changes"]);
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    });
});
