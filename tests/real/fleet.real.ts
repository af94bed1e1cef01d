/**
 * `npm run fleet -- preview` over two real stacks (issue 25, 3c): the Automation API drives the
 * real CLI, whose engine events say which stack drifted. Each stack injects its CA into its own
 * ConfigMap of another team's; one ConfigMap is then edited out of band.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { applyObjects, kubectl } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, requireBuild } from "./helpers/fixtures";
import { destroyStack } from "./helpers/destroy";
import { describe as explain, REPO_ROOT, TestStack } from "./helpers/stack";

const STACKS = ["fleet-east", "fleet-west"] as const;
const configMapOf = (stack: string) => `${stack}-trust`;

function smallStack(name: string): Record<string, unknown> {
    return {
        cluster: { name, platform: "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
        caInjection: [{ kind: "ConfigMap", name: configMapOf(name), namespace: CONFIG_NAMESPACE }],
        // OLM's aggregate roles are cluster-wide objects: one stack per cluster may adopt them, not two.
        olm: { disableOLMAggregateCRDRoles: true },
        aws: { enabled: false },
    };
}

let stacks: TestStack[] = [];

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
        ...STACKS.map((s) => ({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: configMapOf(s), namespace: CONFIG_NAMESPACE },
            data: { owner: "platform" },
        })),
    ]);
    stacks = STACKS.map((name) => new TestStack(name, smallStack(name), { group: "fleet" }));
    for (const stack of stacks) {
        const up = stack.up();
        if (up.status !== 0) {
            throw new Error(`pulumi up of ${stack.name} failed: ${explain(up)}`);
        }
    }
});

afterAll(() => {
    for (const stack of stacks) {
        destroyStack(stack);
    }
});

describe("the fleet report on the real CLI", () => {
    test("3c GIVEN two applied stacks, one of whose injected CA was overwritten out of band WHEN npm run fleet -- preview runs THEN it reports that one drifted, on exactly that field, and the other in sync", () => {
        kubectl([
            "patch",
            "configmap",
            configMapOf("fleet-west"),
            "-n",
            CONFIG_NAMESPACE,
            "--type=merge",
            "--field-manager=out-of-band",
            "-p",
            JSON.stringify({ data: { "service-ca.crt": "not the stack's CA" } }),
        ]);
        const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
        const result = spawnSync(tsx, ["scripts/fleet/cli.ts", "preview", "--cwd", stacks[0].project, "--json", "--timeout", "300"], {
            cwd: REPO_ROOT,
            env: { ...stacks[0].env(), PATH: `${stacks[0].env().PATH}${path.delimiter}${path.dirname(process.execPath)}` },
            encoding: "utf8",
        });
        expect({ status: result.status, stderr: result.status === 2 ? "" : result.stderr }).toEqual({ status: 2, stderr: "" });
        const document = JSON.parse(result.stdout) as {
            stacks: { stack: string; status: string; resources: { op: string; type: string; properties: string[] }[] }[];
            summary: Record<string, number>;
        };
        expect(document.summary).toEqual({ "in-sync": 1, drifted: 1, failed: 0 });
        expect(document.stacks.map((s) => [s.stack, s.status, s.resources.map((r) => [r.op, r.type, r.properties])])).toEqual([
            ["fleet-east", "in-sync", []],
            ["fleet-west", "drifted", [["update", "kubernetes:core/v1:ConfigMapPatch", ['data["service-ca.crt"]']]]],
        ]);
    });
});
