/**
 * An interrupted update as the scripts that run the Pulumi CLI meet it (`npm start`, `npm run
 * fleet`, `npm run upgrade-check`): found in the CLI's own output and in the stack's state, and
 * reported with the recovery commands of docs/operations.md, *Interrupted updates*, never a stack
 * trace. Plain JavaScript: start.js runs under node without a TypeScript loader.
 *
 * What the CLI leaves and says (pulumi/pulumi v3.259.0..v3.260.0):
 * - the DIY backend's lock (`pkg/backend/diy/lock.go`, `checkForLock`): "the stack is currently
 *   locked by N lock(s). Either wait for the other process(es) to end or delete the lock file with
 *   `pulumi cancel`.", then per lock "\n  <lock file URL>: created by <user>@<host> (pid <pid>) at
 *   <RFC 3339 time>"; the lock files are `.pulumi/locks/<org>/<project>/<stack>/<id>.json`
 *   (`stackLockDir`, `lockPath`) holding `{pid, username, hostname, timestamp}` (`lockContent`);
 * - Pulumi Cloud's refusal of a second update, HTTP 409 (`pkg/backend/httpstate/backend.go`,
 *   `backenderr.ConflictingUpdateError`), the service's text "[409] Conflict: Another update is
 *   currently in progress." (the Automation API matches the same two texts, automation/errors.js);
 * - the steps in flight when a CLI was killed, as `deployment.pending_operations` of `pulumi stack
 *   export`, each `{resource: {urn, ...}, type}` with type creating, updating, deleting, reading or
 *   importing (`sdk/go/common/apitype/core.go`, `DeploymentV3`, `OperationV2`).
 */
"use strict";

const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const DIY_LOCKED = /the stack is currently locked by (\d+) lock\(s\)/;
const DIY_LOCK_LINE = /^\s*(\S+): created by (.*)@(\S*) \(pid (\d+)\) at (\S+)\s*$/gm;
const CLOUD_CONFLICT = "[409] Conflict: Another update is currently in progress.";

/** The locks a CLI's output reports (DIY lock message or Pulumi Cloud's 409), or undefined when it reports none. */
function locksInOutput(text) {
    if (text.includes(CLOUD_CONFLICT)) {
        return [{ backend: "cloud" }];
    }
    if (!DIY_LOCKED.test(text)) {
        return undefined;
    }
    return [...text.matchAll(DIY_LOCK_LINE)].map((m) => ({
        backend: "diy",
        file: m[1],
        user: m[2],
        host: m[3],
        pid: Number(m[4]),
        at: m[5],
    }));
}

/** The pending operations of a `pulumi stack export` document (text), `[]` when it has none. */
function pendingOperations(exportText) {
    const document = JSON.parse(exportText);
    return ((document.deployment && document.deployment.pending_operations) || []).map((op) => ({
        type: op.type,
        urn: op.resource && op.resource.urn,
    }));
}

/**
 * The lock files of `stack` in a `file://` DIY backend (`<dir>/.pulumi/locks/organization/<project>/<stack>/*.json`,
 * the project-scoped layout), read as the lock message shows them; undefined for any other backend,
 * whose locks only an update meets.
 */
function fileBackendLocks(backendUrl, project, stack) {
    if (!backendUrl || !backendUrl.startsWith("file://")) {
        return undefined;
    }
    const root = decodeURIComponent(backendUrl.slice("file://".length).split("?")[0]);
    const dir = path.join(root, ".pulumi", "locks", "organization", project, stack);
    if (!fs.existsSync(dir)) {
        return [];
    }
    return fs
        .readdirSync(dir)
        .filter((name) => name.endsWith(".json"))
        .map((name) => {
            const lock = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8"));
            return {
                backend: "diy",
                file: path.join(dir, name),
                user: lock.username,
                host: lock.hostname,
                pid: lock.pid,
                at: lock.timestamp,
            };
        });
}

function alive(pid) {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return error.code === "EPERM";
    }
}

/**
 * The interruption `locks` and `pending` describe, or undefined when there is none. A DIY lock is
 * `stale` when its runner was on this machine (`host`) and its pid is gone: certainly interrupted.
 * Any other lock may be a running update's.
 */
function interruption(locks, pending, host = os.hostname(), isAlive = alive) {
    const marked = (locks || []).map((lock) => ({ ...lock, stale: lock.backend === "diy" && lock.host === host && !isAlive(lock.pid) }));
    return marked.length > 0 || pending.length > 0 ? { locks: marked, pending } : undefined;
}

/**
 * Whether a run that only previews (the fleet report, upgrade-check) must stop at `found`: a
 * pending operation, or a lock whose runner is certainly gone. A lock that may be a running
 * update's does not stop a preview (previews take no lock and run beside updates).
 */
function leftByInterruption(found) {
    return found !== undefined && (found.pending.length > 0 || found.locks.some((lock) => lock.stale));
}

/**
 * What an admin reads: what was left, and the commands of docs/operations.md in their order
 * (`pulumi cancel` only with a lock, and only once its runner is certainly gone).
 */
function recoveryMessage(stack, found) {
    const lines = [`stack ${stack} was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):`];
    for (const lock of found.locks) {
        lines.push(
            lock.backend === "cloud"
                ? "  Pulumi Cloud has an update of it in progress"
                : `  locked by ${lock.user}@${lock.host} (pid ${lock.pid}) since ${lock.at}${lock.stale ? ", a runner that has ended" : ""}: ${lock.file}`,
        );
    }
    for (const op of found.pending) {
        lines.push(`  pending operation: ${op.type} ${op.urn}`);
    }
    lines.push(
        found.locks.every((lock) => lock.stale)
            ? "recover with:"
            : "if that update is still running, wait for it; once its runner has certainly ended, recover with:",
    );
    if (found.locks.length > 0) {
        lines.push(`  pulumi cancel --stack ${stack} --yes`);
    }
    if (found.pending.length > 0) {
        lines.push(`  pulumi refresh --stack ${stack} --clear-pending-creates --yes`);
    }
    lines.push(`  pulumi up --stack ${stack}`, `  pulumi preview --stack ${stack} --expect-no-changes`);
    return lines.join("\n");
}

/**
 * Asks the CLI (`cli`, run in the project directory `cwd` with `env`) whether `stack` was left by
 * an interrupted update: its pending operations (`pulumi stack export`, which takes no lock) and,
 * for a `file://` backend, its lock files. `output`, a failed command's output, adds the locks it
 * names. Returns the interruption, or undefined when the stack shows none or cannot be read (the
 * caller's own error then stands).
 */
function checkStack({ cli, cwd, stack, env, output = "" }) {
    const exported = spawnSync(cli, ["stack", "export", "--stack", stack, "--non-interactive"], {
        cwd,
        env,
        encoding: "utf8",
        maxBuffer: 256 << 20,
    });
    let pending = [];
    try {
        pending = exported.status === 0 ? pendingOperations(exported.stdout) : [];
    } catch {
        pending = [];
    }
    let locks = locksInOutput(output);
    if (!locks) {
        try {
            const project = /^name:\s*(\S+)/m.exec(fs.readFileSync(path.join(cwd, "Pulumi.yaml"), "utf8"));
            locks = project ? fileBackendLocks(env.PULUMI_BACKEND_URL, project[1], stack) : undefined;
        } catch {
            locks = undefined;
        }
    }
    return interruption(locks, pending);
}

module.exports = {
    CLOUD_CONFLICT,
    locksInOutput,
    pendingOperations,
    fileBackendLocks,
    interruption,
    leftByInterruption,
    recoveryMessage,
    checkStack,
};
