/**
 * A calendar walk through a full CA rotation with the stack run at PKO's schedule: the tightest
 * schedule `reconcile` accepts for `certificates.renewBeforeDays: 30` (one run every 10 days,
 * three runs per renewal window), with the whole program and real certificates. At every run, and
 * at the last instant before the next one, every certificate a pod may serve must chain to a
 * valid CA in every bundle the API server may hold.
 *
 * Between runs nothing changes (same inputs, same outputs: the tls provider keeps its state), so
 * a run is rendered only when the tls provider would renew something (notAfter minus
 * earlyRenewalHours has passed) or the last update left a rotation under way; the others are
 * checked without rendering.
 */
import { caRotationRunsLeft } from "../../components/certificates/expiry";
import { longestResyncSeconds, scheduleProblem } from "../../components/reconcile/rules";
import { chainsTo, DAY, split, T0, up, Update } from "../helpers/certificate-updates";
import { TlsProviderState } from "../helpers/tls-signer";

const RENEW_BEFORE_DAYS = 30;
const CA_DAYS = 790;

/** Every served certificate chains to every bundle, at `instant`, across the update from `before` to `after`. */
function trustHolds(before: Update | undefined, after: Update, instant: Date): boolean {
    const served = [before?.tlsCrt, after.tlsCrt].filter((c): c is string => c !== undefined);
    const bundles = [...(before?.caBundles ?? []), ...after.caBundles];
    return served.every((certificate) => bundles.every((bundle) => chainsTo(certificate, bundle, instant)));
}

interface Walk {
    untrusted: string[];
    runsInCaWindow: number[];
    replacedFirstCa: boolean;
    finalBundleSize: number;
}

/** Runs the stack every `periodMs` from `phaseDays` after the first update until 20 days past the first CA's expiry. */
async function walk(periodMs: number, phaseDays: number): Promise<Walk> {
    const clock = { now: T0 };
    const tls = new TlsProviderState(clock);
    let current = await up(tls);
    const firstCa = split(current.caCrt)[0];
    const firstCaExpiry = new Date(firstCa.validTo).getTime();
    const runsInCaWindow: number[] = [];
    const untrusted: string[] = [];
    for (let t = T0.getTime() + phaseDays * DAY; t <= T0.getTime() + (CA_DAYS + 20) * DAY; t += periodMs) {
        clock.now = new Date(t);
        const due = tls.dueForRenewal(clock.now);
        // The CA key's replacementTrigger is the rotation clock: replaced together.
        const replaced = due.includes("certificates-ca-rotation-clock") ? [...due, "certificates-ca-key"] : due;
        const underWay = caRotationRunsLeft(current.trust, t, RENEW_BEFORE_DAYS) > 0;
        let next = current;
        if (replaced.length > 0 || underWay) {
            tls.replace(...replaced);
            next = await up(tls, current);
        }
        if (t >= firstCaExpiry - RENEW_BEFORE_DAYS * DAY && t < firstCaExpiry && (replaced.length > 0 || underWay)) {
            runsInCaWindow.push(Math.round((t - T0.getTime()) / DAY));
        }
        if (!trustHolds(current, next, clock.now)) {
            untrusted.push(`during the run on day ${Math.round((t - T0.getTime()) / DAY)}`);
        }
        if (!trustHolds(undefined, next, new Date(t + periodMs - 1))) {
            untrusted.push(`just before the run after day ${Math.round((t - T0.getTime()) / DAY)}`);
        }
        current = next;
    }
    const finalBundle = split(current.caCrt);
    return {
        untrusted,
        runsInCaWindow,
        replacedFirstCa: finalBundle.every((ca) => ca.fingerprint256 !== firstCa.fingerprint256),
        finalBundleSize: finalBundle.length,
    };
}

describe("a CA rotation at PKO's schedule", () => {
    test.each([0, 4, 9])(
        "GIVEN runs every 10 days starting %i days after the first update WHEN the calendar passes the CA's expiry THEN the rotation completes in its window and no instant leaves a served certificate untrusted",
        async (phaseDays) => {
            const periodSeconds = longestResyncSeconds(RENEW_BEFORE_DAYS);
            expect(periodSeconds).toBe(10 * 86400);
            expect(scheduleProblem(periodSeconds, RENEW_BEFORE_DAYS)).toBeUndefined();
            const result = await walk(periodSeconds * 1000, phaseDays);
            expect(result.untrusted).toEqual([]);
            // Three updates inside the CA's window: publish, roll, retire.
            expect(result.runsInCaWindow).toHaveLength(3);
            expect([result.replacedFirstCa, result.finalBundleSize]).toEqual([true, 1]);
        },
        300_000,
    );

    test("GIVEN runs every 40 days, a schedule the rule refuses WHEN the calendar is walked THEN the webhook's certificate outlives its trust anchor", async () => {
        expect(scheduleProblem(40 * 86400, RENEW_BEFORE_DAYS)).toBeDefined();
        const result = await walk(40 * DAY, 0);
        expect(result.untrusted).toContain("just before the run after day 760");
    }, 300_000);
});
