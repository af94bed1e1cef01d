import * as fs from "node:fs";
import * as path from "node:path";
import {
    checkStack,
    fileBackendLocks,
    interruption,
    leftByInterruption,
    locksInOutput,
    pendingOperations,
    recoveryMessage,
} from "../../scripts/interrupted-state";
import { temporaryDirectory } from "../helpers/temporary";

/**
 * The texts are the CLI's own (pulumi/pulumi v3.259.0): the DIY lock message of
 * `pkg/backend/diy/lock.go` `checkForLock` as `tests/real/locking.real.ts` and interrupted.real.ts
 * meet it on the real CLI; the service's 409 text as the Automation API matches it
 * (@pulumi/pulumi automation/errors.js); `pending_operations` as `sdk/go/common/apitype/core.go`
 * `DeploymentV3` encodes it.
 */
const LOCK_URL = "file:///work/state/.pulumi/locks/organization/cluster-platform/prod/1d4a.json?metadata=skip&no_tmp_dir=true";
const DIY_LOCKED = `error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with \`pulumi cancel\`.
  ${LOCK_URL}: created by root@ci-runner-7 (pid 4242) at 2026-11-27T04:51:09Z
`;
const CLOUD_LOCKED =
    "error: [409] Conflict: Another update is currently in progress.\nTo learn more about possible reasons and resolution, visit https://www.pulumi.com/docs/support/troubleshooting/common-issues/update-conflicts/\n";
const NAMESPACE_URN = "urn:pulumi:prod::cluster-platform::kubernetes:core/v1:Namespace::namespace-widgets";
const EXPORT_PENDING = JSON.stringify({
    version: 3,
    deployment: {
        manifest: {},
        resources: [],
        pending_operations: [{ resource: { urn: NAMESPACE_URN, type: "kubernetes:core/v1:Namespace" }, type: "creating" }],
    },
});

describe("an interrupted update, as the CLI reports it", () => {
    test("GIVEN the DIY backend's lock message WHEN read THEN each lock's file, user, host, pid and time come out; Pulumi Cloud's 409 is a lock too; other output holds none", () => {
        expect(locksInOutput(DIY_LOCKED)).toEqual([
            { backend: "diy", file: LOCK_URL, user: "root", host: "ci-runner-7", pid: 4242, at: "2026-11-27T04:51:09Z" },
        ]);
        expect(locksInOutput(CLOUD_LOCKED)).toEqual([{ backend: "cloud" }]);
        expect(locksInOutput("error: update failed\n")).toBeUndefined();
    });

    test("GIVEN `pulumi stack export` output WHEN read THEN its pending operations come out, none when the key is absent", () => {
        expect(pendingOperations(EXPORT_PENDING)).toEqual([{ type: "creating", urn: NAMESPACE_URN }]);
        expect(pendingOperations(JSON.stringify({ version: 3, deployment: { resources: [] } }))).toEqual([]);
    });

    test("GIVEN a lock whose runner was on this machine and has ended, one of another machine, and pending operations WHEN judged THEN only the ended runner's lock or a pending operation stops a preview", () => {
        const gone = (_pid: number) => false;
        const ours = { backend: "diy" as const, file: "l.json", user: "root", host: "here", pid: 7, at: "t" };
        const theirs = { ...ours, host: "ci-runner-7" };
        expect(leftByInterruption(interruption([ours], [], "here", gone))).toBe(true);
        expect(leftByInterruption(interruption([theirs], [], "here", gone))).toBe(false);
        expect(leftByInterruption(interruption([ours], [], "here", () => true))).toBe(false);
        expect(leftByInterruption(interruption([], [{ type: "creating", urn: NAMESPACE_URN }]))).toBe(true);
        expect(interruption(undefined, [])).toBeUndefined();
    });

    test("GIVEN a stale lock and a pending create WHEN reported THEN the message names both and gives docs/operations.md's commands in order", () => {
        const found = interruption(locksInOutput(DIY_LOCKED), [{ type: "creating", urn: NAMESPACE_URN }], "ci-runner-7", () => false);
        expect(recoveryMessage("prod", found!).split("\n")).toEqual([
            'stack prod was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):',
            `  locked by root@ci-runner-7 (pid 4242) since 2026-11-27T04:51:09Z, a runner that has ended: ${LOCK_URL}`,
            `  pending operation: creating ${NAMESPACE_URN}`,
            "recover with:",
            "  pulumi cancel --stack prod --yes",
            "  pulumi refresh --stack prod --clear-pending-creates --yes",
            "  pulumi up --stack prod",
            "  pulumi preview --stack prod --expect-no-changes",
        ]);
    });

    test("GIVEN a lock that may be a running update's WHEN reported THEN the message says to wait for it and to cancel only once its runner has ended; with pending operations only, no cancel", () => {
        const running = recoveryMessage("prod", interruption(locksInOutput(CLOUD_LOCKED), [])!).split("\n");
        expect(running.slice(1)).toEqual([
            "  Pulumi Cloud has an update of it in progress",
            "if that update is still running, wait for it; once its runner has certainly ended, recover with:",
            "  pulumi cancel --stack prod --yes",
            "  pulumi up --stack prod",
            "  pulumi preview --stack prod --expect-no-changes",
        ]);
        const pendingOnly = recoveryMessage("prod", interruption([], [{ type: "updating", urn: NAMESPACE_URN }])!);
        expect(pendingOnly).not.toContain("pulumi cancel");
        expect(pendingOnly).toContain("pulumi refresh --stack prod --clear-pending-creates --yes");
    });

    test("GIVEN a file:// backend holding a lock file of the stack (pkg/backend/diy/lock.go's layout) WHEN listed THEN it is read as the lock message shows it; other backends are not listed", () => {
        const dir = temporaryDirectory("interrupted-state-");
        const locks = path.join(dir, ".pulumi", "locks", "organization", "cluster-platform", "prod");
        fs.mkdirSync(locks, { recursive: true });
        fs.writeFileSync(
            path.join(locks, "1d4a.json"),
            JSON.stringify({ pid: 4242, username: "root", hostname: "ci-runner-7", timestamp: "2026-11-27T04:51:09Z" }),
        );
        expect(fileBackendLocks(`file://${dir}?metadata=skip`, "cluster-platform", "prod")).toEqual([
            {
                backend: "diy",
                file: path.join(locks, "1d4a.json"),
                user: "root",
                host: "ci-runner-7",
                pid: 4242,
                at: "2026-11-27T04:51:09Z",
            },
        ]);
        expect(fileBackendLocks(`file://${dir}`, "cluster-platform", "staging")).toEqual([]);
        expect(fileBackendLocks("s3://bucket", "cluster-platform", "prod")).toBeUndefined();
        expect(fileBackendLocks(undefined, "cluster-platform", "prod")).toBeUndefined();
    });

    test("GIVEN a CLI whose `stack export` shows a pending create WHEN the stack is checked THEN the interruption is found; a CLI that cannot export finds none", () => {
        const dir = temporaryDirectory("interrupted-state-");
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: cluster-platform\nruntime: nodejs\n");
        const cli = path.join(dir, "pulumi");
        fs.writeFileSync(cli, `#!/bin/sh\n[ "$1 $2" = "stack export" ] && [ "$4" = prod ] && cat <<'EOF'\n${EXPORT_PENDING}\nEOF\n`, {
            mode: 0o755,
        });
        const env = { PATH: process.env.PATH };
        expect(checkStack({ cli, cwd: dir, stack: "prod", env })).toEqual({
            locks: [],
            pending: [{ type: "creating", urn: NAMESPACE_URN }],
        });
        expect(checkStack({ cli, cwd: dir, stack: "other", env })).toBeUndefined();
    });
});
