/**
 * A layer's tar digest, remembered by what its files are on disk, so a preview of an unchanged
 * webhook does not read and tar the dependency layer's 2,500 files (17 MB) again: 0.12-0.35 s of CPU
 * a plan (docs/performance.md, "The layer digests, remembered").
 *
 * A layer is known by its fingerprint: every entry's path, type, mode and link target, the hash of
 * inline content, and for a file read from disk its path, device, inode, size, and modification
 * and change times in nanoseconds. Writing a file's content changes its mtime and ctime; `touch -d`,
 * `cp -p` or `rsync -t` can put the mtime back, but not the ctime, which only the kernel sets (to
 * its clock, on every change of the inode); a reinstall (`npm ci`) makes new inodes. So two states
 * with one fingerprint have the same content, with one exception, the one git's index calls racy:
 * a file written twice within one tick of the clock the kernel stamps ctime with. A fingerprint is
 * therefore remembered only when every file is older than `SETTLED_NS` (2 s, far above that tick)
 * when it is taken: a later write then gets a later ctime, so a different fingerprint.
 *
 * Remembered in the process (the render and the tests plan many times in one) and in
 * `node_modules/.cache/cluster-platform/layer-digests/` of the project (where tools keep caches of
 * what node_modules holds; removed with it). A record that cannot be read or written is as if
 * absent: the digest is computed, never guessed.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { LayerDigests, layerDigests, LayerEntry } from "./layer";
import { writeAtomically } from "./layout";

/** How old every file must be for a fingerprint to be remembered: far above the kernel's ctime tick. */
export const SETTLED_NS = 2_000_000_000n;

/** Where a project keeps its remembered layer digests. */
export function digestCacheDirectory(projectDirectory: string): string {
    return path.join(projectDirectory, "node_modules", ".cache", "cluster-platform", "layer-digests");
}

export interface LayerFingerprint {
    /** sha256 of every entry's description, in order. */
    key: string;
    /** Whether every file read from disk was older than `SETTLED_NS` when it was described. */
    settled: boolean;
}

/** The fingerprint of `entries` at `now` (nanoseconds since the epoch, the clock file times use). */
export function layerFingerprint(entries: ReadonlyArray<LayerEntry>, now: bigint): LayerFingerprint {
    const hash = createHash("sha256");
    let settled = true;
    for (const entry of entries) {
        const described: unknown[] = [entry.path, entry.type, entry.mode, entry.linkTarget ?? null];
        if (entry.content !== undefined) {
            described.push("content", createHash("sha256").update(entry.content).digest("hex"));
        } else if (entry.source !== undefined) {
            const stat = fs.statSync(entry.source, { bigint: true });
            described.push("source", entry.source, stat.dev, stat.ino, stat.size, stat.mtimeNs, stat.ctimeNs);
            if (now - stat.mtimeNs < SETTLED_NS || now - stat.ctimeNs < SETTLED_NS) {
                settled = false;
            }
        }
        hash.update(`${JSON.stringify(described, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))}\n`);
    }
    return { key: hash.digest("hex"), settled };
}

/** This process's remembered digests, by fingerprint. */
const inProcess = new Map<string, LayerDigests>();

function isDigests(value: unknown): value is LayerDigests {
    const record = value as Partial<LayerDigests> | null;
    return (
        typeof record === "object" &&
        record !== null &&
        typeof record.diffId === "string" &&
        /^sha256:[0-9a-f]{64}$/.test(record.diffId) &&
        Number.isSafeInteger(record.uncompressedSize) &&
        (record.uncompressedSize as number) > 0
    );
}

function readRecord(file: string): LayerDigests | undefined {
    try {
        const record = JSON.parse(fs.readFileSync(file, "utf8")) as unknown;
        return isDigests(record) ? { diffId: record.diffId, uncompressedSize: record.uncompressedSize } : undefined;
    } catch {
        return undefined;
    }
}

/** Keeps a record, written whole (layout.ts `writeAtomically`); a folder that cannot be written only means nothing is kept. */
async function writeRecord(file: string, digests: LayerDigests): Promise<void> {
    const record = JSON.stringify({ diffId: digests.diffId, uncompressedSize: digests.uncompressedSize });
    await writeAtomically(file, Buffer.from(record)).catch(() => undefined);
}

export interface DigestCacheOptions {
    /** Where records are kept on disk; none: remembered in this process only. */
    readonly directory?: string;
    /** Now, in nanoseconds since the epoch. @default the system clock */
    readonly now?: () => bigint;
    /** The digests of a layer not remembered. @default layerDigests */
    readonly compute?: (entries: ReadonlyArray<LayerEntry>) => Promise<LayerDigests>;
    /** What this process remembers (a new map stands for a new process). @default the process's own */
    readonly memory?: Map<string, LayerDigests>;
}

/** `layerDigests(entries)`, from memory when the files are as they were when it was last computed and settled. */
export async function rememberedLayerDigests(entries: ReadonlyArray<LayerEntry>, options: DigestCacheOptions = {}): Promise<LayerDigests> {
    const remembered = options.memory ?? inProcess;
    const now = options.now?.() ?? BigInt(Date.now()) * 1_000_000n;
    const { key, settled } = layerFingerprint(entries, now);
    const file = options.directory === undefined ? undefined : path.join(options.directory, `${key}.json`);
    if (settled) {
        const known = remembered.get(key) ?? (file === undefined ? undefined : readRecord(file));
        if (known !== undefined) {
            remembered.set(key, known);
            return known;
        }
    }
    const digests = await (options.compute ?? layerDigests)(entries);
    if (settled) {
        remembered.set(key, digests);
        if (file !== undefined) {
            await writeRecord(file, digests);
        }
    }
    return digests;
}
