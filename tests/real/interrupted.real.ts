/**
 * Interrupted updates converge (issue 39, point 1): an `up` stopped by Ctrl-C (SIGINT to the CLI's
 * process group, as a terminal sends it) and one killed outright (SIGKILL to the group, as a
 * cancelled CI job or a lost machine) are brought back by the commands docs/operations.md gives,
 * to the objects an uninterrupted run makes: the objects created before the interruption keep their
 * uid, none is duplicated, no lock or pending operation is left, and the next preview is empty.
 *
 * Two more cases: the cluster's kube-apiserver stopped once the Namespace is created and started
 * again (hermetic only: scripts/real/test.ts leaves this file out with --cluster existing), and an
 * operator Deployment that never becomes Available under a short create timeout, then fixed.
 *
 * One stack: the sample widget operator in a namespace the stack creates. Each case interrupts the
 * `up` as soon as the CLI reports the Namespace created, while the rest is in flight.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { pendingOperations } from "../../scripts/interrupted-state";
import { startApiServer, stopApiServer } from "../../scripts/real/cluster";
import { eventually } from "./helpers/eventually";
import { getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { killAll, processesMarked } from "./helpers/processes";
import { requireBuild, WIDGET_CRD, widgetOperatorStack } from "./helpers/fixtures";
import { describe as explain, realEnv, REPO_ROOT, type RunResult, TestStack } from "./helpers/stack";

const STACK = "interrupted";
const NAMESPACE = "widgets-interrupted";

let stack: TestStack;

interface UpRun {
    /** What the CLI printed so far. */
    output(): string;
    /** The CLI's process group leader. */
    readonly pid: number;
    /** Resolves once the CLI is gone, after whatever it started and left running was killed. */
    readonly done: Promise<RunResult & { leftBehind: string[] }>;
}

/**
 * Starts `up` in a process group of its own; `onOutput` sees the output as it grows. The CLI starts
 * its plugins in process groups of their own, so a SIGKILL of its group leaves them running (the
 * kubernetes provider does not watch its engine): once the CLI is gone, whatever it started that is
 * still there (found by an environment entry every child inherits) is killed, as an admin would
 * have to, and named in `leftBehind`.
 */
function startUp(onOutput: (stdout: string, run: UpRun) => void = () => undefined): UpRun {
    const [markerName, markerValue] = ["CLUSTER_PLATFORM_INTERRUPTED_RUN", randomUUID()];
    const child: ChildProcess = spawn(
        "pulumi",
        ["up", "--stack", STACK, "--non-interactive", "--color", "never", "--yes", "--skip-preview"],
        { cwd: stack.project, env: { ...stack.env(), [markerName]: markerValue }, detached: true },
    );
    let stdout = "";
    let stderr = "";
    const run: UpRun = {
        output: () => `${stdout}${stderr}`,
        pid: child.pid as number,
        done: new Promise((resolve, reject) => {
            child.stdout?.on("data", (d: Buffer) => {
                stdout += d.toString("utf8");
                onOutput(stdout, run);
            });
            child.stderr?.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
            child.on("error", reject);
            child.on("close", (code, by) => {
                const left = processesMarked(`${markerName}=${markerValue}`);
                killAll(left).then(
                    () => resolve({ status: code ?? (by ? 128 : 1), stdout, stderr, leftBehind: left.map((e) => e.command) }),
                    reject,
                );
            });
        }),
    };
    return run;
}

/** The CLI's line for the stack's Namespace created: the point each case interrupts at, with the rest in flight. */
const namespaceCreated = (stdout: string) => new RegExp(`Namespace +namespace-${NAMESPACE} +created`).test(stdout);

/** `up`, with `signal` sent to its process group once the Namespace is reported created. */
async function interruptedUp(signal: NodeJS.Signals): Promise<RunResult & { signalled: boolean; leftBehind: string[] }> {
    let signalled = false;
    const result = await startUp((stdout, run) => {
        if (!signalled && namespaceCreated(stdout)) {
            signalled = true;
            process.kill(-run.pid, signal);
        }
    }).done;
    return { ...result, signalled };
}

/** The stack's objects in its namespace, by kind and name (a duplicate would show as a second name). */
function namespaceObjects(): string[] {
    return kubectl(["get", "deployments,services,serviceaccounts,roles,rolebindings,secrets", "-n", NAMESPACE, "-o", "name"])
        .split("\n")
        .filter((line) => line && !line.includes("serviceaccount/default") && !line.includes("kube-root-ca"))
        .sort();
}

function expectConverged(namespaceUid: string): void {
    const preview = stack.preview(["--expect-no-changes"]);
    expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    const state = stack.exportState();
    expect({
        uid: getObject("namespace", NAMESPACE)?.metadata?.uid,
        pending: state.includes('"pending_operations"'),
        locks: stack.lockFiles(),
    }).toEqual({
        uid: namespaceUid,
        pending: false,
        locks: [],
    });
}

/**
 * The program with a stack transformation giving every Deployment a create and update timeout of
 * `seconds`. The program itself has no such setting: the provider's Deployment await waits 10
 * minutes by default (pulumi-kubernetes v4.25.0 `provider/pkg/await/deployment.go`,
 * `DefaultDeploymentTimeoutMins`), longer than a CI run can spend on one case. The engine hands a
 * resource's custom timeout to the same await (`awaitConfig.getTimeout`), so only the wait is shorter.
 */
function deploymentTimeoutProgram(seconds: number): string {
    const dir = path.join(realEnv("REAL_WORK"), "stacks", STACK, "timeout-program");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "interrupted-timeout", main: "index.ts" }));
    if (!fs.existsSync(path.join(dir, "node_modules"))) {
        fs.symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(dir, "node_modules"));
    }
    const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "tsconfig.pulumi.json"), "utf8")) as { compilerOptions: object };
    fs.writeFileSync(
        path.join(dir, "tsconfig.pulumi.json"),
        JSON.stringify({
            extends: path.join(REPO_ROOT, "tsconfig.json"),
            compilerOptions: base.compilerOptions,
            files: ["index.ts"],
            include: [],
        }),
    );
    fs.writeFileSync(
        path.join(dir, "index.ts"),
        [
            'import * as pulumi from "@pulumi/pulumi";',
            "pulumi.runtime.registerStackTransformation((args) =>",
            '    args.type === "kubernetes:apps/v1:Deployment"',
            `        ? { props: args.props, opts: { ...args.opts, customTimeouts: { create: "${seconds}s", update: "${seconds}s" } } }`,
            "        : undefined,",
            ");",
            `export = require(${JSON.stringify(REPO_ROOT)});`,
            "",
        ].join("\n"),
    );
    return dir;
}

/** Runs `work` with the stack's project pointing at the program in `main`, then at the repository's again. */
function withProgram<T>(main: string, work: () => T): T {
    const file = path.join(stack.project, "Pulumi.yaml");
    const original = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, stringify({ ...(parse(original) as object), main: path.relative(stack.project, main) }));
    try {
        return work();
    } finally {
        fs.writeFileSync(file, original);
    }
}

let uninterrupted: string[];

beforeAll(() => {
    requireBuild(REPO_ROOT);
    stack = new TestStack(STACK, widgetOperatorStack(NAMESPACE));
});

afterAll(() => {
    stack?.run(["cancel", "--stack", STACK, "--yes"]);
    stack?.destroy();
    kubectlRun(["delete", "crd", WIDGET_CRD, "--ignore-not-found"]);
});

describe("interrupted updates converge (issue 39)", () => {
    test("GIVEN an `up` interrupted by SIGINT once its Namespace is created WHEN `pulumi up` runs again THEN it finishes, the Namespace keeps its uid, no lock or pending operation is left and the next preview is empty", async () => {
        const interrupted = await interruptedUp("SIGINT");
        // Ctrl-C: the CLI cancels, closes its plugins and exits; nothing it started is left.
        expect({
            signalled: interrupted.signalled,
            status: interrupted.status === 0 ? "completed" : "stopped",
            leftBehind: interrupted.leftBehind,
        }).toEqual({
            signalled: true,
            status: "stopped",
            leftBehind: [],
        });
        const uid = getObject("namespace", NAMESPACE)?.metadata?.uid as string;
        expect(stack.lockFiles()).toEqual([]);

        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expectConverged(uid);
        uninterrupted = namespaceObjects();
    });

    test("GIVEN an `up` whose process group is SIGKILLed once its Namespace is created WHEN the next `up` runs THEN it refuses on the lock left behind; `pulumi cancel`, `pulumi refresh --clear-pending-creates` and `pulumi up` bring back the same objects with the same Namespace uid, no duplicate, and an empty preview", async () => {
        const destroyed = stack.destroy();
        expect({ status: destroyed.status, output: destroyed.status === 0 ? "" : explain(destroyed) }).toEqual({ status: 0, output: "" });

        const killed = await interruptedUp("SIGKILL");
        // The provider that created the Namespace outlives its killed CLI (killed by interruptedUp).
        expect({
            signalled: killed.signalled,
            locks: stack.lockFiles().length,
            providerLeftRunning: killed.leftBehind.some((command) => command.includes("pulumi-resource-kubernetes")),
        }).toEqual({ signalled: true, locks: 1, providerLeftRunning: true });
        const uid = getObject("namespace", NAMESPACE)?.metadata?.uid as string;

        const refused = stack.up();
        expect({
            status: refused.status,
            locked: `${refused.stdout}${refused.stderr}`.includes("the stack is currently locked by 1 lock(s)"),
        }).toEqual({
            status: 1,
            locked: true,
        });

        // The fleet report meets the killed runner's lock (a previewing wrapper takes none) and
        // prints the recovery below instead of previewing: exit 1, no stack trace.
        const pending = pendingOperations(stack.exportState());
        const fleet = spawnSync(
            path.join(REPO_ROOT, "node_modules", ".bin", "tsx"),
            [path.join(REPO_ROOT, "scripts", "fleet", "cli.ts"), "preview", STACK, "--cwd", stack.project],
            { env: stack.env(), encoding: "utf8", timeout: 120_000 },
        );
        expect({
            status: fleet.status,
            lines: fleet.stdout.split("\n").filter((line) => !line.startsWith("  pending operation: ") && !line.startsWith("  locked by ")),
            lock: fleet.stdout.split("\n").filter((line) => line.startsWith("  locked by ") && line.includes(", a runner that has ended: "))
                .length,
            pending: fleet.stdout.split("\n").filter((line) => line.startsWith("  pending operation: ")).length,
            stderr: fleet.stderr,
        }).toEqual({
            status: 1,
            lines: [
                `${STACK}  failed: stack ${STACK} was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):`,
                "recover with:",
                `  pulumi cancel --stack ${STACK} --yes`,
                ...(pending.length > 0 ? [`  pulumi refresh --stack ${STACK} --clear-pending-creates --yes`] : []),
                `  pulumi up --stack ${STACK}`,
                `  pulumi preview --stack ${STACK} --expect-no-changes`,
                "1 stacks: 0 in sync, 0 drifted, 1 failed",
                "",
            ],
            lock: 1,
            pending: pending.length,
            stderr: "",
        });

        // The recovery docs/operations.md gives, in its order.
        for (const args of [
            ["cancel", "--stack", STACK, "--yes"],
            ["refresh", "--stack", STACK, "--non-interactive", "--yes", "--skip-preview", "--clear-pending-creates"],
            ["up", "--stack", STACK, "--non-interactive", "--yes", "--skip-preview"],
        ]) {
            const step = stack.run(args);
            expect({ command: args[0], status: step.status, output: step.status === 0 ? "" : explain(step) }).toEqual({
                command: args[0],
                status: 0,
                output: "",
            });
        }
        expectConverged(uid);
        expect(namespaceObjects()).toEqual(uninterrupted);
    });
    test("GIVEN an `up` during which the cluster's kube-apiserver is stopped once the Namespace is created WHEN it is started again THEN the update has failed on the refused calls, leaving no lock and no pending operation, and `pulumi up` brings back the same objects, no duplicate, and an empty preview", async () => {
        // Only the hermetic cluster's API server can be stopped (scripts/real/test.ts leaves this file out with --cluster existing).
        const clusterDir = process.env.REAL_CLUSTER_DIR;
        if (!clusterDir) {
            throw new Error("this case stops the run's own kube-apiserver (REAL_CLUSTER_DIR): it cannot run against an existing cluster");
        }
        const destroyed = stack.destroy();
        expect({ status: destroyed.status, output: destroyed.status === 0 ? "" : explain(destroyed) }).toEqual({ status: 0, output: "" });

        let stopped: Promise<void> | undefined;
        let exited = false;
        const run = startUp((stdout) => {
            if (!stopped && namespaceCreated(stdout)) {
                stopped = stopApiServer(clusterDir);
            }
        });
        void run.done.then(() => (exited = true));
        let whileDown: string;
        try {
            await eventually("the CLI reports the Namespace created, then the API server is stopped", () => (stopped ? true : undefined), {
                timeoutMs: 300_000,
            });
            await stopped;
            // What the engine does with the API server gone: ends the update, or reports refused calls and goes on.
            whileDown = await eventually(
                "the engine reacts to the API server being gone",
                () => (exited ? "exited" : /connection refused/.test(run.output()) ? "refused, still running" : undefined),
                { timeoutMs: 120_000, describe: () => run.output().slice(-2000) },
            );
        } finally {
            if (stopped) {
                await stopped;
                await startApiServer(clusterDir);
            }
        }
        const result = await run.done;
        const state = JSON.parse(stack.exportState()) as {
            deployment: { pending_operations?: { type: string; resource: { urn: string } }[] };
        };
        const observed = {
            whileDown,
            status: result.status,
            errors: `${result.stdout}${result.stderr}`
                .split("\n")
                .filter((line) => /error:/.test(line))
                .slice(0, 8),
            pending: (state.deployment.pending_operations ?? []).map((op) => `${op.type} ${op.resource.urn.split("::").pop()}`),
            locks: stack.lockFiles().length,
            leftBehind: result.leftBehind,
        };
        console.log(`interrupted.real.ts: API server stopped mid-update: ${JSON.stringify(observed, null, 2)}`);
        expect({
            whileDown: observed.whileDown,
            failed: observed.status !== 0,
            locks: observed.locks,
            leftBehind: observed.leftBehind,
        }).toEqual({
            whileDown: "exited",
            failed: true,
            locks: 0,
            leftBehind: [],
        });
        const uid = getObject("namespace", NAMESPACE)?.metadata?.uid as string;

        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expectConverged(uid);
        expect(namespaceObjects()).toEqual(uninterrupted);
    });

    test("GIVEN an operator Deployment that cannot become Available (its pods' nodeSelector matches no node) and a 20 s create timeout WHEN `up` runs THEN it fails naming the Deployment, and the state records that Deployment, live, with the await's errors and no pending operation; with the nodeSelector removed `pulumi up` updates the same Deployment (same uid) and the next preview is empty", async () => {
        const destroyed = stack.destroy();
        expect({ status: destroyed.status, output: destroyed.status === 0 ? "" : explain(destroyed) }).toEqual({ status: 0, output: "" });
        const config = widgetOperatorStack(NAMESPACE);
        const [operator] = config.operators as Record<string, unknown>[];
        stack.setConfig({
            ...config,
            operators: [{ ...operator, config: { nodeSelector: { "cluster-platform.io/no-such-node": "true" } } }],
        });

        const failed = withProgram(deploymentTimeoutProgram(20), () => stack.up());
        const state = JSON.parse(stack.exportState()) as {
            deployment: {
                pending_operations?: unknown[];
                resources: { type: string; outputs?: { metadata?: { name?: string; uid?: string } }; initErrors?: string[] }[];
            };
        };
        const recorded = state.deployment.resources.find(
            (r) => r.type === "kubernetes:apps/v1:Deployment" && r.outputs?.metadata?.name === "widget-webhook",
        );
        const live = getObject("deployment", "widget-webhook", NAMESPACE);
        const observed = {
            status: failed.status,
            errors: `${failed.stdout}${failed.stderr}`
                .split("\n")
                .filter((line) => /error:|timed out|failed to initialize/i.test(line))
                .slice(0, 8),
            recordedUid: recorded?.outputs?.metadata?.uid,
            liveUid: live?.metadata?.uid,
            initErrors: recorded?.initErrors,
            pending: state.deployment.pending_operations?.length ?? 0,
            locks: stack.lockFiles().length,
        };
        console.log(`interrupted.real.ts: Deployment never Available: ${JSON.stringify(observed, null, 2)}`);
        expect({
            failed: failed.status !== 0,
            recorded: observed.recordedUid !== undefined && observed.recordedUid === observed.liveUid,
            initErrors: (observed.initErrors ?? []).length > 0,
            pending: observed.pending,
            locks: observed.locks,
        }).toEqual({ failed: true, recorded: true, initErrors: true, pending: 0, locks: 0 });

        stack.setConfig(config);
        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expect(getObject("deployment", "widget-webhook", NAMESPACE)?.metadata?.uid).toEqual(observed.liveUid);
        expectConverged(getObject("namespace", NAMESPACE)?.metadata?.uid as string);
        expect(namespaceObjects()).toEqual(uninterrupted);
    });
});
