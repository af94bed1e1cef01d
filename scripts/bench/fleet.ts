/**
 * `npm run bench:fleet [-- --concurrency <n>]`: `previewFleet` over 200 stacks of the STAND-IN
 * `pulumi` (tests/fixtures/fleet/bin/pulumi, replaying recorded engine events; not the Pulumi CLI),
 * each preview taking 0.20-0.40 s, through the Automation API as `npm run fleet` runs it.
 *
 * Floor, in the same run: the slowest stack previewed alone, times ⌈200 / concurrency⌉ (the wall
 * time of perfect batches, each as slow as the slowest stack). The fleet's scheduling should beat it.
 * Last line: `bench:fleet stacks=200 concurrency=<n> wall=<s> slowest=<s> bound=<s> ratio=<wall/bound>`.
 */
import * as os from "node:os";
import * as path from "node:path";
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { defaultConcurrency, previewFleet } from "../fleet/fleet";
import { STAND_IN_BIN, standInFleet, StandInStack } from "../../tests/helpers/fleet-stand-in";

/** `--tiny`: the suite's smoke run (tests/fleet/bench-fleet.test.ts); its figures mean nothing. */
const STACKS = process.argv.includes("--tiny") ? 4 : 200;

function seconds(since: bigint): number {
    return Number(process.hrtime.bigint() - since) / 1e9;
}

async function main(): Promise<void> {
    const concurrency = Number(
        parseArgs({ options: { concurrency: { type: "string" }, tiny: { type: "boolean" } } }).values.concurrency ?? defaultConcurrency(),
    );
    // Delays 0.20..0.40 s, spread so that no batch is uniform; the last stack is the slowest.
    const stacks = Array.from({ length: STACKS }, (_, i): StandInStack => ({
        name: `cluster-${String(i).padStart(3, "0")}`,
        preview: (["in-sync", "in-sync", "drifted", "in-sync", "failed"] as const)[i % 5],
        delay: i === STACKS - 1 ? "0.40" : (0.2 + ((i * 7) % 20) / 100).toFixed(2),
    }));
    const directory = standInFleet(stacks);
    process.env.FLEET_RECORDINGS = directory;
    process.env.PULUMI_SKIP_UPDATE_CHECK = "true";
    const pulumiCommand = await PulumiCommand.get({ root: path.dirname(STAND_IN_BIN), skipVersionCheck: true });
    try {
        const slowestStarted = process.hrtime.bigint();
        await previewFleet({ workDir: directory, stacks: [stacks[STACKS - 1].name], concurrency: 1, timeoutSeconds: 60, pulumiCommand });
        const slowest = seconds(slowestStarted);

        const started = process.hrtime.bigint();
        const outcomes = await previewFleet({ workDir: directory, concurrency, timeoutSeconds: 60, pulumiCommand });
        const wall = seconds(started);
        const bound = slowest * Math.ceil(STACKS / concurrency);
        const counts = ["in-sync", "drifted", "failed"].map((s) => `${s}=${outcomes.filter((o) => o.status === s).length}`).join(" ");
        console.log(`machine: ${os.cpus()[0]?.model ?? "unknown"} x${os.availableParallelism()}, node ${process.version}`);
        console.log(`outcomes: ${counts}`);
        console.log(
            `slowest stack alone: ${slowest.toFixed(2)} s; fleet of ${STACKS} at concurrency ${concurrency}: ${wall.toFixed(2)} s; bound slowest x ceil(${STACKS}/${concurrency}) = ${bound.toFixed(2)} s`,
        );
        console.log(
            `bench:fleet stacks=${STACKS} concurrency=${concurrency} wall=${wall.toFixed(2)} slowest=${slowest.toFixed(2)} bound=${bound.toFixed(2)} ratio=${(wall / bound).toFixed(3)}`,
        );
    } finally {
        rmSync(directory, { recursive: true, force: true });
    }
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
