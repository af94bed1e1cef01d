/**
 * Reproducible layer tarballs: entries sorted by path, every parent directory present, owner
 * 0:0 with no user or group names, one fixed mtime (the Unix epoch), modes reduced to 0755/0644,
 * and canonical gzip on top. The same files therefore give the same layer digest anywhere.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import * as tar from "tar-stream";
import { createGzipSink, GzipEngine } from "./gzip";
import { byText } from "../shared/order";

/** The mtime of every entry (and the `created` time of the image): the Unix epoch, as ko does. */
export const EPOCH = new Date(0);

export interface LayerEntry {
    /** Path in the image without the leading `/`, POSIX separators, no trailing `/`. */
    path: string;
    type: "file" | "directory" | "symlink";
    /** Permission bits (0755 or 0644 for what this module builds). */
    mode: number;
    /** A regular file's content: the absolute path of the file to read ... */
    source?: string;
    /** ... or the bytes themselves. */
    content?: Buffer;
    /** A symlink's target, as stored. */
    linkTarget?: string;
}

/** The regular-file mode a layer stores: executable for everyone when any execute bit is set. */
export function normalizedFileMode(sourceMode: number): number {
    return sourceMode & 0o111 ? 0o755 : 0o644;
}

export const DIRECTORY_MODE = 0o755;

/** Adds every missing parent directory and sorts by path (so parents precede their children). */
export function completeLayer(entries: ReadonlyArray<LayerEntry>): LayerEntry[] {
    const byPath = new Map<string, LayerEntry>();
    for (const entry of entries) {
        if (byPath.has(entry.path)) {
            throw new Error(`layer has two entries for /${entry.path}`);
        }
        byPath.set(entry.path, entry);
    }
    for (const entry of entries) {
        const parts = entry.path.split("/");
        for (let i = 1; i < parts.length; i++) {
            const parent = parts.slice(0, i).join("/");
            const existing = byPath.get(parent);
            if (existing === undefined) {
                byPath.set(parent, { path: parent, type: "directory", mode: DIRECTORY_MODE });
            } else if (existing.type !== "directory") {
                throw new Error(`layer entry /${entry.path} lies under /${parent}, which is a ${existing.type}`);
            }
        }
    }
    return [...byPath.values()].sort(byText((entry) => entry.path));
}

export interface LayerDigests {
    /** sha256 of the uncompressed tar: the image config's `rootfs.diff_ids` entry. */
    diffId: string;
    uncompressedSize: number;
}

export interface CompressedLayer extends LayerDigests {
    /** sha256 of the gzip stream: the layer blob's digest. */
    digest: string;
    size: number;
    blob: Buffer;
}

/** The tar's digest without compressing it: what a plan compares to decide whether a layer changed. */
export async function layerDigests(entries: ReadonlyArray<LayerEntry>): Promise<LayerDigests> {
    const hash = createHash("sha256");
    let size = 0;
    await writeTar(entries, async (chunk) => {
        hash.update(chunk);
        size += chunk.length;
    });
    return { diffId: `sha256:${hash.digest("hex")}`, uncompressedSize: size };
}

/** The tar and its canonical gzip, with both digests, in one pass. */
export async function compressLayer(entries: ReadonlyArray<LayerEntry>, engine?: GzipEngine): Promise<CompressedLayer> {
    const tarHash = createHash("sha256");
    const blobHash = createHash("sha256");
    const blobChunks: Buffer[] = [];
    let uncompressedSize = 0;
    let size = 0;
    const gzip = createGzipSink((chunk) => {
        blobHash.update(chunk);
        blobChunks.push(chunk);
        size += chunk.length;
    }, engine);
    // Tar chunks are small (a header, a file); the compressor works best on large writes, which
    // leave it busy in the thread pool while the next files are packed. Deflate's output does not
    // depend on how its input is split.
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
        if (pendingBytes > 0) {
            const batch = Buffer.concat(pending, pendingBytes);
            pending = [];
            pendingBytes = 0;
            await gzip.write(batch);
        }
    };
    await writeTar(entries, async (chunk) => {
        tarHash.update(chunk);
        uncompressedSize += chunk.length;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= COMPRESSION_BATCH) {
            await flush();
        }
    });
    await flush();
    await gzip.end();
    return {
        diffId: `sha256:${tarHash.digest("hex")}`,
        uncompressedSize,
        digest: `sha256:${blobHash.digest("hex")}`,
        size,
        blob: Buffer.concat(blobChunks, size),
    };
}

/** Bytes of tar handed to the compressor at once. */
const COMPRESSION_BATCH = 256 * 1024;

async function writeTar(entries: ReadonlyArray<LayerEntry>, consume: (chunk: Buffer) => Promise<void>): Promise<void> {
    const pack = tar.pack();
    const produce = async () => {
        for (const entry of entries) {
            // Synchronous reads: for thousands of small package files they are several times
            // faster than promise reads, which take four thread-pool round trips each and would
            // compete with the compressor for the pool.
            const content = entry.type !== "file" ? undefined : (entry.content ?? readFileSync(entry.source as string));
            await new Promise<void>((resolve, reject) => {
                const done = (error?: Error | null) => (error ? reject(error) : resolve());
                if (content === undefined) {
                    pack.entry(headerOf(entry), done);
                } else {
                    pack.entry(headerOf(entry), content, done);
                }
            });
        }
        pack.finalize();
    };
    const producing = produce().catch((error: unknown) => {
        pack.destroy(error as Error);
        throw error;
    });
    for await (const chunk of pack as AsyncIterable<Buffer>) {
        await consume(chunk);
    }
    await producing;
}

function headerOf(entry: LayerEntry): tar.Headers {
    const common = { mode: entry.mode, uid: 0, gid: 0, uname: "", gname: "", mtime: EPOCH };
    switch (entry.type) {
        case "directory":
            return { ...common, name: `${entry.path}/`, type: "directory" };
        case "symlink":
            return { ...common, name: entry.path, type: "symlink", linkname: entry.linkTarget };
        case "file":
            return { ...common, name: entry.path, type: "file" };
    }
}
