/**
 * `npm run upgrade-check -- --from <release> [--stack <name>] [--cwd <project>] [--json]`
 *
 * What `pulumi up` with this checkout's program would do to a stack last updated by an earlier
 * release, changing nothing: the release's program (its commit from CHANGELOG.md, or any commit)
 * is checked out as a `git worktree` in a temporary directory, and the stack is previewed with it
 * and with the current program, side by side. A step both previews plan is drift (the cluster
 * moved since the last update); a step only the current program plans (or plans differently) is
 * the upgrade. Replacing or deleting a CRD, a Namespace or anything the stack does not own is
 * flagged. Previews take no lock on the state backend (docs/operations.md, *One runner at a time*).
 * Exit 0 when the upgrade plans nothing dangerous, 1 when it does, 2 on a usage or run error.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { parse, stringify } from "yaml";
import { checkStack, leftByInterruption, recoveryMessage } from "../interrupted-state";
import { installedCli } from "../pulumi-cli";

const REPO = path.resolve(__dirname, "..", "..");
const USAGE = "usage: npm run upgrade-check -- --from <release|commit> [--stack <name>] [--cwd <project>] [--json]";

export interface PlannedStep {
    readonly op: string;
    readonly urn: string;
    readonly paths: readonly string[];
}

export interface UpgradePlan {
    readonly from: { readonly release: string; readonly commit: string };
    /** Steps the current program plans that the release's program does not (or plans otherwise). */
    readonly upgrade: readonly PlannedStep[];
    /** Steps both plan: the cluster or config moved since the last update, whatever the program. */
    readonly drift: readonly PlannedStep[];
    /** The upgrade's replacements and deletions of CRDs and Namespaces, which no release may plan. */
    readonly dangerous: readonly PlannedStep[];
}

/** The commit of a release named in CHANGELOG.md (`## <version>: commit <hash>`), or of a commit-ish. */
export function releaseCommit(from: string, changelog: string, revParse: (rev: string) => string | undefined): string {
    const heading = changelog.split("\n").find((line) => line.startsWith(`## ${from}: commit `));
    const rev = heading ? heading.slice(`## ${from}: commit `.length).split(/\s/)[0] : from;
    const commit = revParse(rev);
    if (!commit) {
        throw new Error(
            `--from ${JSON.stringify(from)} is neither a release of CHANGELOG.md (## <version>: commit <hash>) nor a commit of this repository`,
        );
    }
    return commit;
}

function changedSteps(preview: { steps?: { op: string; urn: string; detailedDiff?: Record<string, unknown> }[] }): PlannedStep[] {
    return (preview.steps ?? [])
        .filter((s) => !["same", "read", "refresh"].includes(s.op))
        .map((s) => ({ op: s.op, urn: s.urn, paths: Object.keys(s.detailedDiff ?? {}).sort() }));
}

const key = (s: PlannedStep) => `${s.op} ${s.urn} ${s.paths.join(",")}`;

/** Splits the current program's steps into the upgrade and the drift both programs see. */
export function comparePlans(release: string, commit: string, before: PlannedStep[], after: PlannedStep[]): UpgradePlan {
    const old = new Set(before.map(key));
    const upgrade = after.filter((s) => !old.has(key(s)));
    const dangerous = upgrade.filter(
        (s) =>
            /^(delete|replace|create-replacement|delete-replaced)$/.test(s.op) &&
            /::kubernetes:(apiextensions\.k8s\.io\/v1:CustomResourceDefinition|core\/v1:Namespace)::/.test(s.urn.replace(/\$/g, "::")),
    );
    return { from: { release, commit }, upgrade, drift: after.filter((s) => old.has(key(s))), dangerous };
}

function run(command: string, args: string[], cwd: string, what: string): string {
    const result = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 256 << 20, env: process.env });
    if (result.status !== 0) {
        throw new Error(`${what} failed (exit ${result.status}):\n${result.stderr || result.stdout}`);
    }
    return result.stdout;
}

function preview(cli: string, project: string, stack: string): PlannedStep[] {
    const out = run(cli, ["preview", "--stack", stack, "--json", "--non-interactive"], project, `pulumi preview in ${project}`);
    return changedSteps(JSON.parse(out) as Parameters<typeof changedSteps>[0]);
}

/** The release's program as a project directory of its own: its Pulumi.yaml, `main` at its worktree, the stack's config file. */
function releaseProject(project: string, stack: string, worktree: string, dir: string): string {
    const releaseProjectDir = path.join(dir, "project");
    fs.mkdirSync(releaseProjectDir);
    const yaml = parse(fs.readFileSync(path.join(worktree, "Pulumi.yaml"), "utf8")) as Record<string, unknown>;
    fs.writeFileSync(path.join(releaseProjectDir, "Pulumi.yaml"), stringify({ ...yaml, main: path.relative(releaseProjectDir, worktree) }));
    fs.copyFileSync(path.join(project, `Pulumi.${stack}.yaml`), path.join(releaseProjectDir, `Pulumi.${stack}.yaml`));
    return releaseProjectDir;
}

export function upgradeCheck(from: string, project: string, stackName: string | undefined): UpgradePlan {
    const cli = installedCli(process.env);
    if (!cli) throw new Error("no pulumi CLI on PATH (npm's launcher is not used): install it, https://www.pulumi.com/docs/install/");
    const stack = stackName ?? run(cli, ["stack", "--show-name", "--non-interactive"], project, "pulumi stack --show-name").trim();
    const revParse = (rev: string) => {
        const r = spawnSync("git", ["-C", REPO, "rev-parse", "--verify", "--quiet", `${rev}^{commit}`], { encoding: "utf8" });
        return r.status === 0 ? r.stdout.trim() : undefined;
    };
    const commit = releaseCommit(from, fs.readFileSync(path.join(REPO, "CHANGELOG.md"), "utf8"), revParse);
    // A stack left by an interrupted update: its recovery first; a preview would not show what `up` does to it.
    const left = checkStack({ cli, cwd: project, stack, env: process.env });
    if (left && leftByInterruption(left)) {
        throw new Error(recoveryMessage(stack, left));
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "upgrade-check-"));
    const worktree = path.join(dir, "release");
    try {
        run("git", ["-C", REPO, "worktree", "add", "--detach", worktree, commit], REPO, `git worktree add ${commit}`);
        // The release's dependencies: this checkout's when the lockfiles agree, else its own.
        const sameLock = spawnSync("git", ["-C", REPO, "diff", "--quiet", commit, "--", "package-lock.json"]).status === 0;
        if (sameLock) fs.symlinkSync(path.join(REPO, "node_modules"), path.join(worktree, "node_modules"));
        else run("npm", ["ci", "--no-audit", "--no-fund"], worktree, `npm ci in the release ${commit}`);
        // The webhook image packages the compiled webhook (dist/webhook).
        run("npm", ["run", "--silent", "build"], worktree, `npm run build in the release ${commit}`);
        const before = preview(cli, releaseProject(project, stack, worktree, dir), stack);
        const after = preview(cli, project, stack);
        return comparePlans(from, commit, before, after);
    } finally {
        spawnSync("git", ["-C", REPO, "worktree", "remove", "--force", worktree]);
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

function formatPlan(plan: UpgradePlan): string {
    const lines = [`upgrade from ${plan.from.release} (${plan.from.commit.slice(0, 12)}) to this checkout:`];
    const show = (steps: readonly PlannedStep[]) =>
        steps.length === 0
            ? ["  (nothing)"]
            : steps.map(
                  (s) =>
                      `  ${s.op.padEnd(10)} ${s.urn.split("::").slice(2).join("::")}${s.paths.length ? `  [${s.paths.join(", ")}]` : ""}`,
              );
    lines.push(...show(plan.upgrade), "drift (planned by both programs):", ...show(plan.drift));
    if (plan.dangerous.length > 0) lines.push("REFUSE: the upgrade replaces or deletes a CRD or Namespace:", ...show(plan.dangerous));
    return lines.join("\n");
}

if (require.main === module) {
    try {
        const { values } = parseArgs({
            options: { from: { type: "string" }, stack: { type: "string" }, cwd: { type: "string" }, json: { type: "boolean" } },
        });
        if (!values.from) throw new Error(`--from is required\n${USAGE}`);
        const plan = upgradeCheck(values.from, path.resolve(values.cwd ?? process.cwd()), values.stack);
        console.log(values.json ? JSON.stringify(plan, null, 2) : formatPlan(plan));
        process.exit(plan.dangerous.length > 0 ? 1 : 0);
    } catch (error) {
        console.error(`upgrade-check: ${(error as Error).message}`);
        process.exit(2);
    }
}
