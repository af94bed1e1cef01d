/**
 * Orders webhook upgrades (seed 002, "Webhook Upgrades") with Pulumi's own machinery.
 *
 * Each operator install declares a "webhook generation" ConfigMap whose name carries a hash of
 * its admission webhooks, with `deleteBeforeReplace`. Every Deployment of the install depends on
 * it (`dependsOn`), and every webhook configuration takes a property dependency on it (its
 * `metadata` is computed from the ConfigMap's name by the transformation below). When the
 * webhook set changes, the new name forces a replacement of the ConfigMap; because it is
 * delete-before-replace, the engine first deletes the dependents whose properties point at it
 * (the old webhook configurations), then the ConfigMap, creates the new one, then updates the
 * Deployments (which waited on it) and only after they are ready creates the new webhook
 * configurations (which depend on the Deployments). A broken new version therefore never sits
 * behind its own old webhook. An unchanged webhook set leaves the ConfigMap, and the webhooks,
 * alone.
 */
import * as pulumi from "@pulumi/pulumi";

/** Annotation on each webhook configuration naming the generation it belongs to. */
export const WEBHOOK_GENERATION_ANNOTATION = "cluster-platform.io/webhook-generation";

export const WEBHOOK_CONFIGURATION_TYPES = new Set([
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
]);

/** The metadata of a webhook configuration, tied to the generation (a property dependency). */
export function gatedMetadata(metadata: pulumi.Input<unknown>, generationName: pulumi.Output<string>, hash: string): pulumi.Output<Record<string, unknown>> {
    return pulumi.all([metadata, generationName]).apply(([meta]): Record<string, unknown> => {
        const m = (meta ?? {}) as Record<string, unknown>;
        const annotations = (m.annotations ?? {}) as Record<string, string>;
        return { ...m, annotations: { ...annotations, [WEBHOOK_GENERATION_ANNOTATION]: hash } };
    });
}

/**
 * A transformation for an AdmissionWebhook component: each webhook configuration it declares
 * gets its metadata from `gatedMetadata`, so replacing the generation ConfigMap deletes it first.
 */
export function webhookGenerationTransformation(generationName: pulumi.Output<string>, hash: string): pulumi.ResourceTransformation {
    return (args) => {
        if (!WEBHOOK_CONFIGURATION_TYPES.has(args.type)) {
            return undefined;
        }
        return {
            props: { ...args.props, metadata: gatedMetadata(args.props.metadata, generationName, hash) },
            opts: args.opts,
        };
    };
}
