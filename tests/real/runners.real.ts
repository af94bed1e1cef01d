/**
 * One stack, many runners (issue 26, 4): nothing of the runner enters the provider's inputs or
 * the state, so a colleague, CI or PKO previews the stack with no provider diff. Two small stacks,
 * one reaching its cluster by `cluster.kubeContext`, one by a `cluster.kubeconfig` relative to the
 * project; each applied by a first runner and previewed by a second whose KUBECONFIG is another
 * path, a colon-separated list, and whose HOME and PULUMI_HOME differ.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { applyObjects } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, requireBuild } from "./helpers/fixtures";
import { destroyStack } from "./helpers/destroy";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const configMapOf = (stack: string) => `${stack}-trust`;

function smallStack(name: string, cluster: Record<string, unknown>): Record<string, unknown> {
    return {
        cluster: { name, platform: "kubernetes", ...cluster },
        caInjection: [{ kind: "ConfigMap", name: configMapOf(name), namespace: CONFIG_NAMESPACE }],
        // OLM's aggregate roles are cluster-wide objects: one stack per cluster may adopt them.
        olm: { disableOLMAggregateCRDRoles: true },
        aws: { enabled: false },
    };
}

/** A second runner: its own home, PULUMI_HOME, and KUBECONFIG a colon-separated list (an empty file, then a copy of the cluster's). */
function secondRunner(name: string): NodeJS.ProcessEnv {
    const home = path.join(realEnv("REAL_WORK"), `${name}-second-runner`);
    fs.mkdirSync(path.join(home, "kube"), { recursive: true });
    const empty = path.join(home, "kube", "empty");
    fs.writeFileSync(empty, "apiVersion: v1\nkind: Config\n");
    const copy = path.join(home, "kube", "cluster");
    fs.copyFileSync(realEnv("REAL_KUBECONFIG"), copy);
    return { HOME: home, PULUMI_HOME: path.join(home, ".pulumi"), KUBECONFIG: [empty, copy].join(path.delimiter) };
}

const stacks: TestStack[] = [];

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
        ...["runner-context", "runner-file"].map((s) => ({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: configMapOf(s), namespace: CONFIG_NAMESPACE },
            data: { owner: "platform" },
        })),
    ]);
});

afterAll(() => {
    for (const stack of stacks) {
        destroyStack(stack);
    }
});

describe("a stack any runner can run", () => {
    test.each([
        ["cluster.kubeContext", "runner-context"],
        ["cluster.kubeconfig (relative to the project)", "runner-file"],
    ])(
        "GIVEN a stack reaching its cluster by %s, applied by one runner WHEN a second runner with a colon-separated KUBECONFIG, another HOME and PULUMI_HOME previews it THEN nothing differs, and the state holds no path of either runner",
        (_how, name) => {
            const byFile = name === "runner-file";
            const stack = new TestStack(
                name,
                smallStack(name, byFile ? { kubeconfig: "kube/cluster.yaml" } : { kubeContext: process.env.REAL_CONTEXT ?? "real" }),
            );
            stacks.push(stack);
            if (byFile) {
                fs.mkdirSync(path.join(stack.project, "kube"), { recursive: true });
                fs.copyFileSync(realEnv("REAL_KUBECONFIG"), path.join(stack.project, "kube", "cluster.yaml"));
            }
            const up = stack.up();
            expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });

            const runner = secondRunner(name);
            const preview = stack.run(["preview", "--stack", stack.name, "--non-interactive", "--expect-no-changes", "--diff"], runner);
            expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });

            const state = stack.exportState();
            const paths = [realEnv("REAL_KUBECONFIG"), runner.KUBECONFIG as string, stack.project, stack.home, "kube/cluster.yaml"];
            expect(paths.filter((p) => state.includes(p))).toEqual([]);
        },
    );
});
