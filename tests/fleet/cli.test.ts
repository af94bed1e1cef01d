/**
 * `npm run fleet -- preview` end to end, through the Automation API, against a STAND-IN `pulumi`
 * (tests/fixtures/fleet/bin/pulumi: a shell script replaying recorded engine events; not the Pulumi
 * CLI, which cannot be installed here). The stand-in is found as `pulumi` on PATH, as the real CLI is.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { maxConcurrent, standInEnv, standInFleet, StandInStack } from "../helpers/fleet-stand-in";
import { ROOT } from "../helpers/root";
import { tsxCommand } from "../helpers/tsx";

function fleet(stacks: StandInStack[], args: string[]): { status: number | null; stdout: string; stderr: string; directory: string } {
    const directory = standInFleet(stacks);
    const run = spawnSync(...tsxCommand(path.join(ROOT, "scripts", "fleet", "cli.ts"), ["preview", "--cwd", directory, ...args]), {
        env: standInEnv(directory),
        encoding: "utf8",
        timeout: 120_000,
    });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr, directory };
}

const directories: string[] = [];
afterAll(() => {
    directories.forEach((d) => rmSync(d, { recursive: true, force: true }));
    // The Automation API's event-log folders: it removes each with an fs.rm whose callback nobody
    // awaits (@pulumi/pulumi automation/stack.js cleanUp), so a CLI that exits right after its last
    // preview leaves them. Only the fleet CLI uses the Automation API, and it runs in this file.
    for (const name of readdirSync(os.tmpdir()).filter((n) => n.startsWith("automation-logs-"))) {
        rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
    }
});

describe("npm run fleet -- preview", () => {
    test("GIVEN every stack of the project in sync WHEN previewed THEN one 'in sync' line per stack, exit 0, and the admin's current stack is selected again", () => {
        const run = fleet(
            [
                { name: "prod-eu", preview: "in-sync" },
                { name: "prod-us", preview: "in-sync" },
            ],
            ["--concurrency", "1"],
        );
        directories.push(run.directory);
        expect(run.stdout.split("\n")).toEqual(["prod-eu  in sync", "prod-us  in sync", "2 stacks: 2 in sync, 0 drifted, 0 failed", ""]);
        expect(run.status).toBe(0);
        // prod-eu was the current stack before the run (stacks.json); prod-us was selected last to preview it.
        expect(readFileSync(path.join(run.directory, "selected"), "utf8")).toBe("prod-eu\n");
    }, 60_000);

    test("GIVEN a stack whose state holds a pending create (an update killed half-way) among in-sync ones WHEN previewed THEN it is not previewed, its line gives the recovery commands of docs/operations.md, and exit 1", () => {
        const directory = standInFleet([
            { name: "a", preview: "in-sync" },
            { name: "killed", preview: "in-sync" },
        ]);
        directories.push(directory);
        const urn = "urn:pulumi:killed::cluster-platform::kubernetes:core/v1:Namespace::namespace-widgets";
        // As `pulumi stack export` prints it (sdk/go/common/apitype/core.go, DeploymentV3.PendingOperations).
        writeFileSync(
            path.join(directory, "killed.export.json"),
            JSON.stringify({ version: 3, deployment: { resources: [], pending_operations: [{ resource: { urn }, type: "creating" }] } }),
        );
        const run = spawnSync(...tsxCommand(path.join(ROOT, "scripts", "fleet", "cli.ts"), ["preview", "--cwd", directory]), {
            env: standInEnv(directory),
            encoding: "utf8",
            timeout: 120_000,
        });
        expect({ status: run.status, stdout: run.stdout.split("\n"), stderr: run.stderr }).toEqual({
            status: 1,
            stdout: [
                "a       in sync",
                'killed  failed: stack killed was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):',
                `  pending operation: creating ${urn}`,
                "recover with:",
                "  pulumi refresh --stack killed --clear-pending-creates --yes",
                "  pulumi up --stack killed",
                "  pulumi preview --stack killed --expect-no-changes",
                "2 stacks: 1 in sync, 0 drifted, 1 failed",
                "",
            ],
            stderr: "",
        });
        expect(readFileSync(path.join(directory, "activity.log"), "utf8")).toBe("start a\nend a\n");
    }, 60_000);

    test("GIVEN one drifted stack among in-sync ones WHEN previewed THEN its line names the resources and properties, and exit 2", () => {
        const run = fleet(
            [
                { name: "a", preview: "in-sync" },
                { name: "b", preview: "drifted" },
            ],
            [],
        );
        directories.push(run.directory);
        expect(run.stdout.split("\n")[1]).toBe(
            "b  drifted: 3 resources: create kubernetes:core/v1:Secret webhook-serving-secret; replace kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration subscription-webhook [metadata.name]; update kubernetes:apps/v1:Deployment subscription-webhook [spec.replicas, spec.template.spec.containers[0].image]",
        );
        expect(run.status).toBe(2);
    }, 60_000);

    test("GIVEN a failing, a hanging, a drifted and an unknown stack by name WHEN previewed with --json and a 3s timeout THEN the document says why each failed, and exit 1", () => {
        const run = fleet(
            [
                { name: "broken", preview: "failed" },
                { name: "stuck", preview: "in-sync", delay: "hang" },
                { name: "drifting", preview: "drifted" },
            ],
            ["broken", "stuck", "drifting", "gone", "--json", "--timeout", "3", "--concurrency", "4"],
        );
        directories.push(run.directory);
        const document = JSON.parse(run.stdout) as {
            stacks: Array<{ stack: string; status: string; reason?: string; resources: unknown[] }>;
            summary: unknown;
            exitCode: number;
        };
        expect(document.stacks.map((s) => [s.stack, s.status, s.reason, s.resources.length])).toEqual([
            [
                "broken",
                "failed",
                'configured Kubernetes cluster is unreachable: unable to load schema information from the API server: Get "https://api.prod-us.example.com:6443/openapi/v2?timeout=32s": dial tcp 10.0.3.7:6443: i/o timeout',
                0,
            ],
            ["drifting", "drifted", undefined, 3],
            ["gone", "failed", "error: no stack named 'gone' found", 0],
            ["stuck", "failed", "timed out after 3s (preview cancelled)", 0],
        ]);
        expect(document.summary).toEqual({ "in-sync": 0, drifted: 1, failed: 3 });
        expect(document.exitCode).toBe(1);
        expect(run.status).toBe(1);
    }, 60_000);

    test("GIVEN eight stacks and --concurrency 3 WHEN previewed THEN at most three previews ever ran at once, and three did", () => {
        const stacks = Array.from({ length: 8 }, (_, i): StandInStack => ({ name: `cluster-${i}`, preview: "in-sync", delay: "0.3" }));
        const run = fleet(stacks, ["--concurrency", "3"]);
        directories.push(run.directory);
        expect(maxConcurrent(run.directory)).toBe(3);
        expect(run.status).toBe(0);
    }, 60_000);

    test("GIVEN a stack that hangs and --concurrency 2 WHEN previewed THEN every other stack finishes while it still runs, and it is cut at the timeout", () => {
        const stacks: StandInStack[] = [
            { name: "a-stuck", preview: "in-sync", delay: "hang" },
            ...["b", "c", "d", "e"].map((name): StandInStack => ({ name, preview: "in-sync" })),
        ];
        const run = fleet(stacks, ["--concurrency", "2", "--timeout", "4"]);
        directories.push(run.directory);
        const activity = readFileSync(path.join(run.directory, "activity.log"), "utf8").split("\n").filter(Boolean);
        // The two first previews start at once, so which logs first (or whether b already ended) is
        // not given; that the stuck one ends last, after all four others ended, shows none waited on it.
        expect(activity).toContain("start a-stuck");
        expect(activity[activity.length - 1]).toBe("end a-stuck");
        expect(activity.filter((line) => line.startsWith("end ")).length).toBe(5);
        expect(run.stdout).toContain("a-stuck  failed: timed out after 4s (preview cancelled)");
        expect(run.status).toBe(1);
    }, 60_000);

    test("GIVEN a bad --concurrency WHEN run THEN it says which flag and value, and exits 1 before previewing anything", () => {
        const run = fleet([{ name: "a", preview: "in-sync" }], ["--concurrency", "0"]);
        directories.push(run.directory);
        expect(run.stderr.split("\n")[0]).toBe('--concurrency "0" must be a positive integer');
        expect(readFileSync(path.join(run.directory, "activity.log"), "utf8")).toBe("");
        expect(run.status).toBe(1);
    }, 60_000);
});
