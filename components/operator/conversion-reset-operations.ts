/**
 * What the conversion reset's dynamic provider (conversion-reset.ts) does, as plain functions the
 * provider loads at call time in its own process, so nothing here is serialized into state.
 *
 * When a CSV is deleted and no CSV replaces it, OLM sets each CRD its webhook converted to
 * `strategy: None` with a full update that drops the webhook block (operator-framework/
 * operator-lifecycle-manager pkg/controller/operators/olm/operator.go,
 * `handleClusterServiceVersionDeletion`: `crd.Spec.Conversion.Strategy = None`,
 * `crd.Spec.Conversion.Webhook = nil`, then `Update`). A server-side apply cannot do that once
 * another manager wrote part of the block: an apply only removes fields its own manager owns, and
 * service-ca writes `caBundle` by an update under its own manager (openshift/service-ca-operator
 * pkg/controller/cabundleinjector/crd.go, `Sync`), cert-manager's cainjector by an apply of its own
 * (cainjector/reconciler.go). The field would stay, and the API server refuses a webhook block
 * beside `strategy: None` ("should not be set when strategy is not set to Webhook",
 * apiextensions-apiserver pkg/apis/apiextensions/validation, `validateCustomResourceConversion`).
 * So this does what OLM does, as a JSON merge patch (an update: it removes fields whoever owns
 * them, needs no resourceVersion and only the `patch` verb, as the stack's other CRD patches).
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { CONVERSION_FIELD_MANAGER } from "../shared/crd-retention";
import { apiPath, apiRequest } from "../shared/object-presence";

/** The CRD and how to reach its cluster: the Kubernetes provider's own connection arguments (components/shared/cluster.ts). */
export interface ConversionResetInputs {
    /** The CRD's name. */
    crd: string;
    /** A kubeconfig context (`cluster.kubeContext`), resolved through the runner's kubeconfig. */
    context?: string;
    /** A kubeconfig's contents (`cluster.kubeconfig`, a secret); "" for the runner's or the pod's. */
    kubeconfig?: string;
}

export interface ConversionResetOutputs {
    crd: string;
    /** The CRD's `spec.conversion` as the cluster holds it, or "absent" when the CRD is gone. */
    conversion: Record<string, unknown> | "absent";
}

/** The merge patch: strategy None, and no webhook block whoever wrote its fields. */
export const CONVERSION_RESET_PATCH = { spec: { conversion: { strategy: "None", webhook: null } } } as const;

/** Whether a CRD's conversion is reset: `strategy: None` and nothing else (absent counts: the API server defaults it to None). */
export function isReset(conversion: ConversionResetOutputs["conversion"] | undefined): boolean {
    if (conversion === "absent" || conversion === undefined) {
        return true;
    }
    return Object.keys(conversion).every((key) => key === "strategy") && (conversion.strategy ?? "None") === "None";
}

const CRD_REF = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", plural: "customresourcedefinitions" };

function clusterOf(inputs: ConversionResetInputs): { config: KubeConfig; url: URL } {
    const { KubeConfig: KubeConfigClass } = require("@kubernetes/client-node") as typeof import("@kubernetes/client-node");
    const config = new KubeConfigClass();
    if (inputs.kubeconfig) {
        config.loadFromString(inputs.kubeconfig);
    } else {
        // The runner's kubeconfig ($KUBECONFIG, ~/.kube/config), else the pod's service account: the
        // provider's own loading rules for an empty kubeconfig.
        config.loadFromDefault();
        if (inputs.context) {
            config.setCurrentContext(inputs.context);
        }
    }
    const server = config.getCurrentCluster()?.server;
    if (!server) {
        throw new Error(`the kubeconfig has no cluster for context ${JSON.stringify(config.getCurrentContext())}`);
    }
    return { config, url: new URL(apiPath({ ...CRD_REF, name: inputs.crd }), server) };
}

function conversionOf(status: number, body: string, crd: string, what: string): ConversionResetOutputs {
    if (status === 404) {
        return { crd, conversion: "absent" };
    }
    if (status !== 200) {
        const message = (() => {
            try {
                return (JSON.parse(body) as { message?: string }).message ?? body;
            } catch {
                return body;
            }
        })();
        throw new Error(`CRD ${JSON.stringify(crd)}: ${what} failed: HTTP ${status}: ${message}`);
    }
    const object = JSON.parse(body) as { spec?: { conversion?: Record<string, unknown> } };
    return { crd, conversion: object.spec?.conversion ?? {} };
}

/** The CRD's conversion as the cluster holds it (refresh). */
export async function readConversion(inputs: ConversionResetInputs): Promise<ConversionResetOutputs> {
    const { config, url } = clusterOf(inputs);
    const { status, body } = await apiRequest(config, url, { method: "GET" });
    return conversionOf(status, body, inputs.crd, "reading its conversion");
}

/** Sets the CRD's conversion to `strategy: None` with no webhook block, unless it is so already or the CRD is gone. */
export async function resetConversion(inputs: ConversionResetInputs): Promise<ConversionResetOutputs> {
    const current = await readConversion(inputs);
    if (isReset(current.conversion)) {
        return current;
    }
    const { config, url } = clusterOf(inputs);
    url.searchParams.set("fieldManager", CONVERSION_FIELD_MANAGER);
    const { status, body } = await apiRequest(config, url, {
        method: "PATCH",
        body: JSON.stringify(CONVERSION_RESET_PATCH),
        contentType: "application/merge-patch+json",
    });
    return conversionOf(status, body, inputs.crd, "setting its conversion to strategy None");
}

/** A change when the CRD is another or its conversion (as last read) is not reset; the connection is how, not what. */
export function diffConversion(olds: Partial<ConversionResetOutputs>, news: ConversionResetInputs): { changes: boolean } {
    return { changes: olds.crd !== news.crd || !isReset(olds.conversion) };
}
