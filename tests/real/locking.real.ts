/**
 * One runner at a time (issue 39, point 4), on the state backend the docs recommend for a runner
 * of its own: the DIY (file / object-store) backend. Its lock is a file per running CLI under
 * `.pulumi/locks/<org>/<project>/<stack>/<uuid>.json` holding the runner's pid, user, host and
 * time; `Lock` lists that directory, writes its own file and lists again, so of two runners racing
 * neither proceeds over the other's file (pulumi/pulumi v3.260.0 `pkg/backend/diy/lock.go`). It is
 * taken by update, refresh, destroy and import, never by preview (`pkg/backend/diy/backend.go`),
 * so the fleet's previews and a colleague's preview never block an `up`.
 *
 * One small stack: a first `up` holds the lock while a second `up` of the same stack starts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { applyObjects } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, requireBuild } from "./helpers/fixtures";
import { describe as explain, REPO_ROOT, TestStack } from "./helpers/stack";

const STACK = "locking";
const CONFIGMAP = "locking-trust";

let stack: TestStack;

/** Resolves once a lock file exists (the first runner has passed `Lock`), or rejects when the run ended first. */
async function lockTaken(running: { done: boolean }): Promise<string> {
    for (;;) {
        const [lock] = stack.lockFiles();
        if (lock) return lock;
        if (running.done) throw new Error("the first `up` ended before its lock file was seen");
        await new Promise((resolve) => setImmediate(resolve));
    }
}

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: CONFIG_NAMESPACE } },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: CONFIGMAP, namespace: CONFIG_NAMESPACE }, data: { owner: "platform" } },
    ]);
    stack = new TestStack(STACK, {
        cluster: { name: STACK, platform: "kubernetes", kubeContext: process.env.REAL_CONTEXT ?? "real" },
        caInjection: [{ kind: "ConfigMap", name: CONFIGMAP, namespace: CONFIG_NAMESPACE }],
        olm: { disableOLMAggregateCRDRoles: true },
        aws: { enabled: false },
    });
});

afterAll(() => {
    stack?.destroy();
});

describe("one runner at a time (issue 39)", () => {
    test("GIVEN an `up` of a stack running WHEN a second `up` of the same stack starts THEN it refuses at once with the DIY backend's lock message naming the first runner's pid, the first finishes, one update is recorded and the next preview is empty", async () => {
        const running = { done: false };
        const first = stack.runAsync(["up", "--stack", STACK, "--non-interactive", "--color", "never", "--yes", "--skip-preview"]);
        void first.finally(() => (running.done = true));
        const lock = await lockTaken(running);
        const holder = JSON.parse(fs.readFileSync(lock, "utf8")) as { pid: number; username: string; hostname: string };

        const second = stack.up();
        const firstStillRunning = !running.done;
        // The first runner finishes before anything is asserted, so a failed expectation leaves no CLI running.
        const done = await first;
        const output = `${second.stdout}\n${second.stderr}`;
        expect({
            status: second.status,
            refused: output.includes(
                "the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.",
            ),
            // The lock's line: the file's URL in the backend, the first runner's user, host and pid.
            holder: output
                .split("\n")
                .filter((line) => line.includes(path.basename(lock)))
                .map((line) => line.trim()),
            // Refused before the engine started: no update was begun, nothing was registered.
            began: /Updating \(|\+ +kubernetes:|created \(/.test(second.stdout),
            firstStillRunning,
        }).toEqual({
            status: 1,
            refused: true,
            holder: [
                expect.stringMatching(
                    new RegExp(
                        `^file://.*/\\.pulumi/locks/.*/${path.basename(lock)}\\?metadata=skip&no_tmp_dir=true: created by ${holder.username}@${holder.hostname} \\(pid ${holder.pid}\\) at \\S+$`,
                    ),
                ),
            ],
            began: false,
            firstStillRunning: true,
        });

        expect({ status: done.status, output: done.status === 0 ? "" : explain(done) }).toEqual({ status: 0, output: "" });
        expect(stack.lockFiles()).toEqual([]);

        const history = stack.run(["stack", "history", "--stack", STACK, "--json"]);
        const updates = (JSON.parse(history.stdout) as { kind: string; result: string }[]).map((u) => `${u.kind}:${u.result}`);
        expect(updates).toEqual(["update:succeeded"]);

        const preview = stack.preview(["--expect-no-changes"]);
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
    });
});
