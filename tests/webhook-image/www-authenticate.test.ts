import fc from "fast-check";
import { Challenge, formatChallenges, parseChallenges } from "../../components/webhook-image/www-authenticate";

describe("WWW-Authenticate challenges", () => {
    test.each([
        [
            'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/node:pull"',
            [
                {
                    scheme: "bearer",
                    params: { realm: "https://auth.docker.io/token", service: "registry.docker.io", scope: "repository:library/node:pull" },
                },
            ],
        ],
        [
            'Basic realm="https://123456789012.dkr.ecr.us-east-1.amazonaws.com/",service="ecr.amazonaws.com"',
            [{ scheme: "basic", params: { realm: "https://123456789012.dkr.ecr.us-east-1.amazonaws.com/", service: "ecr.amazonaws.com" } }],
        ],
        [
            'Basic realm="Registry Realm", Bearer realm="https://t/x", error="insufficient_scope", scope="repository:a:pull,push"',
            [
                { scheme: "basic", params: { realm: "Registry Realm" } },
                { scheme: "bearer", params: { realm: "https://t/x", error: "insufficient_scope", scope: "repository:a:pull,push" } },
            ],
        ],
        ['BEARER Realm=token-service , Scope="a\\"b"', [{ scheme: "bearer", params: { realm: "token-service", scope: 'a"b' } }]],
        [
            "Negotiate YWJj==, Basic",
            [
                { scheme: "negotiate", params: { "": "YWJj==" } },
                { scheme: "basic", params: {} },
            ],
        ],
        ["", []],
    ])("GIVEN %s WHEN parsed THEN the challenges are %j", (header, expected) => {
        expect(parseChallenges(header)).toEqual(expected);
    });

    test("GIVEN any list of challenges with quoted parameters WHEN formatted and parsed THEN the same challenges come back", () => {
        const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,8}$/);
        const value = fc.string({ maxLength: 20 }).filter((v) => !/[\r\n]/.test(v));
        const challenge = fc.record({
            scheme: token.map((t) => t.toLowerCase()),
            params: fc.dictionary(
                token.map((t) => t.toLowerCase()),
                value,
                { maxKeys: 4 },
            ),
        });
        fc.assert(
            fc.property(fc.array(challenge, { maxLength: 3 }), (challenges: Challenge[]) => {
                expect(parseChallenges(formatChallenges(challenges))).toEqual(challenges);
            }),
        );
    });
});
