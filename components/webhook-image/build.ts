/**
 * The image pipeline, daemonless as ko and jib build: collect the compiled webhook and its
 * production dependencies, turn them into two reproducible layers (dependencies, which change
 * rarely, under the application, which changes often), put them on the pinned base image, and
 * publish to a registry or an OCI image layout. Nothing here knows about Pulumi.
 */
import { createHash } from "node:crypto";
import { CredentialSource, environmentCredentials } from "./credentials";
import { GzipEngine } from "./gzip";
import { AddedLayer, BaseImage, composeImage, composeIndex, ComposedImage, ImageSettings } from "./image-config";
import { digestCacheDirectory, rememberedLayerDigests } from "./digest-cache";
import { compressLayer, CompressedLayer, completeLayer, LayerEntry } from "./layer";
import { ImageLayout } from "./layout";
import { canonicalJson } from "../shared/canonical-json";
import { Descriptor, ImageConfig, ImageIndex, ImageManifest, INDEX_MEDIA_TYPES } from "./oci";
import { ImageReference, parsePinnedReference, parseRepository, RepositoryName } from "./reference";
import { RegistryClient } from "./registry";
import { formatPlatform, parsePlatform, Platform, PLATFORM_RULE, platformMatches } from "./rules";
import { APP_ROOT, collectImageSources, ImageSources } from "./sources";

/** What decides the image's bytes. */
export interface ImageContent {
    /** The project (package.json, package-lock.json, node_modules): absolute, or relative to the working directory. */
    projectDirectory: string;
    /** Compiler output directory, relative to the project (`dist`). */
    outputDirectory: string;
    /** The application folder inside it (`webhook`). */
    application: string;
    /** The script Node.js runs, relative to the output directory (`webhook/main.js`). */
    entrypoint: string;
    /** Base image pinned by digest. */
    baseImage: string;
    /** `os/arch[/variant]` list; more than one gives an image index. */
    platforms: string[];
    /** Numeric user (and group) the process runs as; never 0. */
    user: number;
    /** Environment set on top of the base image's. */
    env: Record<string, string>;
    /** Labels added to the base image's. */
    labels: Record<string, string>;
}

/** Where the image goes. */
export interface ImageDestination {
    /** `host/path` for output registry; any repository name for oci-layout. */
    repository: string;
    output: "registry" | "oci-layout";
    /** The OCI image layout directory (output oci-layout): absolute, or relative to the working directory. */
    layoutDirectory?: string;
}

/** Everything the provider needs: the content and the destination. */
export type ImageSpec = ImageContent & ImageDestination;

/** The tar digests of the two layers, as a plan computes them and a build must reproduce. */
export interface LayerIds {
    dependencies: string;
    application: string;
}

export interface ImagePlan {
    /** sha256 over everything that decides the image's bytes (not where it is published). */
    contentHash: string;
    layers: LayerIds;
}

export interface PublishReport {
    /** Blobs sent to the registry (or written to the layout). */
    uploaded: string[];
    /** Blobs the registry linked from the base image's repository instead. */
    mounted: string[];
    /** Blobs that were there already. */
    present: string[];
}

export interface PublishedImage {
    /** Digest of the manifest (one platform) or of the index (several). */
    digest: string;
    mediaType: string;
    /** `<repository>@<digest>`. */
    imageRef: string;
    report: PublishReport;
}

export interface BuildOptions {
    credentials?: CredentialSource;
    /** Tar digests the plan promised; a build whose files differ fails instead of publishing something else. */
    expectedLayers?: LayerIds;
    engine?: GzipEngine;
    chunkSize?: number;
}

const LAYER_HISTORY = {
    dependencies: (packages: string[]) =>
        `cluster-platform webhook-image: /${APP_ROOT}/node_modules, production dependencies of ${packages.join(", ") || "nothing"}`,
    application: (spec: ImageContent) =>
        `cluster-platform webhook-image: /${APP_ROOT}/${spec.application}, compiled from ${spec.application}/`,
};

export function imageSettings(spec: ImageContent): ImageSettings {
    return {
        script: `/${APP_ROOT}/${spec.entrypoint}`,
        user: `${spec.user}:${spec.user}`,
        workingDir: `/${APP_ROOT}`,
        env: spec.env,
        labels: spec.labels,
    };
}

/** Problems in the content that no build can fix, all at once. */
export function contentProblems(content: ImageContent): string[] {
    const problems: string[] = [];
    const base = parsePinnedReference(content.baseImage);
    if (!base.ok) {
        problems.push(`baseImage ${JSON.stringify(content.baseImage)}: ${base.problem}`);
    }
    if (content.platforms.length === 0) {
        problems.push("platforms is empty");
    }
    for (const platform of content.platforms) {
        if (parsePlatform(platform) === undefined) {
            problems.push(`platform ${JSON.stringify(platform)}: ${PLATFORM_RULE}`);
        }
    }
    if (!Number.isInteger(content.user) || content.user <= 0) {
        problems.push(`user ${content.user} is not a positive integer: the webhook never runs as root`);
    }
    return problems;
}

/** Problems in the destination, all at once (the repository's only when it is given). */
export function destinationProblems(destination: Omit<ImageDestination, "repository"> & { repository?: string }): string[] {
    const problems: string[] = [];
    const target = destination.repository === undefined ? undefined : parseRepository(destination.repository);
    if (target === undefined) {
        // Checked once the repository is known.
    } else if (!target.ok) {
        problems.push(`repository ${JSON.stringify(destination.repository)}: ${target.problem}`);
    } else if (destination.output === "registry" && !target.value.explicitRegistry) {
        problems.push(`repository ${JSON.stringify(destination.repository)} names no registry host to push to`);
    }
    if (destination.output === "oci-layout" && !destination.layoutDirectory) {
        problems.push("output oci-layout needs a layoutDirectory");
    }
    return problems;
}

function assertValid(problems: string[]): void {
    if (problems.length > 0) {
        throw new Error(`invalid webhook image: ${problems.join("; ")}`);
    }
}

function platformsOf(spec: ImageContent): Platform[] {
    return spec.platforms.map((p) => parsePlatform(p) as Platform);
}

interface LayerSets {
    sources: ImageSources;
    dependencies: LayerEntry[];
    application: LayerEntry[];
}

async function layerSets(spec: ImageContent): Promise<LayerSets> {
    const sources = await collectImageSources(spec, platformsOf(spec));
    return { sources, dependencies: completeLayer(sources.dependencies), application: completeLayer(sources.application) };
}

/** The hash a diff compares: the base, the platforms, the runtime settings and both layers' tar digests. */
export function contentHashOf(spec: ImageContent, layers: LayerIds): string {
    const content = {
        format: 1,
        baseImage: spec.baseImage,
        platforms: spec.platforms,
        settings: imageSettings(spec),
        layers,
    };
    return `sha256:${createHash("sha256").update(canonicalJson(content)).digest("hex")}`;
}

/** What a preview needs: the content hash, from the tar digests alone (no compression, no network). */
export async function planImage(spec: ImageContent): Promise<ImagePlan> {
    assertValid(contentProblems(spec));
    const sets = await layerSets(spec);
    // An unchanged layer's digest is remembered by its files' identity on disk (digest-cache.ts).
    const cache = { directory: digestCacheDirectory(spec.projectDirectory) };
    const [dependencies, application] = await Promise.all([
        rememberedLayerDigests(sets.dependencies, cache),
        rememberedLayerDigests(sets.application, cache),
    ]);
    const layers = { dependencies: dependencies.diffId, application: application.diffId };
    return { contentHash: contentHashOf(spec, layers), layers };
}

/** One client per registry host, sharing tokens for the whole build. */
class Registries {
    private readonly clients = new Map<string, RegistryClient>();
    constructor(private readonly options: BuildOptions) {}
    for(registry: string): RegistryClient {
        let client = this.clients.get(registry);
        if (client === undefined) {
            client = new RegistryClient(registry, {
                credentials: this.options.credentials ?? environmentCredentials(),
                chunkSize: this.options.chunkSize,
            });
            this.clients.set(registry, client);
        }
        return client;
    }
}

/** The base image's manifest and config for each requested platform, verified against the pinned digest. */
async function resolveBase(spec: ImageContent, registries: Registries): Promise<{ reference: ImageReference; images: BaseImage[] }> {
    const reference = parsePinnedReference(spec.baseImage);
    if (!reference.ok) {
        throw new Error(`baseImage: ${reference.problem}`);
    }
    const ref = reference.value;
    const client = registries.for(ref.registry);
    const top = await client.getManifest(ref.path, ref.digest);
    const wanted = platformsOf(spec);
    const manifests: Array<{ manifest: ImageManifest; digest: string }> = [];
    if (INDEX_MEDIA_TYPES.includes(top.mediaType)) {
        const index = JSON.parse(top.bytes.toString("utf8")) as ImageIndex;
        for (const platform of wanted) {
            const entry = index.manifests.find((m) => m.platform !== undefined && platformMatches(platform, m.platform));
            if (entry === undefined) {
                const offered = index.manifests.map((m) => (m.platform ? formatPlatform(m.platform) : "?")).join(", ");
                throw new Error(`base image ${spec.baseImage} has no ${formatPlatform(platform)} image (it has ${offered})`);
            }
            const child = await client.getManifest(ref.path, entry.digest);
            manifests.push({ manifest: JSON.parse(child.bytes.toString("utf8")) as ImageManifest, digest: child.digest });
        }
    } else {
        if (wanted.length > 1) {
            throw new Error(`base image ${spec.baseImage} is a single-platform image; it cannot serve ${spec.platforms.join(", ")}`);
        }
        manifests.push({ manifest: JSON.parse(top.bytes.toString("utf8")) as ImageManifest, digest: top.digest });
    }
    const images: BaseImage[] = [];
    for (const [i, { manifest, digest }] of manifests.entries()) {
        const config = JSON.parse((await client.getBlob(ref.path, manifest.config.digest)).toString("utf8")) as ImageConfig;
        const platform = wanted[i];
        if (!platformMatches(platform, { os: config.os, architecture: config.architecture, variant: config.variant })) {
            throw new Error(
                `base image ${spec.baseImage} is ${formatPlatform({ os: config.os, architecture: config.architecture, variant: config.variant })}, not ${formatPlatform(platform)}`,
            );
        }
        images.push({ name: spec.baseImage, manifest, manifestDigest: digest, config });
    }
    return { reference: ref, images };
}

/** A blob to publish and how to obtain or mount it. */
interface PendingBlob {
    descriptor: Descriptor;
    load(): Promise<Buffer>;
    /** The base image's repository, when the blob comes from there. */
    origin?: RepositoryName;
}

function checkLayers(built: { dependencies: CompressedLayer; application: CompressedLayer }, expected: LayerIds | undefined): void {
    if (expected === undefined) {
        return;
    }
    const changed = (["dependencies", "application"] as const).filter((name) => built[name].diffId !== expected[name]);
    if (changed.length > 0) {
        throw new Error(
            `the webhook's ${changed.join(" and ")} changed between the plan and the build (${changed.map((n) => `${n}: planned ${expected[n]}, built ${built[n].diffId}`).join("; ")}): run the update again`,
        );
    }
}

/** Builds the image and publishes it where `spec` says. */
export async function buildAndPublish(spec: ImageSpec, options: BuildOptions = {}): Promise<PublishedImage> {
    assertValid([...contentProblems(spec), ...destinationProblems(spec)]);
    const registries = new Registries(options);
    // Sources first: a webhook that cannot be packaged fails before any registry is contacted.
    const sets = await layerSets(spec);
    const resolving = resolveBase(spec, registries);
    resolving.catch(() => undefined); // awaited below; not unhandled while the layers compress
    const [dependencies, application] = await Promise.all([
        compressLayer(sets.dependencies, options.engine),
        compressLayer(sets.application, options.engine),
    ]);
    checkLayers({ dependencies, application }, options.expectedLayers);
    const base = await resolving;

    const added: Array<AddedLayer & { blob: Buffer }> = [
        { ...dependencies, createdBy: LAYER_HISTORY.dependencies(sets.sources.requiredPackages) },
        { ...application, createdBy: LAYER_HISTORY.application(spec) },
    ];
    const settings = imageSettings(spec);
    const images: ComposedImage[] = base.images.map((image) => composeImage(image, added, settings));

    const blobs = new Map<string, PendingBlob>();
    const baseClient = registries.for(base.reference.registry);
    for (const image of base.images) {
        for (const layer of image.manifest.layers) {
            blobs.set(layer.digest, {
                descriptor: layer,
                load: () => baseClient.getBlob(base.reference.path, layer.digest),
                origin: base.reference,
            });
        }
    }
    for (const layer of added) {
        blobs.set(layer.digest, { descriptor: { mediaType: "", digest: layer.digest, size: layer.size }, load: async () => layer.blob });
    }
    for (const image of images) {
        blobs.set(image.config.descriptor.digest, { descriptor: image.config.descriptor, load: async () => image.config.bytes });
    }
    const manifests = images.map((image) => image.manifest);
    const top = manifests.length === 1 ? manifests[0] : composeIndex(manifests.map((m) => m.descriptor));
    // Platform manifests before the index that names them.
    const documents = manifests.length === 1 ? manifests : [...manifests, top];

    const report: PublishReport = { uploaded: [], mounted: [], present: [] };
    if (spec.output === "registry") {
        await publishToRegistry(spec, registries, [...blobs.values()], documents, report);
    } else {
        await publishToLayout(spec, [...blobs.values()], documents, report);
    }
    for (const list of Object.values(report)) {
        (list as string[]).sort();
    }
    return {
        digest: top.descriptor.digest,
        mediaType: top.descriptor.mediaType,
        imageRef: `${spec.repository}@${top.descriptor.digest}`,
        report,
    };
}

async function publishToRegistry(
    spec: ImageSpec,
    registries: Registries,
    blobs: PendingBlob[],
    documents: Array<{ descriptor: Descriptor; bytes: Buffer }>,
    report: PublishReport,
): Promise<void> {
    const target = (parseRepository(spec.repository) as { ok: true; value: RepositoryName }).value;
    const client = registries.for(target.registry);
    await forEachLimited(blobs, 4, async (blob) => {
        const digest = blob.descriptor.digest;
        if (await client.blobExists(target.path, digest)) {
            report.present.push(digest);
            return;
        }
        let session: string | undefined;
        if (blob.origin !== undefined && blob.origin.registry === target.registry && blob.origin.path !== target.path) {
            const mount = await client.mountBlob(target.path, digest, blob.origin.path);
            if (mount.mounted) {
                report.mounted.push(digest);
                return;
            }
            session = mount.location;
        }
        await client.uploadBlob(target.path, digest, await blob.load(), session);
        report.uploaded.push(digest);
    });
    for (const document of documents) {
        if (!(await client.manifestExists(target.path, document.descriptor.digest))) {
            await client.putManifest(target.path, document.descriptor.digest, document.descriptor.mediaType, document.bytes);
        }
    }
}

/** The tag the layout's index.json gives the image, so `skopeo copy oci:<dir>:latest ...` finds it. */
export const LAYOUT_REF = "latest";

async function publishToLayout(
    spec: ImageSpec,
    blobs: PendingBlob[],
    documents: Array<{ descriptor: Descriptor; bytes: Buffer }>,
    report: PublishReport,
): Promise<void> {
    const layout = new ImageLayout(spec.layoutDirectory as string);
    await forEachLimited(blobs, 4, async (blob) => {
        const digest = blob.descriptor.digest;
        if (await layout.hasBlob(digest, blob.descriptor.size)) {
            report.present.push(digest);
            return;
        }
        await layout.writeBlob(digest, await blob.load());
        report.uploaded.push(digest);
    });
    for (const document of documents) {
        await layout.writeBlob(document.descriptor.digest, document.bytes);
    }
    const top = documents[documents.length - 1].descriptor;
    await layout.tag(LAYOUT_REF, { mediaType: top.mediaType, digest: top.digest, size: top.size });
}

/** The store an image was published to: its layout directory, or its registry client and path. */
function storeOf(location: ImageDestination, options: BuildOptions): { layout: ImageLayout } | { client: RegistryClient; path: string } {
    if (location.output === "oci-layout") {
        return { layout: new ImageLayout(location.layoutDirectory as string) };
    }
    const target = parseRepository(location.repository);
    if (!target.ok) {
        throw new Error(`repository ${JSON.stringify(location.repository)}: ${target.problem}`);
    }
    return { client: new Registries(options).for(target.value.registry), path: target.value.path };
}

/** Whether the image `digest` is still where it was published. */
export async function imageExists(location: ImageDestination, digest: string, options: BuildOptions = {}): Promise<boolean> {
    const store = storeOf(location, options);
    return "layout" in store ? store.layout.hasManifest(digest) : store.client.manifestExists(store.path, digest);
}

/** Removes the image `digest` (its manifest; the registry's garbage collection reclaims blobs). False when already gone. */
export async function removeImage(location: ImageDestination, digest: string, options: BuildOptions = {}): Promise<boolean> {
    const store = storeOf(location, options);
    return "layout" in store ? store.layout.untag(digest) : store.client.deleteManifest(store.path, digest);
}

async function forEachLimited<T>(items: ReadonlyArray<T>, limit: number, run: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async () => {
        while (next < items.length) {
            const item = items[next++];
            await run(item);
        }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
