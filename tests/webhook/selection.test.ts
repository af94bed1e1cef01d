/**
 * The ClusterBundle access step and the bundle-generations comparison of webhook/selection.ts,
 * called directly on the inputs the admission path cannot easily produce: a decision missing from
 * the reviews, several refusals at once, and bundle-generations annotations a user or another
 * controller wrote by hand (the webhook then writes its own value rather than trusting one it
 * cannot read).
 */
import type { AccessDecision, BundleInfo } from "../../webhook/decision";
import { applyAccess, formatGenerations, sameGenerations } from "../../webhook/selection";

const clusterBundle = (name: string): BundleInfo => ({
    name,
    generation: 1,
    alwaysInject: false,
    entitlements: [{ name: `${name}-entitlement`, namespace: "subscription-sources" }],
    yumRepositories: [],
});

describe("ClusterBundle access (step 4)", () => {
    test("GIVEN a selected ClusterBundle whose access was never reviewed WHEN applied THEN the pod is denied with 500 naming the bundle, never injected unverified", () => {
        expect(applyAccess([{ bundle: clusterBundle("rhel"), requested: true }], new Map(), "team-a/builder")).toEqual({
            allowed: false,
            reason: "AccessCheckFailed",
            code: 500,
            message: 'access of service account team-a/builder to ClusterBundle "rhel" was not reviewed',
        });
    });

    test("GIVEN a review that failed WHEN applied THEN 503 with the error, so the client retries", () => {
        const access = new Map<string, AccessDecision>([["rhel", { error: "connection refused" }]]);
        expect(applyAccess([{ bundle: clusterBundle("rhel"), requested: false }], access, "team-a/builder")).toMatchObject({
            reason: "AccessCheckFailed",
            code: 503,
            message: 'could not review access of service account team-a/builder to ClusterBundle "rhel": connection refused; retry',
        });
    });

    test("GIVEN one requested ClusterBundle refused with a reason WHEN applied THEN 403 gives that reason; GIVEN two THEN both are named and no single reason is given for both", () => {
        const access = new Map<string, AccessDecision>([
            ["rhel", { allowed: false, reason: "no use on share rhel" }],
            ["satellite", { allowed: false, reason: "no get on the ClusterBundle" }],
        ]);
        const one = applyAccess([{ bundle: clusterBundle("rhel"), requested: true }], access, "team-a/builder");
        expect(one).toMatchObject({ reason: "AccessDenied", code: 403 });
        expect((one as { message: string }).message).toMatch(
            /^service account team-a\/builder may not use ClusterBundle "rhel": no use on share rhel \(needs,/,
        );
        const two = applyAccess(
            [
                { bundle: clusterBundle("rhel"), requested: true },
                { bundle: clusterBundle("satellite"), requested: true },
            ],
            access,
            "team-a/builder",
        );
        expect((two as { message: string }).message).toMatch(
            /^service account team-a\/builder may not use ClusterBundle "rhel", "satellite" \(needs,/,
        );
    });

    test("GIVEN an always-inject ClusterBundle refused and another allowed WHEN applied THEN the allowed one is injected and the refused one left out with a warning", () => {
        const access = new Map<string, AccessDecision>([
            ["rhel", { allowed: true }],
            ["satellite", { allowed: false, reason: "no get on the ClusterBundle" }],
        ]);
        expect(
            applyAccess(
                [
                    { bundle: clusterBundle("rhel"), requested: false },
                    { bundle: clusterBundle("satellite"), requested: false },
                ],
                access,
                "team-a/builder",
            ),
        ).toEqual({
            clusterBundles: [clusterBundle("rhel")],
            refused: ["satellite"],
            warnings: [
                'always-inject ClusterBundle "satellite" not injected: service account team-a/builder may not use it: no get on the ClusterBundle',
            ],
        });
    });
});

describe("the bundle-generations annotation", () => {
    const generations = { bundles: { rhel: 2 }, clusterBundles: {} };
    const none = { bundles: {}, clusterBundles: {} };

    test("GIVEN the webhook's own value, re-spaced and reordered WHEN compared THEN it is the same", () => {
        expect(formatGenerations(generations)).toBe('{"bundles":{"rhel":2}}');
        expect(sameGenerations(' { "clusterBundles": {}, "bundles" : { "rhel": 2 } } ', generations)).toBe(true);
        expect(sameGenerations("{}", none)).toBe(true);
    });

    test("GIVEN no value, or one that is not JSON, not an object, has fields of its own or sections that are not maps WHEN compared THEN it is not the same, so the webhook writes its own", () => {
        for (const existing of [
            undefined,
            "not json",
            "[]",
            "null",
            "5",
            '"x"',
            '{"other":1}',
            '{"bundles":{},"other":{}}',
            '{"bundles":null}',
        ]) {
            expect([existing, sameGenerations(existing, none)]).toEqual([existing, false]);
        }
        expect(sameGenerations('{"bundles":{"rhel":1}}', generations)).toBe(false);
    });
});
