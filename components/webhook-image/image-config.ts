/**
 * The image's JSON documents, composed from the base image's and the new layers: config
 * (entrypoint, user, working directory, environment, labels, diff IDs, history), manifest
 * (in the base manifest's format, OCI or Docker) and, for several platforms, an index.
 * Pure: no I/O; every document goes through canonical JSON.
 */
import { Blob, Descriptor, HistoryEntry, ImageConfig, ImageManifest, jsonBlob, MEDIA_TYPES, RuntimeConfig } from "./oci";
import { EPOCH } from "./layer";

export const CREATED = EPOCH.toISOString().replace(/\.000Z$/, "Z");

export const LABELS = {
    source: "org.opencontainers.image.source",
    revision: "org.opencontainers.image.revision",
    /** The webhook's inputs by git content (see provenance.ts); unlike a commit, the same in every clone. */
    sourceTree: "dev.cluster-platform.source-tree",
    baseName: "org.opencontainers.image.base.name",
    baseDigest: "org.opencontainers.image.base.digest",
} as const;

/** What this program decides about the image, whatever the base. */
export interface ImageSettings {
    /** Absolute path of the script Node.js runs, e.g. `/app/webhook/main.js`. */
    script: string;
    /** `uid:gid`, numeric. */
    user: string;
    workingDir: string;
    /** Set on top of the base image's environment. */
    env: Record<string, string>;
    /** Added to the base image's labels. */
    labels: Record<string, string>;
}

/** One layer this program adds. */
export interface AddedLayer {
    digest: string;
    size: number;
    diffId: string;
    /** The history line that explains it. */
    createdBy: string;
}

/**
 * The Node.js executable of the base image: its entrypoint or command when that is `node`
 * (distroless: `/nodejs/bin/node`), otherwise `node` from the image's PATH (the official images).
 */
export function nodeExecutable(base: RuntimeConfig | undefined): string {
    const isNode = (command: string | undefined) => command !== undefined && (command === "node" || command.endsWith("/node"));
    const entrypoint = base?.Entrypoint?.[0];
    if (isNode(entrypoint)) {
        return entrypoint as string;
    }
    const command = base?.Cmd?.[0];
    return isNode(command) ? (command as string) : "node";
}

/** Base `K=V` entries with `overrides` replacing same-named ones in place; new names appended in name order. */
export function mergeEnv(base: ReadonlyArray<string> | undefined, overrides: Record<string, string>): string[] {
    const nameOf = (entry: string) => (entry.includes("=") ? entry.slice(0, entry.indexOf("=")) : entry);
    const merged = (base ?? []).map((entry) => {
        const name = nameOf(entry);
        return name in overrides ? `${name}=${overrides[name]}` : entry;
    });
    const present = new Set((base ?? []).map(nameOf));
    for (const name of Object.keys(overrides).sort()) {
        if (!present.has(name)) {
            merged.push(`${name}=${overrides[name]}`);
        }
    }
    return merged;
}

export function composeImageConfig(base: ImageConfig, layers: ReadonlyArray<AddedLayer>, settings: ImageSettings): ImageConfig {
    const from = base.config ?? {};
    const runtime: RuntimeConfig = {
        User: settings.user,
        ExposedPorts: from.ExposedPorts,
        Env: mergeEnv(from.Env, settings.env),
        Entrypoint: [nodeExecutable(from), settings.script],
        WorkingDir: settings.workingDir,
        Labels: { ...(from.Labels ?? {}), ...settings.labels },
        Volumes: from.Volumes,
        StopSignal: from.StopSignal,
    };
    const history: HistoryEntry[] | undefined =
        base.history !== undefined && base.history.length > 0
            ? [...base.history, ...layers.map((layer) => ({ created: CREATED, created_by: layer.createdBy }))]
            : undefined;
    return {
        created: CREATED,
        architecture: base.architecture,
        os: base.os,
        "os.version": base["os.version"],
        "os.features": base["os.features"],
        variant: base.variant,
        config: runtime,
        rootfs: { type: "layers", diff_ids: [...base.rootfs.diff_ids, ...layers.map((layer) => layer.diffId)] },
        history,
    };
}

/** The Docker or OCI media types matching the base manifest's format. */
export function formatOf(baseManifest: ImageManifest): { manifest: string; config: string; layer: string; index: string } {
    return baseManifest.mediaType === MEDIA_TYPES.dockerManifest
        ? {
              manifest: MEDIA_TYPES.dockerManifest,
              config: MEDIA_TYPES.dockerConfig,
              layer: MEDIA_TYPES.dockerLayerGzip,
              index: MEDIA_TYPES.dockerManifestList,
          }
        : {
              manifest: MEDIA_TYPES.ociManifest,
              config: MEDIA_TYPES.ociConfig,
              layer: MEDIA_TYPES.ociLayerGzip,
              index: MEDIA_TYPES.ociIndex,
          };
}

export interface BaseImage {
    /** The reference as configured (with its digest), for the `base.name` annotation. */
    name: string;
    /** The platform manifest this image is built on. */
    manifest: ImageManifest;
    manifestDigest: string;
    config: ImageConfig;
}

export interface ComposedImage {
    config: Blob;
    manifest: Blob;
}

export function composeImage(base: BaseImage, layers: ReadonlyArray<AddedLayer>, settings: ImageSettings): ComposedImage {
    const format = formatOf(base.manifest);
    const config = jsonBlob(format.config, composeImageConfig(base.config, layers, settings));
    const manifest: ImageManifest = {
        schemaVersion: 2,
        mediaType: format.manifest,
        config: config.descriptor,
        layers: [
            ...base.manifest.layers,
            ...layers.map((layer): Descriptor => ({ mediaType: format.layer, digest: layer.digest, size: layer.size })),
        ],
        annotations:
            format.manifest === MEDIA_TYPES.ociManifest
                ? { [LABELS.baseName]: base.name.slice(0, base.name.indexOf("@")), [LABELS.baseDigest]: base.manifestDigest }
                : undefined,
    };
    const platform = { os: base.config.os, architecture: base.config.architecture, variant: base.config.variant };
    return { config, manifest: jsonBlob(format.manifest, manifest, { platform }) };
}

/** An index over per-platform manifests (in the given order), in the manifests' format. */
export function composeIndex(manifests: ReadonlyArray<Descriptor>): Blob {
    const mediaType = manifests.every((m) => m.mediaType === MEDIA_TYPES.dockerManifest)
        ? MEDIA_TYPES.dockerManifestList
        : MEDIA_TYPES.ociIndex;
    return jsonBlob(mediaType, { schemaVersion: 2, mediaType, manifests });
}
