/**
 * What removing an operator does to the CRDs its webhook converted and the stack keeps: their
 * conversion is set to `strategy: None`, with no webhook and no `caBundle` left pointing at the
 * deleted Service (operator-framework/operator-lifecycle-manager
 * pkg/controller/operators/olm/operator.go, `handleClusterServiceVersionDeletion`, which does the
 * same when a CSV is deleted and no CSV replaces it). Left as they were, reads at a version other
 * than the stored one fail, and so can namespace deletion and garbage collection.
 *
 * Three things do it, in the removal update and on every update after it until the CRD is declared
 * again (stack output `conversionResets`):
 *
 * 1. A dynamic resource does what OLM does, whoever wrote the block: one JSON merge patch setting
 *    `strategy: None` and `webhook: null` (conversion-reset-operations.ts). A server-side apply
 *    cannot remove the `caBundle` service-ca or cert-manager's cainjector wrote under their own
 *    managers, and the API server refuses that field beside `strategy: None`.
 * 2. Then, under `CONVERSION_FIELD_MANAGER`, a patch applying `strategy: None`, kept on delete (so
 *    the update that declares the CRD again forgets it without touching the CRD): the preview shows
 *    the reset, and a refresh finds drift where someone sets a webhook again.
 * 3. At the end of the removal update the conversion patch (serving.ts) is deleted: the provider
 *    relinquishes what its manager still owns (pulumi-kubernetes provider/pkg/ssa/actions.go,
 *    `Relinquish`), which the merge patch left valid.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { CONVERSION_FIELD_MANAGER, crdPatchIdentity, fieldManagerAnnotations } from "../shared/crd-retention";
import { loadModule, moduleRelativeToWorkingDirectory } from "../shared/dynamic-module";
import type * as Operations from "./conversion-reset-operations";

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
    /** How the Kubernetes provider reaches the cluster (`kubernetesConnectionArgs`): the merge patch goes the same way. */
    connection: { readonly context?: string; readonly kubeconfig?: pulumi.Input<string> };
}

/** The provider's code, relative to the working directory (components/shared/dynamic-module.ts). */
const OPERATIONS_MODULE = moduleRelativeToWorkingDirectory(__dirname, "conversion-reset-operations");

/** The operations module, loaded in the provider's process at call time. */
function loadOperations(module: string): typeof Operations {
    return loadModule<typeof Operations>(module);
}

/** Sets a CRD's conversion to `strategy: None` with no webhook block, as OLM does (conversion-reset-operations.ts). */
export class ConversionResetProvider implements pulumi.dynamic.ResourceProvider {
    constructor(private readonly operationsModule: string = OPERATIONS_MODULE) {}

    async diff(
        _id: string,
        olds: Operations.ConversionResetOutputs,
        news: Operations.ConversionResetInputs,
    ): Promise<pulumi.dynamic.DiffResult> {
        return loadOperations(this.operationsModule).diffConversion(olds, news);
    }

    async create(inputs: Operations.ConversionResetInputs): Promise<pulumi.dynamic.CreateResult> {
        return { id: inputs.crd, outs: { ...inputs, ...(await loadOperations(this.operationsModule).resetConversion(inputs)) } };
    }

    async update(
        _id: string,
        _olds: Operations.ConversionResetOutputs,
        news: Operations.ConversionResetInputs,
    ): Promise<pulumi.dynamic.UpdateResult> {
        return { outs: { ...news, ...(await loadOperations(this.operationsModule).resetConversion(news)) } };
    }

    /** A refresh: the state keeps how to reach the cluster (its kubeconfig as a secret) beside what was read. */
    async read(
        id: string,
        props: Operations.ConversionResetOutputs & Operations.ConversionResetInputs,
    ): Promise<pulumi.dynamic.ReadResult> {
        return { id, props: { ...props, ...(await loadOperations(this.operationsModule).readConversion(props)) } };
    }

    async delete(): Promise<void> {
        // The CRD stays as it is: the update that deletes this declares the CRD again (or destroys the stack).
    }
}

/** The merge patch of one CRD's conversion (`cluster-platform:operator:ConversionReset` in spirit; dynamic resources share one type token). */
class ConversionReset extends pulumi.dynamic.Resource {
    constructor(name: string, args: { crd: string } & ConversionResetsArgs["connection"], opts: pulumi.CustomResourceOptions) {
        super(
            new ConversionResetProvider(),
            name,
            { ...args, conversion: undefined },
            { ...opts, additionalSecretOutputs: ["kubeconfig"] },
        );
    }
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
                const reset = new ConversionReset(`crd-conversion-reset-${name}`, { crd: name, ...args.connection }, { parent: this });
                new k8s.apiextensions.v1.CustomResourceDefinitionPatch(
                    `crd-conversion-none-${name}`,
                    conversionResetBody(name, kind) as k8s.apiextensions.v1.CustomResourceDefinitionPatchArgs,
                    { parent: this, retainOnDelete: true, dependsOn: [reset] },
                );
            }
        }
        this.registerOutputs({});
    }
}
