/**
 * The real tier's tool recipes (scripts/real/toolchain.ts): pins read from the tool modules'
 * go.mod files, the version ldflags the binaries need, the versions each built binary must report
 * (one provider version everywhere: the lockfile's), and a cache key that changes exactly when an
 * input does. The builds and the binaries' answers run in the real tier (npm run real:tools).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
    cacheKey,
    kubernetesProviderRelease,
    kubeVersionLdflags,
    lockfileVersion,
    npmDependencyVersion,
    pinProblems,
    readLockfile,
    requiredVersion,
    type ToolSpec,
    toolSpecs,
    TOOLS_ROOT,
    VERSION_RULES,
    versionIn,
    versionProblems,
} from "../../scripts/real/toolchain";
import { ROOT } from "../helpers/root";

const lock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> };

describe("pins read from go.mod", () => {
    const goMod = [
        "module example/tools",
        "",
        "require github.com/one/single v1.2.3",
        "",
        "require (",
        "\tgithub.com/pulumi/pulumi-kubernetes/provider/v4 v4.0.0-20260115033456-f47bc2d6f199",
        "\tgithub.com/pulumi/pulumi-kubernetes/sdk/v4 v4.25.0",
        "\tgithub.com/other/thing v0.1.0 // indirect",
        ")",
        "replace k8s.io/api => k8s.io/api v0.36.3",
    ].join("\n");

    test.each([
        ["github.com/one/single", "v1.2.3"],
        ["github.com/pulumi/pulumi-kubernetes/sdk/v4", "v4.25.0"],
        ["github.com/other/thing", "v0.1.0"],
    ])("GIVEN a go.mod WHEN %s's version is read THEN it is %s", (module, version) => {
        expect(requiredVersion(goMod, module)).toBe(version);
    });

    test("GIVEN a module only replaced, not required WHEN its version is read THEN the error names it", () => {
        expect(() => requiredVersion(goMod, "k8s.io/api")).toThrow("tools: go.mod does not require k8s.io/api");
    });

    test("GIVEN the provider's pseudo-version of tag v4.25.0's commit and sdk/v4 v4.25.0 WHEN the release is derived THEN it is 4.25.0", () => {
        expect(kubernetesProviderRelease(goMod)).toBe("4.25.0");
    });

    test("GIVEN an sdk/v4 of another release than the provider commit WHEN the release is derived THEN the error names both", () => {
        expect(() => kubernetesProviderRelease(goMod.replace("sdk/v4 v4.25.0", "sdk/v4 v4.29.0"))).toThrow(
            "tools: pulumi-kubernetes provider commit f47bc2d6f199 is release 4.25.0, but go.mod requires sdk/v4 4.29.0",
        );
    });

    test("GIVEN a provider commit with no recorded release WHEN the release is derived THEN the error names the commit", () => {
        expect(() => kubernetesProviderRelease(goMod.replace("f47bc2d6f199", "0123456789ab"))).toThrow(
            "tools: no release is recorded for pulumi-kubernetes provider commit 0123456789ab (v4.0.0-20260115033456-0123456789ab)",
        );
    });
});

describe("the committed tool modules", () => {
    test("GIVEN the tools WHEN listed THEN each has a committed go.mod and go.sum, and together they provide every executable the real tier runs", () => {
        const specs = toolSpecs();
        for (const spec of specs) {
            expect([
                spec.name,
                fs.existsSync(path.join(TOOLS_ROOT, spec.dir, "go.mod")),
                fs.existsSync(path.join(TOOLS_ROOT, spec.dir, "go.sum")),
            ]).toEqual([spec.name, true, true]);
        }
        expect(specs.flatMap((s) => s.binaries).sort()).toEqual(
            [
                "cert-manager",
                "etcd",
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
                "kubectl",
                "kwok",
                "pulumi",
                "pulumi-language-nodejs",
                "pulumi-resource-kubernetes",
                "pulumi-resource-pulumi-nodejs",
                "pulumi-resource-tls",
            ].sort(),
        );
    });

    test("GIVEN every tool's outputs WHEN linked into one REAL_BIN THEN no two tools contribute the same top-level name (linkBin would fail on the second)", () => {
        const entries = toolSpecs().flatMap((spec) =>
            [
                ...new Set([
                    ...spec.binaries,
                    ...Object.keys(spec.scripts ?? {}),
                    ...(spec.moduleFiles ?? []).filter((f) => f.into === "output").map((f) => (f.under ?? "").split("/")[0]),
                ]),
            ].map((entry) => `${entry} (${spec.name})`),
        );
        const names = entries.map((e) => e.split(" ")[0]);
        expect(entries.filter((_, i) => names.indexOf(names[i]) !== i)).toEqual([]);
        expect(names).toEqual(expect.arrayContaining(["cert-manager-crds", "crds", "kwok-stages"]));
    });

    test("GIVEN the lockfile WHEN the CLI and TLS provider pins are read THEN the CLI is the Node SDK's release and the TLS provider is @pulumi/tls's", () => {
        const pulumiGoMod = fs.readFileSync(path.join(TOOLS_ROOT, "pulumi", "go.mod"), "utf8");
        expect(requiredVersion(pulumiGoMod, "github.com/pulumi/pulumi/pkg/v3")).toBe(
            `v${lock.packages["node_modules/@pulumi/pulumi"].version}`,
        );
        expect(requiredVersion(pulumiGoMod, "github.com/pulumi/pulumi/sdk/v3")).toBe(
            `v${lock.packages["node_modules/@pulumi/pulumi"].version}`,
        );
        expect(npmDependencyVersion("@pulumi/tls")).toBe(lock.packages["node_modules/@pulumi/tls"].version);
        const tls = toolSpecs().find((s) => s.name === "tls-provider") as ToolSpec;
        expect(tls.builds[0].ldflags).toContain(`-X main.version=${lock.packages["node_modules/@pulumi/tls"].version}`);
    });

    test("GIVEN Kubernetes v1.36.3 WHEN its ldflags are made THEN both version packages get the release and a fixed build date", () => {
        expect(kubeVersionLdflags("v1.36.3")).toEqual(
            ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"].flatMap((pkg) => [
                `-X ${pkg}.gitVersion=v1.36.3`,
                `-X ${pkg}.gitMajor=1`,
                `-X ${pkg}.gitMinor=36`,
                `-X ${pkg}.gitTreeState=clean`,
                `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
            ]),
        );
    });
});

describe("one version of each Pulumi package and its plugin", () => {
    const withKubernetes = (copies: Record<string, string>) => ({
        packages: { "": { version: "0.1.0" }, ...Object.fromEntries(Object.entries(copies).map(([key, version]) => [key, { version }])) },
    });

    test("GIVEN the lockfile WHEN the version of each SDK package is resolved THEN it is the top-level entry's", () => {
        expect(["@pulumi/pulumi", "@pulumi/kubernetes", "@pulumi/tls"].map((name) => lockfileVersion(lock, name))).toEqual([
            lock.packages["node_modules/@pulumi/pulumi"].version,
            lock.packages["node_modules/@pulumi/kubernetes"].version,
            lock.packages["node_modules/@pulumi/tls"].version,
        ]);
    });

    test("GIVEN a nested copy of the same version WHEN resolved THEN that version; GIVEN one of another version THEN the error names both and where", () => {
        expect(
            lockfileVersion(
                withKubernetes({ "node_modules/@pulumi/kubernetes": "4.25.0", "node_modules/a/node_modules/@pulumi/kubernetes": "4.25.0" }),
                "@pulumi/kubernetes",
            ),
        ).toBe("4.25.0");
        expect(() =>
            lockfileVersion(
                withKubernetes({ "node_modules/@pulumi/kubernetes": "4.25.0", "node_modules/a/node_modules/@pulumi/kubernetes": "4.34.2" }),
                "@pulumi/kubernetes",
            ),
        ).toThrow(
            "tools: package-lock.json resolves @pulumi/kubernetes to 4.25.0 and also to 4.34.2 (node_modules/a/node_modules/@pulumi/kubernetes): one version of each Pulumi package, or the program asks for two plugin versions",
        );
        expect(() =>
            lockfileVersion(withKubernetes({ "node_modules/@pulumi/kubernetes-cert-manager": "1.0.0" }), "@pulumi/kubernetes"),
        ).toThrow("tools: package-lock.json resolves no version of @pulumi/kubernetes (no node_modules/@pulumi/kubernetes entry)");
    });

    test.each([
        ["pulumi version", "3.260.0", "v3.260.0\n"],
        ["pulumi-language-nodejs -version", "3.260.0", "3.260.0\n"],
        ["kube-apiserver --version", "1.36.3", "Kubernetes v1.36.3\n"],
        ["kubectl version --client", "1.36.3", "Client Version: v1.36.3\nKustomize Version: v5.8.1\n"],
        ["etcd --version", "3.6.14", "etcd Version: 3.6.14\nGit SHA: Not provided\nGo Version: go1.26.8\n"],
        ["kwok --version", "0.8.0", "kwok version v0.8.0 go1.26.8 (linux/amd64)\n"],
        ["a provider's GetPluginInfo", "4.25.0", "4.25.0"],
        ["a pre-release", "4.0.0-alpha.1", "v4.0.0-alpha.1+dirty"],
    ])("GIVEN what %s prints WHEN its version is read THEN it is %s", (_what, version, output) => {
        expect(versionIn(output)).toBe(version);
    });

    test("GIVEN the tools WHEN their version checks are listed THEN the CLI and its host must report @pulumi/pulumi's version, each provider its SDK's, the control plane and cert-manager the go.mod pins", () => {
        const goPin = (dir: string, module: string) =>
            requiredVersion(fs.readFileSync(path.join(TOOLS_ROOT, dir, "go.mod"), "utf8"), module).slice(1);
        const checks = toolSpecs().flatMap((spec) =>
            spec.versions.map((c) => [spec.name, c.binary, c.ask === "GetPluginInfo" ? c.ask : c.ask.join(" "), c.expected]),
        );
        const sdk = lock.packages["node_modules/@pulumi/pulumi"].version;
        const kube = goPin("kube", "k8s.io/kubernetes");
        expect(checks).toEqual([
            ["pulumi", "pulumi", "version", sdk],
            ["pulumi", "pulumi-language-nodejs", "-version", sdk],
            [
                "kubernetes-provider",
                "pulumi-resource-kubernetes",
                "GetPluginInfo",
                lock.packages["node_modules/@pulumi/kubernetes"].version,
            ],
            ["tls-provider", "pulumi-resource-tls", "GetPluginInfo", lock.packages["node_modules/@pulumi/tls"].version],
            ["kube", "kube-apiserver", "--version", kube],
            ["kube", "kube-controller-manager", "--version", kube],
            ["kube", "kube-scheduler", "--version", kube],
            ["kube", "kubectl", "version --client", kube],
            ["etcd", "etcd", "--version", goPin("etcd", "go.etcd.io/etcd/server/v3")],
            ["kwok", "kwok", "--version", goPin("kwok", "sigs.k8s.io/kwok")],
            ["cert-manager", "cert-manager", "version", goPin("cert-manager", "github.com/cert-manager/cert-manager")],
        ]);
    });

    test("GIVEN a kubernetes provider reporting another version than the lockfile's @pulumi/kubernetes WHEN checked THEN the problem names the binary, both versions and the rule; the same version passes", () => {
        const spec = toolSpecs().find((s) => s.name === "kubernetes-provider") as ToolSpec;
        const expected = lock.packages["node_modules/@pulumi/kubernetes"].version;
        expect(versionProblems(spec.name, spec.versions, { "pulumi-resource-kubernetes": expected })).toEqual([]);
        expect(versionProblems(spec.name, spec.versions, { "pulumi-resource-kubernetes": "4.34.2" })).toEqual([
            `kubernetes-provider: pulumi-resource-kubernetes reports version 4.34.2 in GetPluginInfo, but ${VERSION_RULES.kubernetes} is ${expected}`,
        ]);
        expect(versionProblems(spec.name, spec.versions, {})).toEqual([
            `kubernetes-provider: pulumi-resource-kubernetes reports no version in GetPluginInfo, but ${VERSION_RULES.kubernetes} is ${expected}`,
        ]);
    });

    test("GIVEN a CLI reporting another version than @pulumi/pulumi WHEN checked THEN the problem names the command it asked", () => {
        const spec = toolSpecs().find((s) => s.name === "pulumi") as ToolSpec;
        const sdk = lock.packages["node_modules/@pulumi/pulumi"].version;
        expect(versionProblems(spec.name, spec.versions, { pulumi: "3.265.0", "pulumi-language-nodejs": sdk })).toEqual([
            `pulumi: pulumi reports version 3.265.0 (pulumi version), but ${VERSION_RULES.cli} is ${sdk}`,
        ]);
    });

    test("GIVEN the committed pins and lockfile WHEN compared before building THEN they agree; GIVEN the lockfile moved to another @pulumi/kubernetes, @pulumi/pulumi or @pulumi/tls THEN each disagreement is named", () => {
        expect(pinProblems()).toEqual([]);
        const moved = readLockfile();
        const packages = moved.packages as Record<string, { version?: string }>;
        packages["node_modules/@pulumi/kubernetes"] = { version: "4.34.2" };
        packages["node_modules/@pulumi/pulumi"] = { version: "3.265.0" };
        packages["node_modules/@pulumi/tls"] = { version: "5.7.0" };
        const pulumiGoMod = fs.readFileSync(path.join(TOOLS_ROOT, "pulumi", "go.mod"), "utf8");
        const cli = requiredVersion(pulumiGoMod, "github.com/pulumi/pulumi/pkg/v3").slice(1);
        const provider = kubernetesProviderRelease(fs.readFileSync(path.join(TOOLS_ROOT, "kubernetes-provider", "go.mod"), "utf8"));
        expect(pinProblems(moved)).toEqual([
            `tools/pulumi/go.mod requires github.com/pulumi/pulumi/pkg/v3 ${cli}, but ${VERSION_RULES.cli} is 3.265.0`,
            `tools/pulumi/go.mod requires github.com/pulumi/pulumi/sdk/v3 ${cli}, but ${VERSION_RULES.cli} is 3.265.0`,
            `tools/kubernetes-provider/go.mod builds provider release ${provider}, but ${VERSION_RULES.kubernetes} is 4.34.2`,
            `package.json pins @pulumi/tls ${npmDependencyVersion("@pulumi/tls")}, but ${VERSION_RULES.tls} is 5.7.0`,
        ]);
    });
});

describe("the cache key", () => {
    let root: string;
    const spec: ToolSpec = { name: "demo", dir: "demo", binaries: ["demo"], builds: [{ packages: ["."], ldflags: ["-s"] }], versions: [] };

    beforeEach(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "toolchain-"));
        fs.mkdirSync(path.join(root, "demo", "assets"), { recursive: true });
        fs.writeFileSync(path.join(root, "demo", "go.mod"), "module demo\n");
        fs.writeFileSync(path.join(root, "demo", "go.sum"), "example.com/a v1.0.0 h1:abc=\n");
        fs.writeFileSync(path.join(root, "demo", "main.go"), "package main\n");
    });

    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    test("GIVEN the same inputs twice WHEN keyed THEN the keys are equal; generated assets do not count", () => {
        const first = cacheKey(spec, "go1.26.8", root);
        fs.writeFileSync(path.join(root, "demo", "assets", "schema.json"), "{}");
        expect(cacheKey(spec, "go1.26.8", root)).toBe(first);
    });

    test.each([
        ["go.sum", () => fs.appendFileSync(path.join(root, "demo", "go.sum"), "example.com/b v1.0.0 h1:def=\n"), "go1.26.8"],
        ["a main", () => fs.appendFileSync(path.join(root, "demo", "main.go"), "// changed\n"), "go1.26.8"],
        ["the Go version", () => undefined, "go1.26.9"],
    ])("GIVEN %s changed WHEN keyed THEN the key changes", (_what, change, go) => {
        const before = cacheKey(spec, "go1.26.8", root);
        change();
        expect(cacheKey(spec, go, root)).not.toBe(before);
    });

    test("GIVEN every tool's recipe WHEN it goes through JSON THEN nothing is lost: no functions, whose text would differ between tsx and jest's swc and split the cache", () => {
        for (const spec of toolSpecs()) {
            expect(JSON.parse(JSON.stringify(spec))).toEqual(spec);
        }
    });

    test("GIVEN a recipe with other ldflags WHEN keyed THEN the key changes", () => {
        const other: ToolSpec = { ...spec, builds: [{ packages: ["."], ldflags: ["-s", "-w"] }] };
        expect(cacheKey(other, "go1.26.8", root)).not.toBe(cacheKey(spec, "go1.26.8", root));
    });
});
