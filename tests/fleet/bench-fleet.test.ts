/**
 * `npm run bench:fleet` at a tiny size (`--tiny`: 4 stand-in stacks), so the benchmark cannot rot
 * unseen: the same script and the same last line (figures at this size mean nothing).
 */
import { readdirSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { runBenchScript } from "../helpers/bench-script";

describe("bench:fleet", () => {
    afterAll(() => {
        // The Automation API's event-log folders, removed by an unawaited fs.rm (see cli.test.ts).
        for (const name of readdirSync(os.tmpdir()).filter((n) => n.startsWith("automation-logs-"))) {
            rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
        }
    });

    test("GIVEN the tiny size WHEN the benchmark runs THEN it exits 0 and its last line gives the fleet's wall time against its bound", () => {
        const run = runBenchScript("fleet", ["--tiny"]);
        expect(run.status).toBe(0);
        expect(run.lastLine).toMatch(
            /^bench:fleet stacks=4 concurrency=\d+ wall=\d+\.\d\d slowest=\d+\.\d\d bound=\d+\.\d\d ratio=\d+\.\d{3}$/,
        );
    }, 120_000);
});
