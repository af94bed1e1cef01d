import { type ServiceAccountRef, AccessReviewCache } from "../../webhook/access-reviews";
import type { AccessDecision } from "../../webhook/decision";
import type { ShareRef } from "../../webhook/driver-access";

const builder: ServiceAccountRef = { namespace: "team-a", name: "builder" };

function harness(answer: (bundle: string) => AccessDecision | Error = () => ({ allowed: true })) {
    let now = 1_000_000;
    const calls: string[] = [];
    const pending: (() => void)[] = [];
    const cache = new AccessReviewCache(
        (serviceAccount, bundle) => {
            calls.push(`${serviceAccount.namespace}/${serviceAccount.name}:${bundle}`);
            return new Promise((resolve, reject) => {
                pending.push(() => {
                    const result = answer(bundle);
                    if (result instanceof Error) reject(result);
                    else resolve(result);
                });
            });
        },
        { allowedTtlMs: 60_000, deniedTtlMs: 10_000, maxEntries: 3, now: () => now },
    );
    const settle = async () => {
        for (const resolve of pending.splice(0)) resolve();
        await new Promise((resolve) => setImmediate(resolve));
    };
    return { cache, calls, settle, advance: (ms: number) => (now += ms) };
}

describe("SubjectAccessReview cache", () => {
    test("GIVEN a cached decision WHEN the ClusterBundle's shares change (a reference renamed) THEN the bundle is reviewed again, with the new shares", async () => {
        let shares: ShareRef[] = [{ resource: "sharedsecrets", name: "cluster-entitlement-old-1" }];
        const reviewed: string[][] = [];
        const cache = new AccessReviewCache(
            async (_serviceAccount, _bundle, asked) => {
                reviewed.push(asked.map((share) => share.name));
                return { allowed: true };
            },
            { allowedTtlMs: 60_000, deniedTtlMs: 10_000, sharesOf: () => shares },
        );
        await cache.decisions(builder, ["cluster"]);
        expect(cache.decisions(builder, ["cluster"])).toEqual(new Map([["cluster", { allowed: true }]]));
        shares = [{ resource: "sharedsecrets", name: "cluster-entitlement-new-2" }];
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Promise);
        await cache.decisions(builder, ["cluster"]);
        expect(reviewed).toEqual([["cluster-entitlement-old-1"], ["cluster-entitlement-new-2"]]);
    });

    test("GIVEN concurrent admissions for one account and bundle WHEN uncached THEN one review is made and then answered synchronously", async () => {
        const { cache, calls, settle } = harness();
        const first = cache.decisions(builder, ["cluster"]);
        const second = cache.decisions(builder, ["cluster"]);
        await settle();
        expect(await first).toEqual(new Map([["cluster", { allowed: true }]]));
        expect(await second).toEqual(new Map([["cluster", { allowed: true }]]));
        expect(calls).toEqual(["team-a/builder:cluster"]);
        expect(cache.decisions(builder, ["cluster"])).toEqual(new Map([["cluster", { allowed: true }]]));
    });

    test("GIVEN an allowed entry past three quarters of its TTL WHEN used THEN it is served while one background review renews it", async () => {
        const { cache, calls, settle, advance } = harness();
        const first = cache.decisions(builder, ["cluster"]);
        await settle();
        await first;
        advance(46_000);
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Map);
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Map);
        expect(calls).toEqual(["team-a/builder:cluster", "team-a/builder:cluster"]);
        await settle();
        advance(30_000);
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Map);
    });

    test("GIVEN a denied entry WHEN its shorter TTL passes THEN the next admission reviews again", async () => {
        const { cache, calls, settle, advance } = harness(() => ({ allowed: false, reason: "no" }));
        const first = cache.decisions(builder, ["cluster"]);
        await settle();
        expect(await first).toEqual(new Map([["cluster", { allowed: false, reason: "no" }]]));
        advance(10_001);
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Promise);
        expect(calls.length).toBe(2);
    });

    test("GIVEN a failing review WHEN answered THEN the error is returned and not cached", async () => {
        const { cache, calls, settle } = harness(() => new Error("connection refused"));
        const first = cache.decisions(builder, ["cluster"]);
        await settle();
        expect(await first).toEqual(new Map([["cluster", { error: "connection refused" }]]));
        expect(cache.decisions(builder, ["cluster"])).toBeInstanceOf(Promise);
        expect(calls.length).toBe(2);
    });

    test("GIVEN more pairs than the bound WHEN cached THEN the oldest are dropped", async () => {
        const { cache, settle } = harness();
        for (const bundle of ["a", "b", "c", "d"]) {
            const pending = cache.decisions(builder, [bundle]);
            await settle();
            await pending;
        }
        expect(cache.size).toBe(3);
        expect(cache.decisions(builder, ["a"])).toBeInstanceOf(Promise);
        expect(cache.decisions(builder, ["d"])).toBeInstanceOf(Map);
    });
});
