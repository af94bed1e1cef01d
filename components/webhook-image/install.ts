/**
 * The subscription webhook's image in the stack: where it is published and from what. Labels
 * carry package.json's repository and the webhook's inputs by git content, the same in every
 * clone of a commit (provenance.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import { WEBHOOK_INPUT_PATHS, WEBHOOK_SOURCE, WebhookImage } from "./index";
import { checkoutProvenance } from "./provenance";
import { ImageOutput, layoutDirectoryFor, webhookImageOutput } from "./rules";

/** The parts of the validated `webhookImage` config section the image is built from. */
export interface WebhookImageSettings {
    /** The repository to push to (or the OCI layout's name). */
    readonly repository: string;
    /** Where the image goes. @default "registry" for a live stack, "oci-layout" for a rendered one */
    readonly output?: ImageOutput;
    /** The base image (`<repository>@sha256:...`). */
    readonly baseImage: string;
    /** The platforms to build for. */
    readonly platforms: string[];
    /** Delete the pushed image when the stack is destroyed. @default false */
    readonly deleteOnDestroy?: boolean;
}

/**
 * Builds and publishes the webhook image: to `repositoryOverride` (the stack's ECR repository,
 * when the AWS asset plan has one), else to `settings.repository`, or as an OCI image layout
 * under out/oci/. A live stack's default output is registry: its cluster must pull the image.
 * `buildWhenMissing` (a run by PKO) compiles a webhook nobody built instead of warning.
 */
export function publishWebhookImage(
    settings: WebhookImageSettings,
    live: boolean,
    repositoryOverride: pulumi.Output<string> | undefined,
    projectDirectory: string,
    buildWhenMissing: boolean,
): WebhookImage {
    const output = webhookImageOutput(settings, live);
    const provenance = checkoutProvenance(projectDirectory, WEBHOOK_INPUT_PATHS);
    return new WebhookImage("subscription-webhook-image", {
        repository: repositoryOverride ?? settings.repository,
        output,
        layoutDirectory: output === "oci-layout" ? layoutDirectoryFor(settings.repository) : undefined,
        baseImage: settings.baseImage,
        platforms: settings.platforms,
        projectDirectory,
        ...WEBHOOK_SOURCE,
        source: provenance.source,
        sourceTree: provenance.sourceTree,
        deleteOnDestroy: settings.deleteOnDestroy,
        // PKO's workspace runs a fresh checkout (dist/ is git-ignored) and no build.
        buildWhenMissing,
    });
}
