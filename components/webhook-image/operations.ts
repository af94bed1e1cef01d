/**
 * What the WebhookImage provider does for each engine call but diff (diff.ts), as plain functions over plain
 * data. The provider (provider.ts) loads this module inside its methods, in the process the
 * engine runs it in, so nothing here is serialized and nothing here is captured in state.
 *
 * Relative paths in the inputs are resolved against the provider's working directory, which the
 * engine sets to the project directory (its own dynamic-provider launcher depends on that), so
 * state holds no machine-specific paths.
 */
import * as path from "node:path";
import { buildAndPublish, BuildOptions, ImageSpec, imageExists, LayerIds, removeImage } from "./build";

/** The provider's inputs: the image spec, the plan's content hash, and the delete policy. */
export interface WebhookImageInputs extends ImageSpec {
    /** From the plan: sha256 over everything that decides the image's bytes. */
    contentHash: string;
    /** From the plan: the tar digests the build must reproduce. */
    layers: LayerIds;
    /** Delete the manifest when the resource is deleted (default false: images stay; see docs/webhook-image.md). */
    deleteOnDestroy: boolean;
}

export interface WebhookImageOutputs extends WebhookImageInputs {
    digest: string;
    mediaType: string;
    /** `<repository>@sha256:<digest>`. */
    imageRef: string;
}

/** The spec with its paths made absolute (against the working directory). */
export function resolvedSpec(inputs: ImageSpec): ImageSpec {
    return {
        ...inputs,
        projectDirectory: path.resolve(inputs.projectDirectory),
        layoutDirectory: inputs.layoutDirectory === undefined ? undefined : path.resolve(inputs.layoutDirectory),
    };
}

export async function createImage(
    inputs: WebhookImageInputs,
    options: BuildOptions = {},
): Promise<{ id: string; outs: WebhookImageOutputs }> {
    const image = await buildAndPublish(resolvedSpec(inputs), { ...options, expectedLayers: inputs.layers });
    return { id: inputs.repository, outs: { ...inputs, digest: image.digest, mediaType: image.mediaType, imageRef: image.imageRef } };
}

export async function updateImage(
    olds: WebhookImageOutputs,
    news: WebhookImageInputs,
    options: BuildOptions = {},
): Promise<{ outs: WebhookImageOutputs }> {
    if (olds.contentHash === news.contentHash && olds.digest !== undefined) {
        // Only the delete policy changed: the published image is the same.
        return { outs: { ...news, digest: olds.digest, mediaType: olds.mediaType, imageRef: olds.imageRef } };
    }
    const { outs } = await createImage(news, options);
    return { outs };
}

/** The state as it is, or an empty id when the image is gone (the engine then drops it from state). */
export async function readImage(
    id: string,
    props: WebhookImageOutputs,
    options: BuildOptions = {},
): Promise<{ id: string; props: Partial<WebhookImageOutputs> }> {
    if (props.digest === undefined) {
        return { id, props };
    }
    const location = resolvedSpec(props);
    return (await imageExists(location, props.digest, options)) ? { id, props } : { id: "", props: {} };
}

/**
 * Leaves the image in place unless `deleteOnDestroy`: pods of the previous rollout, other stacks
 * that built the same bytes (same digest) and rollbacks may still pull it; the registry's
 * retention (an ECR lifecycle policy) reclaims old images.
 */
export async function deleteImage(props: WebhookImageOutputs, options: BuildOptions = {}): Promise<void> {
    if (props.deleteOnDestroy && props.digest !== undefined) {
        await removeImage(resolvedSpec(props), props.digest, options);
    }
}
