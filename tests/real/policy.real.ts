/**
 * Both policy packs on the real engine (issue 25, 3g): the CLI starts each pack through the
 * language host's RunPlugin (pulumi/pulumi pkg/resource/plugin analyzer_plugin.go; this
 * project's host: tools/pulumi/cmd/pulumi-language-nodejs), with the policy config
 * `npm run policy:config` writes for the stack.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { applyObjects } from "./helpers/kubectl";
import { fullStackConfig, preexistingObjects, requireBuild } from "./helpers/fixtures";
import { describe as explain, realEnv, REPO_ROOT, runTemp, TestStack } from "./helpers/stack";

const PACKS = ["aws-tags", "k8s-rbac"] as const;

/**
 * The stacks here are only previewed: no object is created, so no pod is admitted and the
 * subscription webhook's server (which the applied stacks run, helpers/subscription-webhook.ts)
 * has nothing to answer.
 */
/** `npm run policy:config` for the stack's file; returns the `--policy-pack` arguments with their configs. */
function policyArgs(stack: TestStack): string[] {
    const out = path.join(realEnv("REAL_WORK"), "policy-config", stack.name);
    const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
    const result = spawnSync(tsx, ["scripts/policy/config.ts", "--config", stack.configFile, "--out", out], {
        cwd: REPO_ROOT,
        env: { ...process.env, TMPDIR: runTemp() },
        encoding: "utf8",
    });
    if (result.status !== 0) {
        throw new Error(`npm run policy:config failed:\n${result.stderr}${result.stdout}`);
    }
    return PACKS.flatMap((pack) => {
        const config = path.join(out, `${pack}.json`);
        expect(fs.existsSync(config)).toBe(true);
        return ["--policy-pack", path.join(REPO_ROOT, "policy-packs", pack), "--policy-pack-config", config];
    });
}

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
});

describe("the policy packs on the real engine", () => {
    test("3g GIVEN the stack without third-party operators and the policy config npm run policy:config writes for it WHEN previewed with both packs THEN the engine runs them and the preview passes", () => {
        const stack = new TestStack("policy-clean", fullStackConfig({ operators: [] }));
        const preview = stack.preview(policyArgs(stack));
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
        // Both packs ran: the CLI names each pack it loads. (CLI 3.260 prints no per-pack summary line
        // for a preview with no violation, so the exact summary lines cannot be asserted here.)
        expect(PACKS.filter((pack) => !preview.stdout.includes(pack))).toEqual([]);
    });

    test("3g GIVEN the stack with node-maintenance, whose CSV grants * on * of oauth.openshift.io WHEN previewed with both packs THEN the engine blocks it with each policy's message", () => {
        const stack = new TestStack("policy-violation", fullStackConfig());
        const preview = stack.preview(policyArgs(stack));
        expect(preview.status).not.toBe(0);
        const output = preview.stdout + preview.stderr;
        expect(PACKS.filter((pack) => !(preview.stdout + preview.stderr).includes(pack))).toEqual([]);
        // docs/policy-packs.md's CSV table for node-maintenance on plain Kubernetes: no seccomp profile, * on * of
        // oauth.openshift.io, a 1-replica fail-closed webhook; each a mandatory violation.
        const violated = [...output.matchAll(/k8s-rbac@v[\d.]+ \[mandatory\] \[severity: \w+\]\s+([a-z0-9-]+)/g)].map((m) => m[1]);
        expect([...new Set(violated)].sort()).toEqual([
            "k8s-no-wildcard-access",
            "k8s-pod-security-restricted",
            "k8s-webhook-fail-closed-availability",
        ]);
        expect(output).toContain('rules[10] grants every verb ("*") on every resource ("*") of API groups ["oauth.openshift.io"]');
    });
});
