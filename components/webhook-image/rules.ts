/**
 * The rules of `webhookImage` config, shared by the config schema and the component: the pinned
 * default base image, base-image pinning, platforms and where an OCI image layout goes.
 * Pure: no Pulumi, no file system, no network.
 */
import type { Problem } from "../shared/problems";
import { parsePinnedReference, parseRepository } from "./reference";

/**
 * The default base image: Google's distroless Node.js 22 runtime on Debian 12, `nonroot` variant
 * (uid 65532, no shell or package manager), pinned by the digest of its multi-arch index so every
 * build starts from the same bytes. Move the pin deliberately (and review the change) to pick up
 * Node.js and Debian security fixes.
 */
export const DEFAULT_BASE_IMAGE =
    "gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e";

export const DEFAULT_PLATFORMS = ["linux/amd64"] as const;

export const DEFAULT_WEBHOOK_REPOSITORY = "cluster-platform/subscription-webhook";

/** The numeric, non-root user and group the webhook runs as (distroless' `nonroot`). */
export const WEBHOOK_UID = 65532;

/** Where `output: oci-layout` writes, relative to the project directory. */
export const OCI_LAYOUT_ROOT = "out/oci";

const PLATFORM = /^([a-z0-9]+)\/([a-z0-9_]+)(?:\/([a-z0-9]+))?$/;
export const PLATFORM_RULE = 'must be `os/architecture[/variant]`, e.g. "linux/amd64", "linux/arm64" or "linux/arm/v7"';

export interface Platform {
    os: string;
    architecture: string;
    variant?: string;
}

export function parsePlatform(text: string): Platform | undefined {
    const match = PLATFORM.exec(text);
    if (!match) {
        return undefined;
    }
    return match[3] === undefined ? { os: match[1], architecture: match[2] } : { os: match[1], architecture: match[2], variant: match[3] };
}

export function formatPlatform(platform: Platform): string {
    return [platform.os, platform.architecture, platform.variant].filter((part) => part !== undefined).join("/");
}

/** Whether an index entry's platform serves `wanted` (arm64 without a variant means v8, as containerd reads it). */
export function platformMatches(wanted: Platform, offered: Platform): boolean {
    const variant = (p: Platform) => p.variant ?? (p.architecture === "arm64" ? "v8" : undefined);
    if (wanted.os !== offered.os || wanted.architecture !== offered.architecture) {
        return false;
    }
    return wanted.variant === undefined || variant(wanted) === variant(offered);
}

/** Why `text` cannot be a base image, or undefined when it is a reference pinned by digest. */
export function baseImageProblem(text: string): string | undefined {
    const parsed = parsePinnedReference(text);
    return parsed.ok ? undefined : parsed.problem;
}

/** Why `text` cannot be the image repository, or undefined. */
export function repositoryProblem(text: string): string | undefined {
    const parsed = parseRepository(text);
    return parsed.ok ? undefined : parsed.problem;
}

/**
 * Why pushing to `repository` cannot work: a registry push needs a registry host in the name,
 * unless the stack creates the ECR repository itself (aws.enabled), which then supplies the host.
 */
export function registryTargetProblem(repository: string, awsEnabled: boolean): string | undefined {
    const parsed = parseRepository(repository);
    if (!parsed.ok || parsed.value.explicitRegistry || awsEnabled) {
        return undefined;
    }
    return `${JSON.stringify(repository)} names no registry host, so output "registry" has nowhere to push: write it as \`host/path\` (e.g. "ghcr.io/example/subscription-webhook"), or enable aws to push to the stack's ECR repository`;
}

/** Whether `repository` names its registry host (`host/path`), rather than a Docker Hub path. */
export function namesRegistryHost(repository: string): boolean {
    const parsed = parseRepository(repository);
    return parsed.ok && parsed.value.explicitRegistry;
}

/** The OCI image layout directory for `repository`, relative to the project (`out/oci/<repository>`, ':' as '_'). */
export function layoutDirectoryFor(repository: string): string {
    return `${OCI_LAYOUT_ROOT}/${repository.replace(/:/g, "_")}`;
}

/** The stack settings the image rules depend on, beyond `webhookImage` itself. */
export interface ImageUse {
    /** Whether the stack builds the image (subscriptions on, no `subscriptions.webhook.image`). */
    built: boolean;
    awsEnabled: boolean;
    /** Whether the stack applies to a live cluster (no `cluster.renderYamlToDirectory`). */
    live: boolean;
}

export type ImageOutput = "registry" | "oci-layout";

/**
 * Where the built image goes when `webhookImage.output` is not set: a live cluster must pull it,
 * so a registry; a render-to-directory stack (offline) writes an OCI image layout.
 */
export function webhookImageOutput(image: { output?: ImageOutput }, live: boolean): ImageOutput {
    return image.output ?? (live ? "registry" : "oci-layout");
}

/** Cross-section problems of `webhookImage`, as config problems. */
export function webhookImageProblems(image: { repository: string; output?: ImageOutput }, use: ImageUse): Problem[] {
    if (!use.built) {
        return [];
    }
    const output = webhookImageOutput(image, use.live);
    if (output === "oci-layout") {
        // An image that only exists in a directory on the admin's machine: the webhook Deployment
        // would sit in ImagePullBackOff and `pulumi up` fail after the provider's readiness wait.
        return use.live
            ? [
                  {
                      path: "webhookImage.output",
                      message: `"oci-layout" writes the image to a directory on this machine, which a live cluster cannot pull: set webhookImage.output to "registry" (with a registry host in webhookImage.repository${use.awsEnabled ? ", or none to push to the stack's ECR repository" : ", or aws.enabled for the stack's ECR repository"}), or subscriptions.webhook.image to an image the cluster can pull`,
                  },
              ]
            : [];
    }
    const problem = registryTargetProblem(image.repository, use.awsEnabled);
    return problem === undefined ? [] : [{ path: "webhookImage.repository", message: problem }];
}

/** Whether the stack builds the webhook image: subscriptions are on and no image is given instead. */
export function buildsWebhookImage(subscriptions: { enabled: boolean; webhook: { image?: string } }): boolean {
    return subscriptions.enabled && subscriptions.webhook.image === undefined;
}
