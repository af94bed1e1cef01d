/**
 * An OCI image layout directory (image-spec `image-layout.md`): `oci-layout`, `index.json` and
 * content-addressed `blobs/sha256/<hex>`, readable by skopeo (`oci:<dir>:<ref>`), umoci, crane
 * and containerd. Writes are idempotent: a blob already present is not rewritten, and
 * `index.json` is replaced atomically with the entry for `ref` pointing at the new image.
 */
import { promises as fs } from "node:fs";
import * as path from "node:path";
import { canonicalJson } from "../shared/canonical-json";
import { Descriptor, ImageIndex, MEDIA_TYPES, sha256Digest } from "./oci";

export const REF_NAME_ANNOTATION = "org.opencontainers.image.ref.name";
const LAYOUT_FILE = canonicalJson({ imageLayoutVersion: "1.0.0" });

export class ImageLayout {
    private prepared: Promise<void> | undefined;

    constructor(readonly directory: string) {}

    blobPath(digest: string): string {
        const [algorithm, hex] = digest.split(":");
        return path.join(this.directory, "blobs", algorithm, hex);
    }

    async hasBlob(digest: string, size?: number): Promise<boolean> {
        const stat = await fs.stat(this.blobPath(digest)).catch(() => undefined);
        return stat !== undefined && stat.isFile() && (size === undefined || stat.size === size);
    }

    async readBlob(digest: string): Promise<Buffer> {
        return fs.readFile(this.blobPath(digest));
    }

    /** Stores `bytes` under their digest (verified), unless already there. True when written. */
    async writeBlob(digest: string, bytes: Buffer): Promise<boolean> {
        if (sha256Digest(bytes) !== digest) {
            throw new Error(`refusing to store a blob as ${digest}: its digest is ${sha256Digest(bytes)}`);
        }
        if (await this.hasBlob(digest, bytes.length)) {
            return false;
        }
        await this.ensureLayout();
        await writeAtomically(this.blobPath(digest), bytes);
        return true;
    }

    async readIndex(): Promise<ImageIndex> {
        try {
            return JSON.parse(await fs.readFile(path.join(this.directory, "index.json"), "utf8")) as ImageIndex;
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "ENOENT") {
                return { schemaVersion: 2, mediaType: MEDIA_TYPES.ociIndex, manifests: [] };
            }
            throw error;
        }
    }

    /** Points `ref` at `manifest` in index.json (other refs are kept). */
    async tag(ref: string, manifest: Descriptor): Promise<void> {
        await this.ensureLayout();
        const index = await this.readIndex();
        const others = index.manifests.filter((m) => m.annotations?.[REF_NAME_ANNOTATION] !== ref);
        const entry: Descriptor = { ...manifest, annotations: { ...(manifest.annotations ?? {}), [REF_NAME_ANNOTATION]: ref } };
        await this.writeIndex({ ...index, manifests: [...others, entry] });
    }

    /** Whether index.json lists `digest` and its manifest blob is present. */
    async hasManifest(digest: string): Promise<boolean> {
        const index = await this.readIndex();
        const entry = index.manifests.find((m) => m.digest === digest);
        return entry !== undefined && (await this.hasBlob(digest, entry.size));
    }

    /** Removes every index.json entry for `digest` (blobs stay, as a registry keeps them until garbage collection). */
    async untag(digest: string): Promise<boolean> {
        const index = await this.readIndex();
        const kept = index.manifests.filter((m) => m.digest !== digest);
        if (kept.length === index.manifests.length) {
            return false;
        }
        await this.writeIndex({ ...index, manifests: kept });
        return true;
    }

    private async writeIndex(index: ImageIndex): Promise<void> {
        await writeAtomically(path.join(this.directory, "index.json"), Buffer.from(canonicalJson(index)));
    }

    /** Creates the layout's skeleton once per instance, however many writes run at once. */
    private ensureLayout(): Promise<void> {
        this.prepared ??= (async () => {
            await fs.mkdir(path.join(this.directory, "blobs", "sha256"), { recursive: true });
            const marker = path.join(this.directory, "oci-layout");
            const existing = await fs.readFile(marker, "utf8").catch(() => undefined);
            if (existing === undefined) {
                await writeAtomically(marker, Buffer.from(LAYOUT_FILE));
            }
        })();
        return this.prepared;
    }
}

let temporaries = 0;

/** Writes through a temporary file renamed into place, so readers never see a partial file (and no temporary is left). */
export async function writeAtomically(file: string, bytes: Buffer): Promise<void> {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.${++temporaries}.tmp`;
    try {
        await fs.writeFile(temporary, bytes);
        await fs.rename(temporary, file);
    } catch (error) {
        await fs.rm(temporary, { force: true });
        throw error;
    }
}
