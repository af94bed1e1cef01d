/**
 * The processes a real-tier run starts, read from /proc: to end a command with everything it
 * started (the CLI starts its plugins in process groups of their own, so a group kill leaves the
 * language host, the providers and the program running without a parent), and to find, at the
 * end of the run, any process it started that is still there.
 */
import * as fs from "node:fs";

export interface ProcessEntry {
    readonly pid: number;
    readonly ppid: number;
    /** The command line, NULs as spaces. */
    readonly command: string;
}

function readProc(pid: string, file: string): string | undefined {
    try {
        return fs.readFileSync(`/proc/${pid}/${file}`, "utf8");
    } catch {
        return undefined; // gone meanwhile, or not ours to read
    }
}

/** Every process of the machine with its parent and command line. */
export function processTable(): ProcessEntry[] {
    const entries: ProcessEntry[] = [];
    for (const pid of fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
        const stat = readProc(pid, "stat");
        if (stat === undefined) {
            continue;
        }
        // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        const command = (readProc(pid, "cmdline") ?? "").replace(/\0+$/, "").replace(/\0/g, " ");
        entries.push({ pid: Number(pid), ppid, command });
    }
    return entries;
}

/** The descendants of `pid` (children, their children, …), whatever their process group. */
export function descendantsOf(pid: number, table: readonly ProcessEntry[] = processTable()): ProcessEntry[] {
    const found: ProcessEntry[] = [];
    const parents = new Set([pid]);
    for (let grew = true; grew;) {
        grew = false;
        for (const entry of table) {
            if (parents.has(entry.ppid) && !parents.has(entry.pid)) {
                parents.add(entry.pid);
                found.push(entry);
                grew = true;
            }
        }
    }
    return found;
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`) && !/^\d+ \(.*\) Z/.test(readProc(String(pid), "stat") ?? "");

/**
 * SIGKILL to `pid` and every descendant, then waits (at most 10 s: the kernel reaps killed
 * processes at once) until none is left. Returns what it killed.
 */
export async function killTree(pid: number): Promise<ProcessEntry[]> {
    const table = processTable();
    const victims = [...table.filter((e) => e.pid === pid), ...descendantsOf(pid, table)];
    await killAll(victims);
    return victims;
}

/**
 * The processes a run started that are still running: those whose command line or environment
 * names the run's work directory (every command the tests start gets it: TMPDIR, PULUMI_HOME,
 * kubeconfig and bundle paths, the unpacked images the pod runtime chroots into), other than this
 * process and its ancestors.
 */
export function processesOfRun(work: string): ProcessEntry[] {
    const table = processTable();
    const ancestors = new Set<number>();
    for (let pid: number | undefined = process.pid; pid && !ancestors.has(pid); pid = table.find((e) => e.pid === pid)?.ppid) {
        ancestors.add(pid);
    }
    return table.filter((entry) => {
        if (ancestors.has(entry.pid) || !alive(entry.pid)) {
            return false;
        }
        return entry.command.includes(work) || (readProc(String(entry.pid), "environ") ?? "").includes(work);
    });
}

/**
 * The processes still running whose environment holds the entry `marker` ("NAME=value"): a command
 * started with it passes it to everything it starts, whatever their process group or parent (an
 * orphan's parent is init), so this finds what a command left behind once it is gone.
 */
export function processesMarked(marker: string): ProcessEntry[] {
    return processTable().filter(
        (entry) => alive(entry.pid) && (readProc(String(entry.pid), "environ") ?? "").split("\0").includes(marker),
    );
}

/** SIGKILL to each of `entries`, then waits (at most 10 s) until none is left. */
export async function killAll(entries: readonly ProcessEntry[]): Promise<void> {
    for (const entry of entries) {
        try {
            process.kill(entry.pid, "SIGKILL");
        } catch {
            // already gone
        }
    }
    const deadline = Date.now() + 10_000;
    while (entries.some((e) => alive(e.pid)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
    }
}
