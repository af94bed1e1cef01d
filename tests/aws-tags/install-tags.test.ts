import { installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";

const withStatus = (platformStatus: unknown) => ({ status: { platformStatus } });
const FIELD = "Infrastructure/cluster status.platformStatus.aws.resourceTags";

describe("install-time tags from Infrastructure/cluster", () => {
    test.each<[string, unknown, ReturnType<typeof installTagsFromInfrastructure>]>([
        [
            "two tags",
            withStatus({
                type: "AWS",
                aws: {
                    resourceTags: [
                        { key: "a", value: "1" },
                        { key: "b", value: "2" },
                    ],
                },
            }),
            { tags: { a: "1", b: "2" }, notes: [] },
        ],
        [
            "no resourceTags (installed without propagation)",
            withStatus({ type: "AWS", aws: { region: "us-east-1" } }),
            { tags: {}, notes: [] },
        ],
        ["no status yet", {}, { tags: {}, notes: ["Infrastructure/cluster has no status.platformStatus: no install-time tags"] }],
        [
            "another cloud",
            withStatus({ type: "Azure" }),
            { tags: {}, notes: ['Infrastructure/cluster status.platformStatus.type is "Azure", not "AWS": no install-time tags'] },
        ],
        [
            "resourceTags that are not a list",
            withStatus({ type: "AWS", aws: { resourceTags: { a: "1" } } }),
            { tags: {}, notes: [`${FIELD} is not a list: {"a":"1"}; no install-time tags are applied`] },
        ],
        [
            "a malformed entry and a repeated key",
            withStatus({ type: "AWS", aws: { resourceTags: [{ key: "a", value: "1" }, { key: "a", value: "2" }, { key: "b" }] } }),
            {
                tags: { a: "1" },
                notes: [
                    `${FIELD}[1] repeats the key "a"; the first value "1" is applied`,
                    `${FIELD}[2] is not {key: string, value: string}: {"key":"b"}; left out`,
                ],
            },
        ],
        [
            "a comma the API's range bug let through, beside a valid tag",
            withStatus({
                type: "AWS",
                aws: {
                    resourceTags: [
                        { key: "team", value: "a,b" },
                        { key: "owner", value: "x" },
                    ],
                },
            }),
            {
                tags: { owner: "x" },
                notes: [
                    `${FIELD} "team": value contains invalid characters "," in "a,b"; allowed are letters, digits, spaces and _ . : / = + - @; this tag is left out, the other install-time tags are applied`,
                ],
            },
        ],
        [
            "a key in a reserved namespace",
            withStatus({ type: "AWS", aws: { resourceTags: [{ key: "kubernetes.io/x", value: "1" }] } }),
            {
                tags: {},
                notes: [
                    `${FIELD} "kubernetes.io/x": key is in the kubernetes.io namespace, which the platform reserves; this tag is left out, the other install-time tags are applied`,
                ],
            },
        ],
    ])("GIVEN %s THEN the tags applied and the warnings are exact", (_name, object, expected) => {
        expect(installTagsFromInfrastructure(object)).toEqual(expected);
    });
});
