/**
 * Interrupted updates converge (issue 39, point 1): an `up` stopped by Ctrl-C (SIGINT to the CLI's
 * process group, as a terminal sends it) and one killed outright (SIGKILL to the group, as a
 * cancelled CI job or a lost machine) are brought back by the commands docs/operations.md gives,
 * to the objects an uninterrupted run makes: the objects created before the interruption keep their
 * uid, none is duplicated, no lock or pending operation is left, and the next preview is empty.
 *
 * One stack: the sample widget operator in a namespace the stack creates. Each case interrupts the
 * `up` as soon as the CLI reports the Namespace created, while the rest is in flight.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import * as path from "node:path";
import { pendingOperations } from "../../scripts/interrupted-state";
import { getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { killAll, processesMarked } from "./helpers/processes";
import { requireBuild, WIDGET_CRD, widgetOperatorStack } from "./helpers/fixtures";
import { describe as explain, REPO_ROOT, type RunResult, TestStack } from "./helpers/stack";

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
});
