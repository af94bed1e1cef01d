/**
 * The half of a conversion reset that server-side apply cannot do: taking the `webhook` block off
 * a kept CRD when a field of it belongs to another manager.
 *
 * An injector writes `spec.conversion.webhook.clientConfig.caBundle` under a field manager of its
 * own: cert-manager's cainjector by server-side apply with `ForceOwnership` as
 * `cert-manager-cainjector` (cert-manager pkg/controller/cainjector/reconciler.go, `Reconcile`),
 * OpenShift's service-ca by an Update (service-ca-operator pkg/controller/cabundleinjector/crd.go).
 * An apply by the stack's manager removes only the fields that manager alone owns, so after the
 * reset's `{strategy: None}` the caBundle stays, and the API server refuses the object
 * ("spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to
 * Webhook", apiextensions-apiserver pkg/apis/apiextensions/validation `validateCustomResourceConversion`);
 * the real tier showed exactly this with cert-manager's cainjector (tests/real/cert-manager.real.ts).
 * An apply cannot remove a field another manager owns in one request, and the injector never stops
 * applying it (cainjector applies the caBundle while a webhook block exists). OLM does a full
 * Update with `Webhook = nil` (operator-lifecycle-manager pkg/controller/operators/olm/operator.go);
 * this does the same with a JSON merge patch of `spec.conversion` (`strategy: None`, `webhook:
 * null`), which removes the block whoever owns its fields, before the reset's apply.
 *
 * A dynamic resource, so the write is a step of the update, shown by its preview and run in order
 * (the reset Patch depends on it), never a write of the program itself. The Node SDK serializes the
 * provider with what its methods capture into the resource's state (pulumi/pulumi
 * sdk/nodejs/dynamic/index.ts): they capture only the pure kubeconfig helpers of
 * `../shared/object-presence` and load libraries at call time, and the inputs are the CRD's name
 * and the connection config already names (a context, a kubeconfig path relative to the project,
 * or in-cluster), never credentials or the runner's paths.
 */
import * as pulumi from "@pulumi/pulumi";
import { CONVERSION_FIELD_MANAGER } from "../shared/crd-retention";
import { apiPath, kubeConfigFor, type LiveConnection } from "../shared/object-presence";

export interface ConversionWebhookRemovalInputs {
    /** The kept CRD whose conversion is reset. */
    readonly crd: string;
    /** How the program reaches the cluster (the provider's connection). */
    readonly connection: LiveConnection;
}

/** The merge patch that leaves `spec.conversion` at exactly `{strategy: None}`. */
export const CONVERSION_WEBHOOK_REMOVAL = { spec: { conversion: { strategy: "None", webhook: null } } } as const;

/**
 * Takes the webhook block off `crd` when it still has one (nothing when it has none, or is gone):
 * idempotent, so a later update that holds the reset changes nothing.
 */
async function removeWebhookBlock(inputs: ConversionWebhookRemovalInputs): Promise<void> {
    const https = require("node:https") as typeof import("node:https");
    // The dynamic provider runs in the project directory, which a relative kubeconfig path is relative to.
    const config = kubeConfigFor(inputs.connection, ".");
    const server = config.getCurrentCluster()?.server;
    if (!server) {
        throw new Error(`the kubeconfig has no cluster for context ${JSON.stringify(config.getCurrentContext())}`);
    }
    const ref = {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        name: inputs.crd,
    };
    const call = async (method: string, body?: string): Promise<{ status: number; text: string }> => {
        const url = new URL(apiPath(ref), server);
        if (body !== undefined) {
            url.searchParams.set("fieldManager", CONVERSION_FIELD_MANAGER);
        }
        const options: import("node:https").RequestOptions = {
            method,
            headers: { Accept: "application/json", ...(body === undefined ? {} : { "Content-Type": "application/merge-patch+json" }) },
        };
        await config.applyToHTTPSOptions(options);
        return new Promise((resolve, reject) => {
            const request = https.request(url, options, (response) => {
                let text = "";
                response.setEncoding("utf8");
                response.on("data", (chunk: string) => (text += chunk));
                response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
                response.on("error", reject);
            });
            request.on("error", reject);
            request.end(body);
        });
    };
    const live = await call("GET");
    if (live.status === 404) {
        return;
    }
    if (live.status !== 200) {
        throw new Error(`cannot read CustomResourceDefinition ${JSON.stringify(inputs.crd)}: HTTP ${live.status}: ${live.text}`);
    }
    const conversion = (JSON.parse(live.text) as { spec?: { conversion?: { webhook?: unknown } } }).spec?.conversion;
    if (conversion?.webhook === undefined) {
        return;
    }
    const patched = await call("PATCH", JSON.stringify(CONVERSION_WEBHOOK_REMOVAL));
    if (patched.status !== 200) {
        throw new Error(
            `cannot take the conversion webhook off CustomResourceDefinition ${JSON.stringify(inputs.crd)}: HTTP ${patched.status}: ${patched.text}`,
        );
    }
}

/** The provider: the write happens on create; a CRD of another name is another resource; delete leaves the CRD as it is. */
export class ConversionWebhookRemovalProvider implements pulumi.dynamic.ResourceProvider {
    async create(inputs: ConversionWebhookRemovalInputs): Promise<pulumi.dynamic.CreateResult> {
        await removeWebhookBlock(inputs);
        return { id: inputs.crd, outs: inputs };
    }

    async diff(
        _id: string,
        olds: ConversionWebhookRemovalInputs,
        news: ConversionWebhookRemovalInputs,
    ): Promise<pulumi.dynamic.DiffResult> {
        // Another runner's connection reaches the same cluster: only the CRD decides what this is.
        const replaced = olds.crd !== news.crd;
        return { changes: replaced, replaces: replaced ? ["crd"] : [], deleteBeforeReplace: false };
    }
}

/** One kept CRD's webhook block, taken off before its reset Patch applies `strategy: None`. */
export class ConversionWebhookRemoval extends pulumi.dynamic.Resource {
    constructor(name: string, inputs: ConversionWebhookRemovalInputs, opts?: pulumi.CustomResourceOptions) {
        super(new ConversionWebhookRemovalProvider(), name, { ...inputs }, opts);
    }
}
