/**
 * The reconcile room's rules that stack config checks, the only module of the room config imports
 * (tests/toolchain/import-rules.test.ts): the schedule rule below, and the Stack-name rule and
 * the turn-off refusal of ./names.ts, re-exported. Pure.
 *
 * How often the Pulumi Kubernetes Operator (PKO) runs the stack, and the rule that makes that
 * schedule complete a CA rotation in time.
 *
 * PKO re-runs a Stack every `resyncFrequencySeconds` when `continueResyncOnCommitMatch` is set,
 * with a floor of 60 seconds (pulumi/pulumi-kubernetes-operator operator/api/pulumi/shared/
 * stack_types.go, StackSpec.ResyncFrequencySeconds). A self-signed CA rotation takes three
 * updates (components/certificates/trust.ts), all inside the CA's renewal window of
 * `certificates.renewBeforeDays`: a half-open window of length W holds at least ⌊W / period⌋
 * scheduled runs whatever their phase, so the period must be at most W / 3.
 */
import { CA_ROTATION_RUNS } from "../certificates/expiry";

export { RECONCILE_OFF_BY_OPERATOR, stackNameProblem } from "./names";

const DAY_SECONDS = 24 * 3600;
/** PKO's floor: shorter periods (and 0) run every 60 seconds. */
export const PKO_MIN_RESYNC_SECONDS = 60;
/** The default plans this many chances per rotation step, so failed runs (retried by PKO) still fit. */
export const RUNS_PER_ROTATION_STEP = 4;
/** Drift is checked at least daily by default. */
export const MAX_DEFAULT_RESYNC_SECONDS = DAY_SECONDS;

/** Scheduled runs that surely fall inside a renewal window of `renewBeforeDays`. */
export function runsInWindow(resyncSeconds: number, renewBeforeDays: number): number {
    return Math.floor((renewBeforeDays * DAY_SECONDS) / Math.max(resyncSeconds, PKO_MIN_RESYNC_SECONDS));
}

/** The longest period that still fits a CA rotation (three runs) in the window. */
export function longestResyncSeconds(renewBeforeDays: number): number {
    return Math.floor((renewBeforeDays * DAY_SECONDS) / CA_ROTATION_RUNS);
}

/**
 * The default period: four runs per rotation step inside the renewal window (room for failed
 * runs), at most daily, at least PKO's floor. 30 days → 86400 s (30 runs in the window).
 */
export function derivedResyncSeconds(renewBeforeDays: number): number {
    const roomy = Math.floor((renewBeforeDays * DAY_SECONDS) / (CA_ROTATION_RUNS * RUNS_PER_ROTATION_STEP));
    return Math.max(PKO_MIN_RESYNC_SECONDS, Math.min(MAX_DEFAULT_RESYNC_SECONDS, roomy));
}

/** Why `resyncSeconds` cannot complete a CA rotation within `renewBeforeDays`, or undefined. */
export function scheduleProblem(resyncSeconds: number, renewBeforeDays: number): string | undefined {
    const runs = runsInWindow(resyncSeconds, renewBeforeDays);
    if (runs >= CA_ROTATION_RUNS) {
        return undefined;
    }
    return `${resyncSeconds} fits only ${runs} run${runs === 1 ? "" : "s"} of the stack inside the ${renewBeforeDays}-day renewal window of certificates.renewBeforeDays (${renewBeforeDays}), and a CA rotation needs ${CA_ROTATION_RUNS} updates inside it: use at most ${longestResyncSeconds(renewBeforeDays)} seconds, or raise certificates.renewBeforeDays`;
}
