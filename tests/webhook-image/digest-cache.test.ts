/**
 * rememberedLayerDigests (components/webhook-image/digest-cache.ts): a layer's tar digest from
 * memory only while its files are what they were. The oracle is `layerDigests` of the same
 * entries read afresh, which is what the plan computed before the cache.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { layerFingerprint, rememberedLayerDigests, SETTLED_NS } from "../../components/webhook-image/digest-cache";
import { completeLayer, LayerDigests, layerDigests, LayerEntry } from "../../components/webhook-image/layer";
import { temporaryDirectory } from "../helpers/temporary";

/** A clock far enough ahead that every file written so far is settled. */
const later = (): bigint => BigInt(Date.now()) * 1_000_000n + 10n * SETTLED_NS;
/** The mtime every file is given (whole seconds, so putting it back is exact to the nanosecond). */
const MTIME = 1_700_000_000;

function project(files: Record<string, string>): { root: string; entries: LayerEntry[]; cache: string } {
    const root = temporaryDirectory("digest-cache-");
    for (const [name, text] of Object.entries(files)) {
        fs.writeFileSync(path.join(root, name), text);
        fs.utimesSync(path.join(root, name), MTIME, MTIME);
    }
    const entries = completeLayer([
        { path: "app/package.json", type: "file", mode: 0o644, content: Buffer.from("{}\n") },
        ...Object.keys(files).map((name): LayerEntry => ({
            path: `app/${name}`,
            type: "file",
            mode: 0o644,
            source: path.join(root, name),
        })),
    ]);
    return { root, entries, cache: path.join(root, "cache") };
}

/** `layerDigests`, counting its calls. */
function counted(): { compute: (entries: ReadonlyArray<LayerEntry>) => Promise<LayerDigests>; calls: () => number } {
    let calls = 0;
    return {
        compute: (entries) => {
            calls += 1;
            return layerDigests(entries);
        },
        calls: () => calls,
    };
}

/** Rewrites `file` (mtime MTIME) with `text` of the same length and puts its mtime back; returns once the kernel has given it a new ctime. */
function rewriteKeepingMtime(file: string, text: string): void {
    const before = fs.statSync(file, { bigint: true });
    expect({ size: Buffer.byteLength(text), mtimeNs: BigInt(MTIME) * 1_000_000_000n }).toEqual({
        size: Number(before.size),
        mtimeNs: before.mtimeNs,
    });
    // A write in the same tick of the kernel's clock keeps the ctime: write again until it moves.
    for (let attempt = 0; fs.statSync(file, { bigint: true }).ctimeNs === before.ctimeNs; attempt++) {
        if (attempt > 1_000_000) throw new Error("the ctime never moved");
        fs.writeFileSync(file, text);
        fs.utimesSync(file, MTIME, MTIME);
    }
    expect(fs.statSync(file, { bigint: true }).mtimeNs).toBe(before.mtimeNs);
}

describe("layer digests remembered by their files' identity", () => {
    test("GIVEN settled files WHEN the digests are asked again, in this process and in a new one THEN they come from memory and from the record, equal to the files' own digests", async () => {
        const { entries, cache } = project({ "a.js": "one", "b.js": "two" });
        const oracle = await layerDigests(entries);
        const first = counted();
        const memory = new Map<string, LayerDigests>();

        expect(await rememberedLayerDigests(entries, { directory: cache, now: later, compute: first.compute, memory })).toEqual(oracle);
        expect(await rememberedLayerDigests(entries, { directory: cache, now: later, compute: first.compute, memory })).toEqual(oracle);
        const fresh = counted();
        expect(await rememberedLayerDigests(entries, { directory: cache, now: later, compute: fresh.compute, memory: new Map() })).toEqual(
            oracle,
        );

        expect({ first: first.calls(), fresh: fresh.calls() }).toEqual({ first: 1, fresh: 0 });
        expect(fs.readdirSync(cache)).toEqual([`${layerFingerprint(entries, later()).key}.json`]);
    });

    test("GIVEN a file rewritten with content of the same size and its mtime put back WHEN the digests are asked THEN they are computed again and are the new content's", async () => {
        const { root, entries, cache } = project({ "a.js": "one", "b.js": "two" });
        const memory = new Map<string, LayerDigests>();
        const old = await rememberedLayerDigests(entries, { directory: cache, now: later, memory });

        rewriteKeepingMtime(path.join(root, "b.js"), "TWO");
        const again = counted();
        const now = await rememberedLayerDigests(entries, { directory: cache, now: later, compute: again.compute, memory });

        expect(now).toEqual(await layerDigests(entries));
        expect(now.diffId).not.toBe(old.diffId);
        expect(again.calls()).toBe(1);
    });

    test("GIVEN files written less than SETTLED_NS before now WHEN the digests are asked twice THEN both are computed and nothing is recorded", async () => {
        const { root, entries, cache } = project({ "a.js": "one" });
        // Now: just after the file's last change (its ctime), whatever the machine's load.
        const changed = fs.statSync(path.join(root, "a.js"), { bigint: true }).ctimeNs;
        const justAfter = (): bigint => changed + 1_000_000n;
        const spy = counted();
        const memory = new Map<string, LayerDigests>();
        const oracle = await layerDigests(entries);

        expect(await rememberedLayerDigests(entries, { directory: cache, now: justAfter, compute: spy.compute, memory })).toEqual(oracle);
        expect(await rememberedLayerDigests(entries, { directory: cache, now: justAfter, compute: spy.compute, memory })).toEqual(oracle);

        expect(spy.calls()).toBe(2);
        expect({ memory: memory.size, recorded: fs.existsSync(cache) }).toEqual({ memory: 0, recorded: false });
        expect(layerFingerprint(entries, changed + SETTLED_NS - 1n).settled).toBe(false);
        expect(layerFingerprint(entries, changed + SETTLED_NS).settled).toBe(true);
    });

    test("GIVEN a damaged record, or a cache directory that cannot be made WHEN the digests are asked THEN they are computed, never read from it", async () => {
        const { root, entries, cache } = project({ "a.js": "one" });
        const oracle = await layerDigests(entries);
        const record = path.join(cache, `${layerFingerprint(entries, later()).key}.json`);
        for (const damaged of [
            "",
            "{",
            JSON.stringify({ diffId: "sha256:abc", uncompressedSize: 1 }),
            JSON.stringify({ diffId: oracle.diffId }),
        ]) {
            fs.mkdirSync(cache, { recursive: true });
            fs.writeFileSync(record, damaged);
            const spy = counted();
            expect(
                await rememberedLayerDigests(entries, { directory: cache, now: later, compute: spy.compute, memory: new Map() }),
            ).toEqual(oracle);
            expect(spy.calls()).toBe(1);
            expect(JSON.parse(fs.readFileSync(record, "utf8"))).toEqual(oracle);
        }

        const blocked = path.join(root, "a-file");
        fs.writeFileSync(blocked, "");
        const spy = counted();
        const options = {
            directory: path.join(blocked, "cache"),
            now: later,
            compute: spy.compute,
            memory: new Map<string, LayerDigests>(),
        };
        expect(await rememberedLayerDigests(entries, options)).toEqual(oracle);
        expect(fs.readdirSync(root).sort()).toEqual(["a-file", "a.js", "cache"]);
    });

    test("GIVEN any sequence of edits to settled files, each with the mtime put back (same-size rewrites, appends, a file swapped for another) WHEN the digests are asked after each THEN they are always the files' own", async () => {
        const edit = fc.record({
            file: fc.constantFrom("a.js", "b.js", "c.js"),
            how: fc.constantFrom("same-size", "append", "replace"),
            text: fc.string({ minLength: 1, maxLength: 8 }),
        });
        await fc.assert(
            fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 6 }), async (edits) => {
                const { root, entries, cache } = project({ "a.js": "aaaa", "b.js": "bbbb", "c.js": "cccc" });
                const memory = new Map<string, LayerDigests>();
                await rememberedLayerDigests(entries, { directory: cache, now: later, memory });
                for (const { file, how, text } of edits) {
                    const target = path.join(root, file);
                    const current = fs.readFileSync(target, "utf8");
                    if (how === "same-size") {
                        const swapped = current === current.toUpperCase() ? current.toLowerCase() : current.toUpperCase();
                        if (swapped === current) continue;
                        rewriteKeepingMtime(target, swapped);
                    } else if (how === "append") {
                        fs.appendFileSync(target, text);
                        fs.utimesSync(target, MTIME, MTIME);
                    } else {
                        // A new inode with the old mtime, as `cp -p` or `rsync -t` leave one.
                        const other = `${target}.new`;
                        fs.writeFileSync(other, `${current.slice(0, 2)}${text}`);
                        fs.utimesSync(other, MTIME, MTIME);
                        fs.renameSync(other, target);
                    }
                    const remembered = await rememberedLayerDigests(entries, { directory: cache, now: later, memory });
                    expect(remembered).toEqual(await layerDigests(entries));
                }
            }),
            { numRuns: 25 },
        );
    });
});
