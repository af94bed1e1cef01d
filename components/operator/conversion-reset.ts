/**
 * What removing an operator does to the CRDs its webhook converted and the stack keeps: their
 * conversion is set to `strategy: None`, with no webhook and no `caBundle` left pointing at the
 * deleted Service (operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/olm/operator.go, `handleClusterServiceVersionDeletion`, which does the
 * same when a CSV is deleted and no CSV replaces it). Left as they were, reads at a version other
 * than the stored one fail, and so can namespace deletion and garbage collection.
 *
 * Two things do it. The conversion was applied by a patch of its own under
 * `CONVERSION_FIELD_MANAGER` (serving.ts), which the removal deletes: the provider relinquishes
 * the fields and the API server defaults the strategy to None. And this update declares, under
 * the same manager, a patch that applies `strategy: None`, declared on every update until the CRD
 * is declared again (kept on delete, so that update forgets it without touching the CRD): one apply by the manager that owns the webhook fields
 * drops them (server-side apply removes the fields a manager stops applying), so the CRD is valid
 * whichever step the engine runs first, and the preview shows the reset. A `caBundle` an injector
 * wrote (cert-manager's cainjector, service-ca) is not the stack's to drop by an apply: a
 * ConversionWebhookRemoval before the patch takes the webhook block off with a merge patch
 * (conversion-webhook-removal.ts).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { CONVERSION_FIELD_MANAGER, crdPatchIdentity, fieldManagerAnnotations } from "../shared/crd-retention";
import type { LiveConnection } from "../shared/object-presence";
import { ConversionWebhookRemoval } from "./conversion-webhook-removal";

/** The server-side-apply body that resets one CRD's conversion. */
export function conversionResetBody(crd: string, kind: string): Record<string, unknown> {
    return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: crd, annotations: fieldManagerAnnotations(CONVERSION_FIELD_MANAGER) },
        spec: { ...crdPatchIdentity(crd, kind), conversion: { strategy: "None" } },
    };
}

export interface ConversionResetsArgs {
    /** The kept CRDs whose conversion the stack holds at None (`conversionResets`): name → kind. */
    crds: Readonly<Record<string, string>>;
    /** Whether the provider can patch a live cluster. */
    cluster: ClusterTarget;
    /** How the program reaches a live cluster (for the webhook block's removal); unset when it renders YAML. */
    connection?: LiveConnection;
}

export class ConversionResets extends pulumi.ComponentResource {
    constructor(name: string, args: ConversionResetsArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:operator:ConversionResets", name, {}, opts);
        if (!args.cluster.live) {
            pulumi.log.warn(
                skippedWithoutCluster(`the conversion reset (strategy None) of CRDs ${Object.keys(args.crds).join(", ")}`),
                this,
            );
        } else {
            for (const [name, kind] of Object.entries(args.crds)) {
                const removal = args.connection
                    ? [
                          new ConversionWebhookRemoval(
                              `crd-conversion-webhook-removal-${name}`,
                              { crd: name, connection: args.connection },
                              { parent: this },
                          ),
                      ]
                    : [];
                new k8s.apiextensions.v1.CustomResourceDefinitionPatch(
                    `crd-conversion-none-${name}`,
                    conversionResetBody(name, kind) as k8s.apiextensions.v1.CustomResourceDefinitionPatchArgs,
                    { parent: this, retainOnDelete: true, dependsOn: removal },
                );
            }
        }
        this.registerOutputs({});
    }
}
