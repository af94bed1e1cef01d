/**
 * Why a workload's pod template carries a fingerprint of the workload's own labels.
 *
 * pulumi-kubernetes awaits a Deployment update on a shared informer per namespace that lives as
 * long as the provider process (`provider/pkg/await/informers/factory.go`, `ForNamespace` caches a
 * factory per namespace; `Subscribe` adds a handler to the running informer, which replays its
 * cache as Add events). The Deployment awaiter drops an event only when its `generation` is below
 * the patched object's (`provider/pkg/await/deployment.go`, `processDeploymentEvent`: "Do nothing
 * if this is a stale object"), and returns the last event's object as the resource's outputs
 * (`await/internal/awaiter.go`, `Await`). A change of `metadata` alone does not bump `generation`,
 * so when another Deployment of that namespace was awaited earlier in the same run, the replayed
 * pre-patch object passes the check, the finished rollout satisfies the condition at once, and
 * the state records the old labels. The next preview diffs new inputs against those outputs
 * (`provider/pkg/provider/provider.go`, `Diff`: `pruneLiveState(oldLive, oldInputs)`) and shows a
 * change the cluster already has. The real tier met it on an operator rename
 * (tests/real/operator-rename.real.ts): both Deployments of the install update together.
 *
 * With the labels' fingerprint on the pod template, a label change is also a template change:
 * `generation` moves, the replayed object is dropped, and the awaiter returns the new object. The
 * cost is a rolling restart of the pods when the workload's labels change (an operator rename),
 * which the docs state.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json";

/** Pod-template annotation holding the fingerprint of its workload's `metadata.labels`. */
export const WORKLOAD_LABELS_ANNOTATION = "cluster-platform.io/workload-labels";

/** A fingerprint of a label set: equal for equal sets, whatever their order. */
export function labelsFingerprint(labels: Readonly<Record<string, string>>): string {
    return createHash("sha256").update(canonicalJson(labels)).digest("hex").slice(0, 16);
}

/** A pod template's annotations with the fingerprint of its workload's `labels` added. */
export function withLabelsFingerprint(
    labels: Readonly<Record<string, string>>,
    annotations: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
    return { ...(annotations ?? {}), [WORKLOAD_LABELS_ANNOTATION]: labelsFingerprint(labels) };
}
