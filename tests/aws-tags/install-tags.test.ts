import { installTagsError, installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";

const withStatus = (platformStatus: unknown) => ({ status: { platformStatus } });

describe("install-time tags from Infrastructure/cluster", () => {
    test.each<[string, unknown, ReturnType<typeof installTagsFromInfrastructure>]>([
        ["two tags", withStatus({ type: "AWS", aws: { resourceTags: [{ key: "a", value: "1" }, { key: "b", value: "2" }] } }), { tags: { a: "1", b: "2" }, notes: [], problems: [] }],
        ["no resourceTags (installed without propagation)", withStatus({ type: "AWS", aws: { region: "us-east-1" } }), { tags: {}, notes: [], problems: [] }],
        ["no status yet", {}, { tags: {}, notes: ["Infrastructure/cluster has no status.platformStatus: no install-time tags"], problems: [] }],
        ["another cloud", withStatus({ type: "Azure" }), { tags: {}, notes: ['Infrastructure/cluster status.platformStatus.type is "Azure", not "AWS": no install-time tags'], problems: [] }],
        ["resourceTags that are not a list", withStatus({ type: "AWS", aws: { resourceTags: { a: "1" } } }), { tags: {}, notes: [], problems: ['status.platformStatus.aws.resourceTags is not a list: {"a":"1"}'] }],
        [
            "a malformed entry and a repeated key",
            withStatus({ type: "AWS", aws: { resourceTags: [{ key: "a", value: "1" }, { key: "a", value: "2" }, { key: "b" }] } }),
            {
                tags: { a: "1" },
                notes: [],
                problems: ['status.platformStatus.aws.resourceTags[1] repeats the key "a"', 'status.platformStatus.aws.resourceTags[2] is not {key: string, value: string}: {"key":"b"}'],
            },
        ],
        [
            "a comma the API's range bug let through",
            withStatus({ type: "AWS", aws: { resourceTags: [{ key: "team", value: "a,b" }] } }),
            { tags: { team: "a,b" }, notes: [], problems: ['resourceTags "team": value contains invalid characters "," in "a,b"; allowed are letters, digits, spaces and _ . : / = + - @'] },
        ],
    ])("GIVEN %s THEN the tags, notes and problems are exact", (_name, object, expected) => {
        expect(installTagsFromInfrastructure(object)).toEqual(expected);
    });

    test("GIVEN problems THEN the error that stops the update lists them all under the source", () => {
        expect(installTagsError(["x", "y"])).toBe(
            "the install-time tags (Infrastructure/cluster status.platformStatus.aws.resourceTags) cannot be applied to AWS resources:\n  - x\n  - y",
        );
    });
});
