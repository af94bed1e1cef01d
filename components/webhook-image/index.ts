/**
 * The subscription webhook's container image, built and published by the stack itself:
 * daemonless and reproducible, as ko and jib build images. See docs/webhook-image.md.
 */
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { compileApplication } from "./compile";
import { contentProblems, destinationProblems, ImageContent, ImagePlan, planImage } from "./build";
import type { WebhookImageInputs } from "./operations";
import { provenanceLabels } from "./provenance";
import { WebhookImageProvider } from "./provider";
import { asResourceError } from "../shared/resource-errors";
import { WEBHOOK_UID } from "./rules";
import { missingBuildProblem, staleOutputs } from "./sources";

export interface WebhookImageArgs {
    /** Where to publish: `host/path` for a registry; for an OCI layout, the name the image will be pushed under later. */
    readonly repository: pulumi.Input<string>;
    /** `registry` pushes through the distribution API; `oci-layout` writes an OCI image layout directory. */
    readonly output: "registry" | "oci-layout";
    /** The OCI image layout directory (output oci-layout), absolute or relative to the project. @default none (output registry) */
    readonly layoutDirectory?: string;
    /** The base image, pinned by digest. */
    readonly baseImage: string;
    /** Platforms to build for (`linux/amd64`...); several give an image index. */
    readonly platforms: string[];
    /** The project: package.json, package-lock.json, node_modules and the compiled webhook. */
    readonly projectDirectory: string;
    /** The compiler's output directory, relative to the project. @default "dist" */
    readonly outputDirectory?: string;
    /** The webhook's folder, in the sources and in the output directory. @default "webhook" */
    readonly application?: string;
    /** The script Node.js runs, relative to the output directory. @default "webhook/main.js" */
    readonly entrypoint?: string;
    /** Environment variables set in the image. @default { NODE_ENV: "production" } */
    readonly env?: Record<string, string>;
    /** `org.opencontainers.image.source`: where the source lives (an https URL, from package.json). @default none: no label */
    readonly source?: string;
    /** `dev.cluster-platform.source-tree`: the webhook's inputs by content (provenance.ts), the same in every clone. @default none: no label */
    readonly sourceTree?: string;
    /** Delete the image from the registry when the resource is deleted (docs/webhook-image.md). @default false */
    readonly deleteOnDestroy?: boolean;
    /**
     * Compile the application (compile.ts) when its output is missing, instead of warning: for
     * runs in a checkout nobody builds, such as PKO's workspace.
     * @default false
     */
    readonly buildWhenMissing?: boolean;
}

/** The plan of a webhook that was never compiled: a value no build matches, so the provider runs and says why it cannot. */
const UNBUILT = "unbuilt";

type InputsOf<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/** The dynamic resource the provider manages; its outputs are the published image. */
class PublishedImage extends pulumi.dynamic.Resource {
    declare readonly imageRef: pulumi.Output<string>;
    declare readonly digest: pulumi.Output<string>;

    constructor(name: string, inputs: InputsOf<WebhookImageInputs>, opts: pulumi.CustomResourceOptions) {
        super(new WebhookImageProvider(), name, { ...inputs, imageRef: undefined, digest: undefined, mediaType: undefined }, opts);
    }
}

/**
 * `cluster-platform:webhook-image:WebhookImage`: the subscription webhook's image, planned at
 * program time (content hash and layer digests from the compiled webhook, so a preview shows
 * whether it changes) and published by a dynamic resource child (`provider.ts`).
 */
export class WebhookImage extends pulumi.ComponentResource {
    /** `<repository>@sha256:<digest>`: what the webhook Deployment runs. */
    readonly imageRef: pulumi.Output<string>;
    /** The manifest (or index) digest. */
    readonly digest: pulumi.Output<string>;

    constructor(name: string, args: WebhookImageArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:webhook-image:WebhookImage", name, {}, opts);

        const cwd = process.cwd();
        const projectDirectory = path.relative(cwd, path.resolve(args.projectDirectory)) || ".";
        const application = args.application ?? "webhook";
        const content: ImageContent = {
            projectDirectory,
            outputDirectory: args.outputDirectory ?? "dist",
            application,
            entrypoint: args.entrypoint ?? `${application}/main.js`,
            baseImage: args.baseImage,
            platforms: args.platforms,
            user: WEBHOOK_UID,
            env: args.env ?? { NODE_ENV: "production" },
            labels: provenanceLabels({ source: args.source, sourceTree: args.sourceTree }),
        };
        const layoutDirectory =
            args.layoutDirectory === undefined
                ? undefined
                : path.relative(cwd, path.resolve(args.projectDirectory, args.layoutDirectory)) || ".";
        const problems = [...contentProblems(content), ...destinationProblems({ output: args.output, layoutDirectory })];
        if (problems.length > 0) {
            // A ResourceError names this component (the CLI shows it under the component's row).
            throw new pulumi.ResourceError(problems.join("; "), this);
        }

        const plan = pulumi.output(
            this.plan(content, args.buildWhenMissing ?? false).catch((error: unknown) => Promise.reject(asResourceError(error, this))),
        );

        const repository = pulumi.output(args.repository).apply((value) => {
            const issues = destinationProblems({ repository: value, output: args.output, layoutDirectory });
            if (issues.length > 0) {
                throw new pulumi.ResourceError(issues.join("; "), this);
            }
            return value;
        });
        const inputs: InputsOf<WebhookImageInputs> = {
            ...content,
            repository,
            output: args.output,
            layoutDirectory,
            contentHash: plan.contentHash,
            layers: plan.layers,
            deleteOnDestroy: args.deleteOnDestroy ?? false,
        };
        const image = new PublishedImage(name, inputs, { parent: this });
        this.imageRef = image.imageRef;
        this.digest = image.digest;
        this.registerOutputs({ imageRef: this.imageRef, digest: this.digest });
    }

    /**
     * The content hash and layer digests. For a webhook that was never compiled, a warning: a
     * preview shows the digest as unknown, and an update fails when it reaches the image (the
     * provider cannot package it), after what does not depend on the image. Output older than
     * its sources gets a warning too, since the image packages what was compiled.
     */
    private async plan(content: ImageContent, buildWhenMissing: boolean): Promise<ImagePlan> {
        if (buildWhenMissing && missingBuildProblem(content) !== undefined) {
            compileApplication({
                projectDirectory: content.projectDirectory,
                application: content.application,
                outputDirectory: content.outputDirectory,
            });
            pulumi.log.info(`compiled ${content.application} into ${content.outputDirectory}/ (no build in this checkout)`, this);
        }
        const missing = missingBuildProblem(content);
        if (missing !== undefined) {
            if (pulumi.runtime.isDryRun()) {
                pulumi.log.warn(`${missing}; the image digest is unknown in this preview`, this);
                return pulumi.unknown as never;
            }
            pulumi.log.warn(`${missing}; this update will fail at the image`, this);
            return { contentHash: UNBUILT, layers: { dependencies: UNBUILT, application: UNBUILT } };
        }
        const stale = await staleOutputs(content.projectDirectory, content.application, content.outputDirectory);
        if (stale.length > 0) {
            const listed = `${stale.slice(0, 3).join(", ")}${stale.length > 3 ? ` and ${stale.length - 3} more` : ""}`;
            pulumi.log.warn(
                `${content.outputDirectory}/${content.application} is older than ${listed}: the image packages the last build; run npm run build first`,
                this,
            );
        }
        return planImage(content);
    }
}

export { WebhookImageProvider } from "./provider";
export { buildsWebhookImage, layoutDirectoryFor, namesRegistryHost, webhookImageOutput } from "./rules";
export { checkoutProvenance, provenanceLabels } from "./provenance";
export { missingBuildProblem } from "./sources";

/** Where index.ts finds the webhook: compiled by `npm run build` from `webhook/` into `dist/webhook`. */
export const WEBHOOK_SOURCE = { outputDirectory: "dist", application: "webhook", entrypoint: "webhook/main.js" } as const;

/**
 * What the image is built from, for its source-tree label: the server's folder, the neutral
 * modules it imports from outside it (tests/webhook/module-graph.test.ts holds this list to the
 * server's import closure), and the build's inputs. A commit touching none of these does not
 * change the image.
 */
export const WEBHOOK_INPUT_PATHS = [
    "webhook",
    "components/shared/k8s-names.ts",
    "components/shared/order.ts",
    "components/shared/records.ts",
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "tsconfig.build.json",
] as const;
