/**
 * Deterministic gzip for image layers: level 6, no file name, mtime 0, and the exact bytes
 * reference zlib produces, so a layer's digest depends on its content alone.
 *
 * Node's bundled zlib is fast but is a fork whose output may differ from reference zlib with the
 * Node.js version or the CPU (it can hash with CRC32C instructions). Before first use, both it and
 * pako (a JavaScript port of reference zlib) compress a probe; when their bytes agree, Node's zlib
 * does the work, otherwise pako does (about twice as slow, the same bytes on every machine).
 */
import { once } from "node:events";
import type { TransformOptions } from "node:stream";
import * as zlib from "node:zlib";

export const GZIP_LEVEL = 6;

export type GzipEngine = "node-zlib" | "pako";

export interface GzipSink {
    write(chunk: Uint8Array): Promise<void>;
    /** Flushes the last block; resolves once every compressed byte has reached `onData`. */
    end(): Promise<void>;
}

let chosen: GzipEngine | undefined;

/** The engine that produces reference-zlib bytes here (decided once per process). */
export function canonicalGzipEngine(): GzipEngine {
    if (chosen === undefined) {
        const pako = require("pako") as typeof import("pako");
        const probe = probeData();
        const native = zlib.gzipSync(probe, { level: GZIP_LEVEL });
        const reference = Buffer.from(pako.gzip(probe, { level: GZIP_LEVEL }));
        chosen = native.equals(reference) ? "node-zlib" : "pako";
    }
    return chosen;
}

/** ~200 KiB of varied, repetitive text: enough matches for any hashing difference to show. */
function probeData(): Buffer {
    const lines: string[] = [];
    let state = 2463534242;
    for (let i = 0; i < 4096; i++) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        state >>>= 0;
        lines.push(`{"index":${i},"key":"k${state % 997}","value":${state},"text":"${"abcdefgh".repeat(state % 5)}"}`);
    }
    return Buffer.from(lines.join("\n"), "utf8");
}

export function createGzipSink(onData: (chunk: Buffer) => void, engine: GzipEngine = canonicalGzipEngine()): GzipSink {
    return engine === "node-zlib" ? nodeZlibSink(onData) : pakoSink(onData);
}

function nodeZlibSink(onData: (chunk: Buffer) => void): GzipSink {
    // Room for a few batches, so the writer rarely waits while the thread pool compresses
    // (zlib streams pass stream options on to their Transform).
    const options: zlib.ZlibOptions & TransformOptions = {
        level: GZIP_LEVEL,
        chunkSize: 64 * 1024,
        writableHighWaterMark: 4 * 1024 * 1024,
    };
    const gzip = zlib.createGzip(options);
    gzip.on("data", onData);
    const ended = once(gzip, "end");
    return {
        async write(chunk) {
            if (!gzip.write(chunk)) {
                await once(gzip, "drain");
            }
        },
        async end() {
            gzip.end();
            await ended;
        },
    };
}

function pakoSink(onData: (chunk: Buffer) => void): GzipSink {
    const pako = require("pako") as typeof import("pako");
    const deflate = new pako.Deflate({ level: GZIP_LEVEL, gzip: true });
    deflate.onData = (chunk) => onData(Buffer.from(chunk));
    const check = () => {
        if (deflate.err) {
            throw new Error(`gzip failed: ${deflate.msg}`);
        }
    };
    return {
        async write(chunk) {
            deflate.push(chunk, false);
            check();
        },
        async end() {
            deflate.push(new Uint8Array(0), true);
            check();
        },
    };
}
