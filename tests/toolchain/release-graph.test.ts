/**
 * The check that kube's go.mod selects exactly the modules k8s.io/kubernetes' release requires
 * (scripts/real/toolchain.ts, releaseGraphProblems): the API server is the real tier's oracle, and a
 * go-openapi/swag raised from 1.36.3's v0.23.0 to v0.26.0 changed its multipleOf verdicts. The
 * go.mod shapes below are those `go mod edit -json` prints for k8s.io/kubernetes v1.36.3's go.mod
 * (staging modules at v0.0.0, replaced by directories) and for tools/kube/go.mod (the staging
 * modules replaced by their published v0.36.3). versionCheckProblems is what real:tools reports
 * before it builds: these problems and the pin problems together, in one failure.
 */
import {
    type GoModJson,
    npmDependencyVersion,
    readLockfile,
    RELEASE_MODULE_GRAPHS,
    releaseGraphProblems,
    versionCheckProblems,
    VERSION_RULES,
} from "../../scripts/real/toolchain";

const release = { module: "k8s.io/kubernetes", version: "v1.36.3" };
const releaseGoMod: GoModJson = {
    Require: [
        { Path: "github.com/go-openapi/swag", Version: "v0.23.0" },
        { Path: "golang.org/x/net", Version: "v0.49.0" },
        { Path: "github.com/onsi/ginkgo/v2", Version: "v2.28.1" },
        { Path: "k8s.io/api", Version: "v0.0.0" },
    ],
    Replace: [{ Old: { Path: "k8s.io/api" }, New: { Path: "./staging/src/k8s.io/api" } }],
};

function toolGoMod(overrides: Record<string, string> = {}, extra: Array<{ Path: string; Version: string }> = []): GoModJson {
    return {
        Require: [
            { Path: "k8s.io/kubernetes", Version: "v1.36.3" },
            { Path: "github.com/go-openapi/swag", Version: overrides["github.com/go-openapi/swag"] ?? "v0.23.0" },
            { Path: "golang.org/x/net", Version: overrides["golang.org/x/net"] ?? "v0.49.0" },
            { Path: "k8s.io/api", Version: "v0.36.3" },
            ...extra,
        ],
        Replace: [{ Old: { Path: "k8s.io/api" }, New: { Path: "k8s.io/api", Version: overrides["k8s.io/api"] ?? "v0.36.3" } }],
    };
}

describe("releaseGraphProblems", () => {
    test("GIVEN kube's go.mod with the release's versions (a module the build does not need left out, staging at v0.36.3) WHEN compared THEN there is no problem", () => {
        expect(releaseGraphProblems("kube", release, toolGoMod(), releaseGoMod)).toEqual([]);
    });

    test("GIVEN a shared module raised, a staging module replaced by another release and a module the release does not require WHEN compared THEN each is named with both versions, all at once", () => {
        const tool = toolGoMod({ "github.com/go-openapi/swag": "v0.26.0", "k8s.io/api": "v0.36.1" }, [
            { Path: "github.com/google/cel-go", Version: "v0.30.0" },
        ]);
        expect(releaseGraphProblems("kube", release, tool, releaseGoMod)).toEqual([
            "tools/kube/go.mod selects github.com/go-openapi/swag v0.26.0, but k8s.io/kubernetes v1.36.3 requires v0.23.0",
            "tools/kube/go.mod selects k8s.io/api v0.36.1, but k8s.io/kubernetes v1.36.3 requires v0.36.3",
            "tools/kube/go.mod requires github.com/google/cel-go v0.30.0, which k8s.io/kubernetes v1.36.3 does not",
        ]);
    });
});

describe("versionCheckProblems", () => {
    test("GIVEN a lockfile moved off a pin and a release-bound go.mod that differs from its release WHEN real:tools checks before building THEN both are named in one list, the pin first", () => {
        const moved = readLockfile();
        (moved.packages as Record<string, { version?: string }>)["node_modules/@pulumi/tls"] = { version: "5.7.0" };
        const asked: string[] = [];
        const problems = versionCheckProblems((tool, module) => {
            asked.push(`${tool} ${module}`);
            return [`tools/${tool}/go.mod selects github.com/go-openapi/swag v0.26.0, but ${module} v1.36.3 requires v0.23.0`];
        }, moved);
        expect(asked).toEqual(RELEASE_MODULE_GRAPHS.map(({ tool, module }) => `${tool} ${module}`));
        expect(problems).toEqual([
            `package.json pins @pulumi/tls ${npmDependencyVersion("@pulumi/tls")}, but ${VERSION_RULES.tls} is 5.7.0`,
            "tools/kube/go.mod selects github.com/go-openapi/swag v0.26.0, but k8s.io/kubernetes v1.36.3 requires v0.23.0",
        ]);
    });

    test("GIVEN the committed lockfile and no go.mod difference reported WHEN checked THEN there is no problem", () => {
        expect(versionCheckProblems(() => [])).toEqual([]);
    });
});
