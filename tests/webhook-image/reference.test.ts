import fc from "fast-check";
import {
    ecrRegistry,
    formatRepository,
    isLoopbackRegistry,
    parseImageReference,
    parsePinnedReference,
    parseRepository,
    registryApiHost,
} from "../../components/webhook-image/reference";

const DIGEST = `sha256:${"ab".repeat(32)}`;

describe("repository names", () => {
    test.each([
        [
            "cluster-platform/subscription-webhook",
            { registry: "docker.io", path: "cluster-platform/subscription-webhook", explicitRegistry: false },
        ],
        ["node", { registry: "docker.io", path: "library/node", explicitRegistry: false }],
        ["docker.io/node", { registry: "docker.io", path: "library/node", explicitRegistry: true }],
        ["127.0.0.1:5000/team/webhook", { registry: "127.0.0.1:5000", path: "team/webhook", explicitRegistry: true }],
        ["localhost/webhook", { registry: "localhost", path: "webhook", explicitRegistry: true }],
        [
            "123456789012.dkr.ecr.us-east-1.amazonaws.com/platform/webhook",
            { registry: "123456789012.dkr.ecr.us-east-1.amazonaws.com", path: "platform/webhook", explicitRegistry: true },
        ],
        ["ghcr.io/org/a.b_c__d-e---f", { registry: "ghcr.io", path: "org/a.b_c__d-e---f", explicitRegistry: true }],
    ])("GIVEN %s WHEN parsed THEN host and path are %j", (text, expected) => {
        expect(parseRepository(text)).toEqual({ ok: true, value: expected });
    });

    test.each([
        ["ghcr.io/org/webhook:1.0", "has a tag or digest; give the repository alone"],
        [`ghcr.io/org/webhook@${DIGEST}`, "has a tag or digest; give the repository alone"],
        ["ghcr.io/", "has no repository path after the registry host"],
        ["ghcr.io/Org/webhook", `path component "Org" must be lowercase letters and digits, joined by '.', '_', '__' or dashes`],
        ["ghcr.io/org//webhook", `path component "" must be lowercase letters and digits, joined by '.', '_', '__' or dashes`],
        ["ghcr.io/org/-webhook", `path component "-webhook" must be lowercase letters and digits, joined by '.', '_', '__' or dashes`],
        ["bad_host.io:x/webhook", `registry host "bad_host.io:x" is not a host name with an optional port`],
        [`ghcr.io/${"a".repeat(250)}`, "is 258 characters long, more than 255"],
    ])("GIVEN %s WHEN parsed THEN the problem is %j", (text, problem) => {
        expect(parseRepository(text)).toEqual({ ok: false, problem });
    });

    test("GIVEN any well-formed host and path WHEN parsed and formatted THEN the text comes back", () => {
        const component = fc.stringMatching(/^[a-z0-9]{1,8}(?:[._-][a-z0-9]{1,8}){0,2}$/);
        fc.assert(
            fc.property(
                fc.stringMatching(/^[a-z](?:[a-z0-9-]{0,8}[a-z0-9])?\.[a-z]{2,5}(?::[0-9]{2,5})?$/),
                fc.array(component, { minLength: 1, maxLength: 4 }),
                (host, parts) => {
                    const text = `${host}/${parts.join("/")}`;
                    const parsed = parseRepository(text);
                    expect(parsed.ok && formatRepository(parsed.value)).toBe(text);
                },
            ),
        );
    });
});

describe("image references", () => {
    test("GIVEN a name with tag and digest WHEN parsed THEN all three parts are kept", () => {
        expect(parseImageReference(`gcr.io/distroless/nodejs22-debian12:nonroot@${DIGEST}`)).toEqual({
            ok: true,
            value: { registry: "gcr.io", path: "distroless/nodejs22-debian12", explicitRegistry: true, tag: "nonroot", digest: DIGEST },
        });
        expect(parseImageReference(`127.0.0.1:5000/base/node@${DIGEST}`)).toEqual({
            ok: true,
            value: { registry: "127.0.0.1:5000", path: "base/node", explicitRegistry: true, tag: undefined, digest: DIGEST },
        });
    });

    test.each([
        ["node:22", "must be pinned by digest: `name[:tag]@sha256:<64 hex digits>`"],
        ["node@sha256:abc", 'digest "sha256:abc" is not "sha256:" followed by 64 lowercase hex digits'],
        [`node:.bad@${DIGEST}`, `tag ".bad" is not 1-128 letters, digits, '_', '.' or '-' (not starting with '.' or '-')`],
    ])("GIVEN %s WHEN parsed as a pinned base THEN the problem is %j", (text, problem) => {
        expect(parsePinnedReference(text)).toEqual({ ok: false, problem });
    });
});

describe("registry hosts", () => {
    test.each([
        ["123456789012.dkr.ecr.eu-west-1.amazonaws.com", { accountId: "123456789012", region: "eu-west-1" }],
        ["123456789012.dkr.ecr-fips.us-gov-west-1.amazonaws.com", { accountId: "123456789012", region: "us-gov-west-1" }],
        ["123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn", { accountId: "123456789012", region: "cn-north-1" }],
        ["12345.dkr.ecr.us-east-1.amazonaws.com", undefined],
        ["public.ecr.aws", undefined],
        ["ghcr.io", undefined],
    ])("GIVEN %s WHEN checked for ECR THEN it is %j", (host, expected) => {
        expect(ecrRegistry(host)).toEqual(expected);
    });

    test("GIVEN Docker Hub and loopback hosts WHEN addressed THEN Hub goes to its API host and only loopback uses plain HTTP", () => {
        expect(registryApiHost("docker.io")).toBe("registry-1.docker.io");
        expect(registryApiHost("ghcr.io")).toBe("ghcr.io");
        expect(["127.0.0.1:5000", "localhost:5000", "127.1.2.3", "ghcr.io", "10.0.0.1:5000"].map(isLoopbackRegistry)).toEqual([
            true,
            true,
            true,
            false,
            false,
        ]);
    });
});
