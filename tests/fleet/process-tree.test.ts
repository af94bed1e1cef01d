/**
 * `npm run fleet -- preview` as the admin runs it (through npm, whose node_modules/.bin holds the
 * `pulumi` package's launcher), against the STAND-IN `pulumi` (tests/fixtures/fleet/bin/pulumi).
 * The stand-in stays for what the real CLI cannot be made to do on purpose: a preview that hangs,
 * ignores SIGINT and leaves a child behind. Its PIDs are written to `<stack>.pids`; a process
 * that is gone answers kill(pid, 0) with ESRCH.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, watch } from "node:fs";
import * as path from "node:path";
import { standInEnv, standInFleet } from "../helpers/fleet-stand-in";

const ROOT = path.resolve(__dirname, "..", "..");
const NPM = "npm";
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");

/** Whether `pid` still runs: it exists and is not a zombie (one whose parent has not reaped it; /proc/<pid>/stat's state Z). */
function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch (error) {
        return (error as NodeJS.ErrnoException).code !== "ESRCH";
    }
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

function pidsOf(directory: string, stack: string): number[] {
    return readFileSync(path.join(directory, `${stack}.pids`), "utf8")
        .trim()
        .split(/\s+/)
        .map(Number);
}

/** Resolves once `file` exists (fs.watch on its directory, no polling interval). */
function whenExists(file: string): Promise<void> {
    return new Promise((resolve) => {
        const watcher = watch(path.dirname(file), () => {
            if (existsSync(file)) {
                watcher.close();
                resolve();
            }
        });
        if (existsSync(file)) {
            watcher.close();
            resolve();
        }
    });
}

const directories: string[] = [];
afterAll(() => directories.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the fleet report's process trees", () => {
    test("GIVEN a preview that hangs, ignores SIGINT and has a child WHEN npm run fleet -- preview --timeout 3 runs THEN it reports the timeout, exits, and neither the preview nor its child is left running", () => {
        const directory = standInFleet([
            { name: "admin", preview: "in-sync" },
            { name: "stuck", preview: "in-sync", delay: "hang-ignoring-interrupt" },
        ]);
        directories.push(directory);
        const run = spawnSync(NPM, ["run", "--silent", "fleet", "--", "preview", "--cwd", directory, "--timeout", "3"], {
            cwd: ROOT,
            env: standInEnv(directory),
            encoding: "utf8",
            // A bound, not a measurement: a report that waits on an orphaned preview never ends.
            timeout: 60_000,
        });
        expect(run.signal).toBeNull();
        expect(run.stdout.split("\n")).toEqual([
            "admin  in sync",
            "stuck  failed: timed out after 3s (preview cancelled)",
            "2 stacks: 1 in sync, 0 drifted, 1 failed",
            "",
        ]);
        expect(run.status).toBe(1);
        // The stand-in ran (not npm's launcher, which would have tried to download a CLI) and is gone with its child.
        const pids = pidsOf(directory, "stuck");
        expect(pids).toHaveLength(2);
        expect(pids.filter(alive)).toEqual([]);
        expect(readFileSync(path.join(directory, "selected"), "utf8")).toBe("admin\n");
    }, 90_000);

    test("GIVEN a fleet run whose preview hangs WHEN the terminal sends Ctrl-C (SIGINT to the report's process group) THEN the previews end, the admin's stack is selected again, and it exits 130", async () => {
        const directory = standInFleet([
            { name: "admin", preview: "in-sync" },
            { name: "stuck", preview: "in-sync", delay: "hang-ignoring-interrupt" },
        ]);
        directories.push(directory);
        // detached: its own process group, as a terminal's foreground job has; Ctrl-C signals that group.
        // tsx as `npm run fleet` starts it (npm itself exits at once on Ctrl-C; the report goes on to clean up).
        const child = spawn(
            TSX,
            [path.join(ROOT, "scripts", "fleet", "cli.ts"), "preview", "stuck", "--cwd", directory, "--timeout", "600"],
            {
                cwd: ROOT,
                env: standInEnv(directory),
                detached: true,
                stdio: ["ignore", "pipe", "pipe"],
            },
        );
        let stderr = "";
        child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
        const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
        await whenExists(path.join(directory, "stuck.pids"));
        expect(readFileSync(path.join(directory, "selected"), "utf8")).toBe("stuck\n");
        process.kill(-(child.pid as number), "SIGINT");
        expect(await exited).toBe(130);
        expect(stderr).toContain("fleet: interrupted: previews cancelled, the current stack selected again");
        expect(readFileSync(path.join(directory, "selected"), "utf8")).toBe("admin\n");
        expect(pidsOf(directory, "stuck").filter(alive)).toEqual([]);
    }, 90_000);
});
