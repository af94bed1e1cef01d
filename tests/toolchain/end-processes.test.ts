/**
 * How the real cluster's scripts end a process (scripts/real/cluster.ts `endProcesses`, which
 * `stopApiServer` and `stopCertManager` use): the call resolves only once the process is gone, so
 * whatever starts next (a restarted API server on the same port) never finds the old one running.
 * The processes here are real ones, so the kernel, not the code under test, says when they are gone.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { endProcesses } from "../../scripts/real/cluster";

/** The kernel's state letter for `pid` (`/proc/<pid>/stat`, after the command's closing ")"), or "gone". */
function kernelState(pid: number): string {
    try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    } catch {
        return "gone";
    }
}

/** A child that ignores SIGTERM, as a server still draining does; resolves once it has set its trap. */
function stubbornChild(): Promise<{ pid: number; exited: Promise<NodeJS.Signals | null> }> {
    const child = spawn("bash", ["-c", "trap '' TERM; echo ready; while true; do sleep 1; done"], { stdio: ["ignore", "pipe", "ignore"] });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    return new Promise((resolve) => child.stdout.once("data", () => resolve({ pid: child.pid as number, exited })));
}

describe("ending the real cluster's processes", () => {
    test("GIVEN a process that ignores SIGTERM WHEN it is ended with a short grace THEN it is SIGKILLed and gone by the time the call resolves", async () => {
        const { pid, exited } = await stubbornChild();
        await endProcesses([pid], 300);
        // Read at once: exited (a zombie until node reaps it) or reaped, never still running.
        expect(["Z", "gone"]).toContain(kernelState(pid));
        expect(await exited).toBe("SIGKILL");
    });

    test("GIVEN a process that ends on SIGTERM WHEN it is ended THEN the call resolves without waiting out the grace", async () => {
        const child = spawn("sleep", ["60"], { stdio: "ignore" });
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
        await endProcesses([child.pid as number], 60_000);
        expect(await exited).toBe("SIGTERM");
    });
});
