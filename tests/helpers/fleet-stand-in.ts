/**
 * Fleets for the stand-in `pulumi` (tests/fixtures/fleet/bin/pulumi, NOT the Pulumi CLI): a
 * directory of recordings, one per stack, replayed by the stand-in, and the activity log it keeps.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const STAND_IN_BIN = path.resolve(__dirname, "..", "fixtures", "fleet", "bin");
const RECORDINGS = path.resolve(__dirname, "..", "fixtures", "fleet", "recordings");

export type RecordedPreview = "in-sync" | "drifted" | "failed";

export interface StandInStack {
    name: string;
    preview: RecordedPreview;
    /** Seconds the preview takes (`sleep`), or "hang": until cancelled. */
    delay?: string;
}

/** Writes the recordings for `stacks` (and `stacks.json` as `pulumi stack ls --json` prints it); returns the directory. */
export function standInFleet(stacks: ReadonlyArray<StandInStack>, directory = mkdtempSync(path.join(os.tmpdir(), "fleet-"))): string {
    mkdirSync(directory, { recursive: true });
    for (const stack of stacks) {
        copyFileSync(path.join(RECORDINGS, `${stack.preview}.events.jsonl`), path.join(directory, `${stack.name}.events.jsonl`));
        if (existsSync(path.join(RECORDINGS, `${stack.preview}.stderr`))) {
            copyFileSync(path.join(RECORDINGS, `${stack.preview}.stderr`), path.join(directory, `${stack.name}.stderr`));
        }
        writeFileSync(path.join(directory, `${stack.name}.exit`), stack.preview === "failed" ? "255\n" : "0\n");
        writeFileSync(path.join(directory, `${stack.name}.delay`), `${stack.delay ?? "0"}\n`);
    }
    const listing = stacks.map((s, i) => ({
        name: s.name,
        current: i === 0,
        updateInProgress: false,
        resourceCount: 4,
        url: `file://~/.pulumi/stacks/cluster-platform/${s.name}.json`,
    }));
    writeFileSync(path.join(directory, "stacks.json"), `${JSON.stringify(listing, null, 2)}\n`);
    writeFileSync(path.join(directory, "activity.log"), "");
    return directory;
}

/** The most previews the activity log shows running at once. */
export function maxConcurrent(directory: string): number {
    let running = 0;
    let most = 0;
    for (const line of readFileSync(path.join(directory, "activity.log"), "utf8").split("\n").filter(Boolean)) {
        running += line.startsWith("start ") ? 1 : -1;
        most = Math.max(most, running);
    }
    return most;
}

/** Environment for a process that must find the stand-in as `pulumi`. */
export function standInEnv(directory: string): NodeJS.ProcessEnv {
    return {
        ...process.env,
        PATH: `${STAND_IN_BIN}${path.delimiter}${process.env.PATH ?? ""}`,
        FLEET_RECORDINGS: directory,
        PULUMI_SKIP_UPDATE_CHECK: "true",
        // The Automation API writes each preview's event log under the temporary directory and
        // removes it with an fs.rm nobody awaits (@pulumi/pulumi automation/stack.js cleanUp): a
        // CLI that exits, or is stopped, right after a preview leaves it. In the fleet's own
        // folder, it goes with the folder.
        TMPDIR: directory,
    };
}
