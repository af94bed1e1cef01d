import { provenanceLabels, sourceUrlFromRemote, sourceUrlFromRepositoryField } from "../../components/webhook-image/provenance";

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

    test.each<[unknown, string | undefined]>([
        ["github:example/cluster-platform", "https://github.com/example/cluster-platform"],
        ["example/cluster-platform", "https://github.com/example/cluster-platform"],
        ["gitlab:team/platform", "https://gitlab.com/team/platform"],
        [{ type: "git", url: "git+https://github.com/example/cluster-platform.git" }, "https://github.com/example/cluster-platform"],
        [{ type: "git", url: "git+ssh://git@github.com/example/cluster-platform.git" }, "https://github.com/example/cluster-platform"],
        [undefined, undefined],
        [{ type: "git" }, undefined],
    ])("GIVEN package.json's repository %j WHEN turned into the source label THEN it is %s", (repository, expected) => {
        expect(sourceUrlFromRepositoryField(repository)).toBe(expected);
    });

    test("GIVEN a provenance WHEN labelled THEN only the known parts become labels, under their OCI and project names", () => {
        expect(provenanceLabels({ source: "https://github.com/example/cluster-platform", sourceTree: "sha256:ab" })).toEqual({
            "org.opencontainers.image.source": "https://github.com/example/cluster-platform",
            "dev.cluster-platform.source-tree": "sha256:ab",
        });
        expect(provenanceLabels({})).toEqual({});
    });
});
