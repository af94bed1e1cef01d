/**
 * Continuous reconcile against the real API server and the real provider. PKO's own pods cannot
 * run here (its operator and workspace images are not built by the real tier), so what PKO does
 * with the Stack stays mocked (tests/reconcile); what the API server and the provider decide is
 * shown here:
 *
 * - PKO's Stack CRD (its CEL rule on the name) as the real API server applies it, and the
 *   render's validator agreeing with it;
 * - the provider's Deployment await run by real `pulumi up` as the reconcile ServiceAccount
 *   (a kubeconfig context impersonating it): with the role derived from the await table it
 *   completes; with the same role less PersistentVolumeClaims (what the role granted before the
 *   table) the await's informer never syncs and the update never ends, its own timeout
 *   (`pulumi.com/timeoutSeconds`) notwithstanding;
 * - a stack with reconcile on, whose Stack PKO would mark Stalled (the condition is written here
 *   as PKO writes it, through the status subresource), reported by the fleet report on the real CLI.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { reconcileRules } from "../../components/reconcile/rbac";
import { validateManifests } from "../../scripts/render/validate-k8s";
import { spawn, spawnSync } from "node:child_process";
import { destroyStack } from "./helpers/destroy";
import { eventually } from "./helpers/eventually";
import { CONFIG_NAMESPACE, requireBuild } from "./helpers/fixtures";
import { applyObjects, getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { killTree } from "./helpers/processes";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const PKO_CRD = path.join(REPO_ROOT, "..", "shared", "testdata", "pulumi-kubernetes-operator", "pulumi.com_stacks.yaml");
const NAMESPACE = "reconcile-await";
const PROGRAM = path.join(REPO_ROOT, "tests", "real", "programs", "await-under-role");
/** The Deployment's `pulumi.com/timeoutSeconds`. */
const AWAIT_TIMEOUT_SECONDS = 30;

function stackObject(name: string): Record<string, unknown> {
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name, namespace: NAMESPACE },
        spec: { stack: "organization/cluster-platform/prod", projectRepo: "https://example.com/platform.git", branch: "main" },
    };
}

/** A kubeconfig beside the run's whose context `name` acts as `user` (kubeconfig `as`: client-go impersonation). */
function impersonatingKubeconfig(name: string, user: string): string {
    const admin = JSON.parse(kubectl(["config", "view", "--raw", "-o", "json"])) as {
        "current-context": string;
        contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
        users: Array<{ name: string; user: Record<string, unknown> }>;
        [key: string]: unknown;
    };
    const current = admin.contexts.find((c) => c.name === admin["current-context"]) as (typeof admin.contexts)[number];
    const credentials = admin.users.find((u) => u.name === current.context.user) as (typeof admin.users)[number];
    const file = path.join(realEnv("REAL_WORK"), `${name}.kubeconfig`);
    fs.writeFileSync(
        file,
        stringify({
            ...admin,
            contexts: [...admin.contexts, { name, context: { cluster: current.context.cluster, user: name } }],
            users: [...admin.users, { name, user: { ...credentials.user, as: user } }],
        }),
    );
    return file;
}

/** A ServiceAccount bound to a ClusterRole of `rules`, and a stack of the await program acting as it. */
function stackActingAs(name: string, rules: unknown[]): TestStack {
    applyObjects([
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace: NAMESPACE } },
        { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: { name },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
            subjects: [{ kind: "ServiceAccount", name, namespace: NAMESPACE }],
        },
    ]);
    const project = path.join(realEnv("REAL_WORK"), "stacks", name, "project");
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(
        path.join(project, "Pulumi.yaml"),
        stringify({ name: "await-under-role", runtime: "nodejs", main: path.relative(project, path.join(PROGRAM, "index.js")) }),
    );
    return new TestStack(
        name,
        {
            "await-under-role:context": name,
            "await-under-role:namespace": NAMESPACE,
            "await-under-role:name": name,
            "await-under-role:timeoutSeconds": String(AWAIT_TIMEOUT_SECONDS),
        },
        { projectDirectory: project, kubeconfig: impersonatingKubeconfig(name, `system:serviceaccount:${NAMESPACE}:${name}`) },
    );
}

beforeAll(() => {
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } },
        ...parseAllDocuments(fs.readFileSync(PKO_CRD, "utf8"))
            .map((d) => d.toJS() as Record<string, unknown> | null)
            .filter((d) => d?.kind === "CustomResourceDefinition"),
    ]);
    return eventually("the apiextensions controller marks a new CRD Established once its names are accepted", () =>
        (getObject("crd", "stacks.pulumi.com")?.status?.conditions ?? []).some(
            (c: { type: string; status: string }) => c.type === "Established" && c.status === "True",
        )
            ? true
            : undefined,
    );
});

/**
 * How many times the provider's informer has reported a forbidden list of PersistentVolumeClaims
 * so far (client-go reflector: "failed to list *unstructured.Unstructured: persistentvolumeclaims is
 * forbidden", on the provider's stderr, shown by the CLI).
 */
/**
 * The lists and watches of PersistentVolumeClaims by `user` (the stack's kubeconfig impersonates
 * it, so the audit event names it as `impersonatedUser`) the API server refused (403), from its audit log (the hermetic cluster records exactly those: scripts/real/cluster.ts). On a cluster
 * the run did not start there is no log of ours: the refusals the provider's informer reported on
 * its stderr, which the CLI relays, are counted instead.
 */
function refusedClaimLists(user: string, output: string): number {
    const clusterDir = process.env.REAL_CLUSTER_DIR;
    if (!clusterDir) {
        return (output.match(/persistentvolumeclaims is forbidden/g) ?? []).length;
    }
    return fs
        .readFileSync(path.join(clusterDir, "logs", "audit.log"), "utf8")
        .split("\n")
        .filter((line) => line.trim())
        .map(
            (line) =>
                JSON.parse(line) as {
                    user?: { username?: string };
                    impersonatedUser?: { username?: string };
                    objectRef?: { resource?: string };
                    verb?: string;
                    responseStatus?: { code?: number };
                },
        )
        .filter(
            (event) =>
                (event.impersonatedUser ?? event.user)?.username === user &&
                event.objectRef?.resource === "persistentvolumeclaims" &&
                (event.verb === "list" || event.verb === "watch") &&
                event.responseStatus?.code === 403,
        ).length;
}

describe("PKO's Stack CRD on the real API server", () => {
    test("GIVEN PKO's CRD applied WHEN Stacks named with 43 and 42 characters are created (server-side dry run) THEN the API server's CEL refuses the first with PKO's message and takes the second, as the render's validator says", () => {
        const crd = parseAllDocuments(fs.readFileSync(PKO_CRD, "utf8"))
            .map((d) => d.toJS() as Record<string, unknown> | null)
            .find((d) => d?.kind === "CustomResourceDefinition");
        const verdicts = [43, 42].map((length) => {
            const object = stackObject("s".repeat(length));
            const server = kubectlRun(["create", "--dry-run=server", "-f", "-"], { input: JSON.stringify(object) });
            const render = validateManifests([crd as never, object as never]).problems.map((p) => p.message);
            return {
                length,
                refused: server.status !== 0,
                byServer: server.stderr.includes("Stack name must be no more than 42 characters in length."),
                render,
            };
        });
        expect(verdicts).toEqual([
            {
                length: 43,
                refused: true,
                byServer: true,
                render: ["(root): Stack name must be no more than 42 characters in length. (x-kubernetes-validations)"],
            },
            { length: 42, refused: false, byServer: false, render: [] },
        ]);
    });
});

describe("the provider's Deployment await as the reconcile ServiceAccount", () => {
    const stacks: TestStack[] = [];
    afterAll(() => {
        for (const stack of stacks) {
            destroyStack(stack);
        }
    });

    test("GIVEN the role derived from the await table for a declared Deployment WHEN real pulumi up runs as its ServiceAccount THEN the Deployment is created and awaited to completion, and a second preview shows no change", () => {
        const stack = stackActingAs("await-table-role", reconcileRules([{ apiVersion: "apps/v1", kind: "Deployment", use: "declared" }]));
        stacks.push(stack);
        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expect(kubectl(["get", "deployment", "await-table-role", "-n", NAMESPACE, "-o", "jsonpath={.status.readyReplicas}"])).toBe("1");
        const preview = stack.preview(["--expect-no-changes"]);
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    });

    test("GIVEN the same role without PersistentVolumeClaims (what the role granted before) WHEN real pulumi up runs as its ServiceAccount THEN the Deployment becomes Available yet the update never completes, not even at the resource's own timeout", async () => {
        const rules = reconcileRules([{ apiVersion: "apps/v1", kind: "Deployment", use: "declared" }]).map((rule) => ({
            ...rule,
            resources: (rule.resources ?? []).filter((r) => r !== "persistentvolumeclaims"),
        }));
        const stack = stackActingAs("await-without-pvcs", rules);
        stacks.push(stack);
        const serviceAccount = `system:serviceaccount:${NAMESPACE}:await-without-pvcs`;
        const canList = kubectlRun(["auth", "can-i", "list", "persistentvolumeclaims", "-n", NAMESPACE], { as: serviceAccount });
        expect(canList.stdout.trim()).toBe("no");
        // Ended below with every process it started: this update does not end by itself.
        const up = spawn("pulumi", ["up", "--stack", stack.name, "--non-interactive", "--color", "never", "--yes", "--skip-preview"], {
            cwd: stack.project,
            env: stack.env(),
            detached: true,
            stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        up.stdout.on("data", (d: Buffer) => (output += d.toString()));
        up.stderr.on("data", (d: Buffer) => (output += d.toString()));
        const exited = new Promise<number | null>((resolve) => up.on("close", (code) => resolve(code)));
        await eventually(
            "the update running in the background creates the Deployment",
            () => (getObject("deployment", "await-without-pvcs", NAMESPACE) ? true : undefined),
            { timeoutMs: 120_000, describe: () => output.slice(-2000) },
        );
        const available = kubectlRun([
            "wait",
            "--for=condition=Available",
            "--timeout=120s",
            "deployment/await-without-pvcs",
            "-n",
            NAMESPACE,
        ]);
        expect(available.stderr).toBe("");
        // A hang, told from a slow run: for twice the resource's own timeout (pulumi.com/timeoutSeconds:
        // 30) after the Deployment is Available the update has not ended (with the derived role it ends
        // within seconds of it), and meanwhile the API server refused the provider's informer its
        // lists of PersistentVolumeClaims (client-go's reflector retries with backoff): the await
        // waits on a cache sync that can never happen, not on something that will come.
        // The refusals are read from the API server's audit log, not from the provider's stderr as
        // the CLI relays it: one CI run's output had none although the update hung the same way.
        const bound = new Promise<"still running">((resolve) =>
            setTimeout(() => resolve("still running"), 2 * AWAIT_TIMEOUT_SECONDS * 1000),
        );
        try {
            expect(await Promise.race([exited.then((code) => `exited ${code}`), bound])).toBe("still running");
            expect({ refusedClaimLists: refusedClaimLists(serviceAccount, output) > 0, output: output.slice(-3000) }).toMatchObject({
                refusedClaimLists: true,
            });
            expect(output).toContain("creating");
        } finally {
            // The CLI and everything it started (its plugins run in process groups of their own), then
            // its lock on the stack (a DIY backend's lock files: `pulumi cancel`) and the Deployment its
            // interrupted create left outside the state, whatever the assertions found.
            await killTree(up.pid as number);
            await exited;
            const cancel = stack.run(["cancel", "--stack", stack.name, "--yes", "--non-interactive"]);
            kubectl(["delete", "deployment", "await-without-pvcs", "-n", NAMESPACE, "--ignore-not-found"]);
            expect({ status: cancel.status, stderr: cancel.stderr }).toEqual({ status: 0, stderr: "" });
        }
    });
});

describe("a stalled reconcile in the fleet report", () => {
    const name = "fleet-stalled";
    let stack: TestStack | undefined;
    afterAll(() => {
        if (stack) {
            destroyStack(stack);
        }
    });

    test("GIVEN a stack with reconcile on whose PKO Stack is Stalled WHEN npm run fleet -- preview runs on the real CLI THEN the stack's entry names the Stalled Stack with PKO's reason and message, and the exit code is 1", () => {
        requireBuild(REPO_ROOT);
        applyObjects([
            { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
            {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name: `${name}-trust`, namespace: CONFIG_NAMESPACE },
                data: { owner: "platform" },
            },
        ]);
        stack = new TestStack(name, {
            cluster: { name, platform: "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
            caInjection: [{ kind: "ConfigMap", name: `${name}-trust`, namespace: CONFIG_NAMESPACE }],
            olm: { disableOLMAggregateCRDRoles: true },
            aws: { enabled: false },
            reconcile: {
                enabled: true,
                namespace: NAMESPACE,
                createNamespace: false,
                git: { repository: "https://example.com/platform.git", branch: "main" },
            },
        });
        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        // What PKO 2.8+ writes after three failed updates (known condition types: Ready, Reconciling, Stalled).
        const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
        kubectl([
            "patch",
            "stack",
            `cluster-platform-${name}`,
            "-n",
            NAMESPACE,
            "--subresource=status",
            "--type=merge",
            "-p",
            JSON.stringify({
                status: {
                    conditions: [
                        { type: "Ready", status: "False", reason: "NotReady", message: "update failed", lastTransitionTime: now },
                        {
                            type: "Stalled",
                            status: "True",
                            reason: "UpdateFailed",
                            message: "3 consecutive update failures",
                            lastTransitionTime: now,
                        },
                    ],
                },
            }),
        ]);
        const tsx = path.join(REPO_ROOT, "node_modules", ".bin", "tsx");
        const result = spawnSync(tsx, ["scripts/fleet/cli.ts", "preview", "--cwd", stack.project, "--json", "--timeout", "300"], {
            cwd: REPO_ROOT,
            env: { ...stack.env(), PATH: `${stack.env().PATH}${path.delimiter}${path.dirname(process.execPath)}` },
            encoding: "utf8",
        });
        const document = JSON.parse(result.stdout || "{}") as {
            stacks?: Array<{ stack: string; status: string; stalled?: string[] }>;
            exitCode?: number;
        };
        expect({
            status: result.status,
            stacks: document.stacks?.map((s) => [s.stack, s.status, s.stalled]),
            stderr: result.status === 1 ? "" : result.stderr,
        }).toEqual({
            status: 1,
            stacks: [[name, "in-sync", [`cluster-platform-${name}: UpdateFailed: 3 consecutive update failures`]]],
            stderr: "",
        });
    });
});
