/**
 * OCI and Docker image data: media types, descriptors and the JSON documents of an image,
 * serialized canonically (keys sorted at every level, no whitespace) so the same content always
 * has the same bytes and therefore the same digest.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../shared/canonical-json";

export const MEDIA_TYPES = {
    ociIndex: "application/vnd.oci.image.index.v1+json",
    ociManifest: "application/vnd.oci.image.manifest.v1+json",
    ociConfig: "application/vnd.oci.image.config.v1+json",
    ociLayerGzip: "application/vnd.oci.image.layer.v1.tar+gzip",
    dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
    dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
    dockerConfig: "application/vnd.docker.container.image.v1+json",
    dockerLayerGzip: "application/vnd.docker.image.rootfs.diff.tar.gzip",
} as const;

export const INDEX_MEDIA_TYPES: readonly string[] = [MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerManifestList];
export const MANIFEST_MEDIA_TYPES: readonly string[] = [MEDIA_TYPES.ociManifest, MEDIA_TYPES.dockerManifest];
/** What a client accepts when it fetches a manifest it knows only by reference. */
export const MANIFEST_ACCEPT = [...INDEX_MEDIA_TYPES, ...MANIFEST_MEDIA_TYPES].join(", ");

export interface Descriptor {
    mediaType: string;
    digest: string;
    size: number;
    platform?: { os: string; architecture: string; variant?: string; "os.version"?: string };
    annotations?: Record<string, string>;
    urls?: string[];
}

export interface ImageManifest {
    schemaVersion: 2;
    mediaType: string;
    config: Descriptor;
    layers: Descriptor[];
    annotations?: Record<string, string>;
}

export interface ImageIndex {
    schemaVersion: 2;
    mediaType: string;
    manifests: Descriptor[];
    annotations?: Record<string, string>;
}

/** The runtime part of an image config (Docker's capitalised field names, as the OCI spec keeps them). */
export interface RuntimeConfig {
    User?: string;
    Env?: string[];
    Entrypoint?: string[];
    Cmd?: string[];
    WorkingDir?: string;
    Labels?: Record<string, string>;
    ExposedPorts?: Record<string, Record<string, never>>;
    Volumes?: Record<string, Record<string, never>>;
    StopSignal?: string;
}

export interface HistoryEntry {
    created?: string;
    created_by?: string;
    comment?: string;
    empty_layer?: boolean;
}

export interface ImageConfig {
    created?: string;
    architecture: string;
    os: string;
    "os.version"?: string;
    "os.features"?: string[];
    variant?: string;
    config?: RuntimeConfig;
    rootfs: { type: "layers"; diff_ids: string[] };
    history?: HistoryEntry[];
}

export function sha256Digest(data: Buffer | string): string {
    return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** A JSON document ready to store: its canonical bytes and their descriptor. */
export interface Blob {
    descriptor: Descriptor;
    bytes: Buffer;
}

export function jsonBlob(mediaType: string, value: unknown, extra: Partial<Descriptor> = {}): Blob {
    const bytes = Buffer.from(canonicalJson(value), "utf8");
    return { bytes, descriptor: { mediaType, digest: sha256Digest(bytes), size: bytes.length, ...extra } };
}
