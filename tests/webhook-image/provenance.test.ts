import { sourceUrlFromRemote } from "../../components/webhook-image/provenance";

describe("image provenance", () => {
    test.each([
        ["git@github.com:example/cluster-platform.git", "https://github.com/example/cluster-platform"],
        ["https://github.com/example/cluster-platform.git", "https://github.com/example/cluster-platform"],
        ["https://x-access-token:ghp_secret@github.com/example/cluster-platform", "https://github.com/example/cluster-platform"],
        ["ssh://git@gitlab.example.com:2222/team/platform.git", "https://gitlab.example.com/team/platform"],
        ["/srv/git/cluster-platform", undefined],
        ["file:///srv/git/cluster-platform", undefined],
    ])("GIVEN the remote %s WHEN turned into the source label THEN it is %s, without credentials", (remote, expected) => {
        expect(sourceUrlFromRemote(remote)).toBe(expected);
    });
});
