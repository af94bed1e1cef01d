/**
 * Orders webhook upgrades (seed 002, "Webhook Upgrades") with Pulumi's own machinery.
 *
 * Each operator install declares a "webhook generation" ConfigMap whose name carries a hash of
 * its admission webhooks, with `deleteBeforeReplace`. The install's first Deployment depends on it
 * (`dependsOn`) and each later one on the Deployment before it, so all wait for it; every webhook
 * configuration takes its `metadata` from the ConfigMap's name (a property dependency, added by the
 * transformation below) and is registered with `replaceOnChanges: ["metadata"]` and
 * `deleteBeforeReplace`.
 *
 * When the webhook set changes, the new name forces a replacement of the ConfigMap. Before
 * deleting it, the engine walks its dependents (pulumi/pulumi
 * `pkg/resource/deploy/step_generator.go`, `calculateDependentReplacements`): a dependent whose
 * input property depends on the ConfigMap gets that property as unknown, and the provider's diff
 * of it goes through `applyReplaceOnChanges` with the dependent's `replaceOnChanges`, so a change
 * under `metadata` is a replacement whatever the provider itself would decide. Those dependents
 * (the old webhook configurations) are deleted first, then the ConfigMap; the new ConfigMap is
 * created, the Deployments (which waited on it) are updated and awaited, and only then are the
 * new webhook configurations created (they depend on their Deployments). A broken new version
 * therefore never sits behind its own old webhook. An unchanged webhook set leaves the ConfigMap,
 * and the webhooks, alone; any other change of a configuration's metadata also replaces it,
 * delete first (the name stays, so it cannot be created beside the old one).
 */
import * as pulumi from "@pulumi/pulumi";

/** Annotation on each webhook configuration naming the generation it belongs to. */
export const WEBHOOK_GENERATION_ANNOTATION = "cluster-platform.io/webhook-generation";

export const WEBHOOK_CONFIGURATION_TYPES = new Set([
    "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration",
]);

/** The metadata of a webhook configuration, tied to the generation (a property dependency). */
export function gatedMetadata(
    metadata: pulumi.Input<unknown>,
    generationName: pulumi.Output<string>,
    hash: string,
): pulumi.Output<Record<string, unknown>> {
    return pulumi.all([metadata, generationName]).apply(([meta]): Record<string, unknown> => {
        const m = (meta ?? {}) as Record<string, unknown>;
        const annotations = (m.annotations ?? {}) as Record<string, string>;
        return { ...m, annotations: { ...annotations, [WEBHOOK_GENERATION_ANNOTATION]: hash } };
    });
}

/** The options that make a webhook configuration go before its generation ConfigMap is replaced. */
export const GATED_OPTIONS = { replaceOnChanges: ["metadata"], deleteBeforeReplace: true } as const;

/**
 * A transformation for an AdmissionWebhook component: each webhook configuration it declares
 * gets its metadata from `gatedMetadata` and `GATED_OPTIONS`, so replacing the generation
 * ConfigMap deletes it first.
 */
export function webhookGenerationTransformation(generationName: pulumi.Output<string>, hash: string): pulumi.ResourceTransformation {
    return (args) => {
        if (!WEBHOOK_CONFIGURATION_TYPES.has(args.type)) {
            return undefined;
        }
        return {
            props: { ...args.props, metadata: gatedMetadata(args.props.metadata, generationName, hash) },
            opts: {
                ...args.opts,
                replaceOnChanges: [...new Set([...(args.opts.replaceOnChanges ?? []), ...GATED_OPTIONS.replaceOnChanges])],
                deleteBeforeReplace: GATED_OPTIONS.deleteBeforeReplace,
            },
        };
    };
}
