/**
 * Benchmark of the webhook image build: the real admission server (compiled as `npm run build`
 * compiles it) and its production dependencies, built into layers on a base image and pushed to
 * a real registry (Debian's docker-registry on 127.0.0.1), as the provider's create does.
 *
 * - floor: `tar | gzip -6` of exactly the files the layers hold, measured in the same run: the
 *   least any build that compresses those files must do;
 * - build+push: `buildAndPublish` into a fresh repository (base layers are mounted, ours and
 *   the config uploaded, the manifest put), median of the rounds;
 * - no-change rebuild: the same build again into the same repository (what `pulumi up` does if
 *   asked to create an image that exists): its time and the blobs it uploaded;
 * - reproducibility: 10 builds, each from a fresh temporary project with its files copied anew,
 *   into an OCI layout; how many give the first one's manifest digest.
 *
 *   npm run bench:image [-- --rounds 7 | --tiny]
 *
 * Needs docker-registry, skopeo, tar and gzip (the Debian packages .ci/run installs).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildAndPublish, ImageContent, planImage } from "../../components/webhook-image/build";
import { canonicalGzipEngine } from "../../components/webhook-image/gzip";
import { collectImageSources } from "../../components/webhook-image/sources";
import { buildNodeBaseLayout, pushBase } from "../../tests/helpers/node-base-image";
import { startRegistry } from "../../tests/helpers/registry";
import { compileWebhook, imageContent, makeProject } from "../../tests/helpers/webhook-project";

const REPRODUCIBILITY_BUILDS = 10;

function median(samples: number[]): number {
    const sorted = [...samples].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
    const start = process.hrtime.bigint();
    const value = await run();
    return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

async function main(): Promise<void> {
    const roundsArg = process.argv.indexOf("--rounds");
    // --tiny: one round, no warm-up and two reproducibility builds, so the suite's smoke run stays short.
    const tiny = process.argv.includes("--tiny");
    const rounds = tiny ? 1 : roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 7;
    const reproducibilityBuilds = tiny ? 2 : REPRODUCIBILITY_BUILDS;
    const work = mkdtempSync(path.join(os.tmpdir(), "bench-image-"));
    const registry = await startRegistry();
    const projects: string[] = [];
    try {
        const compiled = compileWebhook(path.join(work, "compiled"));
        const project = makeProject({ compiledOutput: compiled });
        projects.push(project);
        const base = (await pushBase(buildNodeBaseLayout(work), registry.host, "base/node", "oci-index")).pinned;
        const content: ImageContent = imageContent(project, base);
        const sources = await collectImageSources(content, [{ os: "linux", architecture: "amd64" }]);
        const files = [...sources.application, ...sources.dependencies]
            .filter((e) => e.source !== undefined)
            .map((e) => path.relative(project, e.source as string));
        const listFile = path.join(work, "files.txt");
        writeFileSync(listFile, files.join("\n"));
        const bytes = Number(
            execFileSync("sh", ["-c", `cd '${project}' && tr '\\n' '\\0' < '${listFile}' | du -cb --files0-from=- | tail -1 | cut -f1`], {
                encoding: "utf8",
            }).trim(),
        );

        const floorRun = () => {
            const start = process.hrtime.bigint();
            const result = spawnSync("sh", [
                "-c",
                `tar --create --file=- --no-recursion --directory='${project}' --files-from='${listFile}' | gzip -6 > /dev/null`,
            ]);
            if (result.status !== 0) {
                throw new Error(`tar | gzip failed: ${result.stderr.toString()}`);
            }
            return Number(process.hrtime.bigint() - start) / 1e6;
        };
        const engine = canonicalGzipEngine();
        const plan = await planImage(content);
        const push = (repository: string) =>
            buildAndPublish(
                { ...content, repository: `${registry.host}/${repository}`, output: "registry" },
                { expectedLayers: plan.layers },
            );
        // Warm-up: page cache for both contenders, module loading and JIT for the build (not at the
        // tiny size, whose figures mean nothing: its one round pushes the same way).
        if (!tiny) {
            floorRun();
            await push("bench/warm-up");
        }
        // Rounds alternate floor and build, so both see the same load on a shared machine.
        const floors: number[] = [];
        const cold: number[] = [];
        for (let i = 0; i < rounds; i++) {
            floors.push(floorRun());
            cold.push((await timed(() => push(`bench/cold-${i}`))).ms);
        }
        const floor = median(floors);
        const noChange: number[] = [];
        let noChangeUploads = 0;
        for (let i = 0; i < rounds; i++) {
            const run = await timed(() => push(`bench/cold-${rounds - 1}`));
            noChange.push(run.ms);
            noChangeUploads = Math.max(noChangeUploads, run.value.report.uploaded.length);
        }

        const digests: string[] = [];
        for (let i = 0; i < reproducibilityBuilds; i++) {
            const fresh = makeProject({ copyClosureOf: sources.requiredPackages, compiledOutput: compiled });
            projects.push(fresh);
            const freshContent = imageContent(fresh, base);
            const image = await buildAndPublish({
                ...freshContent,
                repository: "bench/reproducible",
                output: "oci-layout",
                layoutDirectory: path.join(fresh, "out", "oci"),
            });
            digests.push(image.digest);
        }
        const reproducible = digests.filter((d) => d === digests[0]).length;

        const buildPush = median(cold);
        const ratio = buildPush / floor;
        console.log(
            `webhook image: ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB (the compiled server and ${sources.requiredPackages.join(", ")} with their dependencies); gzip by ${engine}; median of ${rounds} rounds`,
        );
        console.log(`  floor (tar | gzip -6 of the same files):      ${floor.toFixed(0)} ms`);
        console.log(`  build+push into a fresh repository:           ${buildPush.toFixed(0)} ms (${ratio.toFixed(2)}x the floor)`);
        console.log(`  no-change rebuild into the same repository:   ${median(noChange).toFixed(0)} ms, ${noChangeUploads} blobs uploaded`);
        console.log(`  reproducible: ${reproducible} of ${reproducibilityBuilds} fresh-directory builds gave ${digests[0]}`);
        console.log(
            `bench:image ratio=${ratio.toFixed(2)} nochange_ms=${median(noChange).toFixed(0)} nochange_uploads=${noChangeUploads} reproducible=${reproducible}/${reproducibilityBuilds}`,
        );
    } finally {
        await registry.stop();
        for (const directory of [work, ...projects]) {
            rmSync(directory, { recursive: true, force: true });
        }
    }
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
});
