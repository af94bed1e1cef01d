/**
 * The real tier's tools: what each is built from, how, and where its cache key comes from.
 *
 * Every tool is a Go module of the project's own under tools/<dir> (go.mod and go.sum committed,
 * no upstream code): it requires the upstream module at a pinned version and builds that
 * module's command, or a small main of its own against the module's public API where upstream's
 * main cannot be built from the module (see each tool's note). Versions are read from the go.mod
 * files, so a pin lives in one place. Facts and the proxy's gaps: docs/real-tier.md.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const REPO_ROOT = path.resolve(__dirname, "..", "..");
export const TOOLS_ROOT = path.join(REPO_ROOT, "tools");

/**
 * Compiler flags every tool's build and tests take, part of each tool's cache key. The builds link
 * with `-s -w`, which drops DWARF from the binaries; `-dwarf=false` stops the compiler generating
 * it per package first: 6 % less CPU and 7 % less time for the same binaries (kwok from an empty
 * build cache: 371 s of CPU in 194 s generating it, 348 s in 180 s not, 2026-11-28), on a cold CI
 * machine, where building the tools is 40 % of the run.
 */
export const GO_COMPILE_FLAGS: readonly string[] = ["-gcflags=all=-dwarf=false"];

/** One `go build` of a tool module. */
export interface GoBuild {
    /** Package paths, as `go build` takes them, relative to the tool's module. */
    readonly packages: readonly string[];
    /** `-o` target name when a single package builds a binary named other than its last path element. */
    readonly output?: string;
    readonly tags?: readonly string[];
    readonly ldflags: readonly string[];
    /** Packages of the tool's own module whose Go tests run (`go test`) once the build succeeds. */
    readonly tests?: readonly string[];
}

/**
 * What a built binary must say its version is, and why. The answer is the binary's own: a flag's
 * output, or for a provider the version it reports to the engine in GetPluginInfo (the version the
 * engine compares with what the program's SDK asks for: pulumi/pulumi pkg/host/host.go, "resource
 * plugin %s is expected to have version >=%s").
 */
export interface VersionCheck {
    readonly binary: string;
    /** Arguments that print the version, or "GetPluginInfo" for a plugin asked over gRPC. */
    readonly ask: readonly string[] | "GetPluginInfo";
    /** The version it must report (semver, no leading v). */
    readonly expected: string;
    /** Where the expected version comes from, for the failure message. */
    readonly rule: string;
}

/** Files copied out of a required module into the tool's build or output directory. */
export interface ModuleFiles {
    readonly module: string;
    /** Paths inside the module, relative to its root. */
    readonly files: readonly string[];
    /** Where they go: beside the sources (embedded by the tool's main) or into the cached output. */
    readonly into: "sources" | "output";
    /** Directory under the target, default the target itself. */
    readonly under?: string;
    /**
     * Sets the top-level `version` of each copied `schema.json` to this (upstream's generate.go does
     * it at release time). Data, not a function: the recipe is hashed into the cache key, and a
     * function's text differs between the compilers that load this module (tsx, jest's swc).
     */
    readonly schemaVersion?: string;
}

export interface ToolSpec {
    /** The tool's name in messages and its cache directory's prefix. */
    readonly name: string;
    /** Its module directory under tools/. */
    readonly dir: string;
    /** The executables it contributes to REAL_BIN. */
    readonly binaries: readonly string[];
    readonly builds: readonly GoBuild[];
    readonly moduleFiles?: readonly ModuleFiles[];
    /** Text files written into the output directory (a launcher script), by name, with mode 0755. */
    readonly scripts?: Readonly<Record<string, string>>;
    /** The versions its binaries must report; the first is the tool's version in real:tools' lines. */
    readonly versions: readonly VersionCheck[];
}

/** A `require` line's version in a tool's go.mod, or an error naming the module. */
export function requiredVersion(goMod: string, module: string): string {
    const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, "m").exec(goMod);
    if (!match) {
        throw new Error(`tools: go.mod does not require ${module}`);
    }
    return match[1];
}

/** The exact version package.json pins for a dependency. */
export function npmDependencyVersion(name: string): string {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    const version = manifest.dependencies[name];
    if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
        throw new Error(`tools: package.json must pin ${name} to an exact version, found ${version}`);
    }
    return version;
}

/**
 * The version package-lock.json resolves for a package: its top-level entry. Every other copy of it
 * in the tree (nested under another package's node_modules) must be the same version: the language
 * host reports each copy to the engine (GetRequiredPackages), so a second version would be a second
 * plugin version the program asks for.
 */
export function lockfileVersion(lock: { packages?: Record<string, { version?: string }> }, name: string): string {
    const copies = Object.entries(lock.packages ?? {}).filter(
        ([key]) => key === `node_modules/${name}` || key.endsWith(`/node_modules/${name}`),
    );
    const top = lock.packages?.[`node_modules/${name}`]?.version;
    if (!top) {
        throw new Error(`tools: package-lock.json resolves no version of ${name} (no node_modules/${name} entry)`);
    }
    const others = copies.filter(([, entry]) => entry.version !== top);
    if (others.length > 0) {
        throw new Error(
            `tools: package-lock.json resolves ${name} to ${top} and also to ${others.map(([key, entry]) => `${entry.version} (${key})`).join(", ")}: one version of each Pulumi package, or the program asks for two plugin versions`,
        );
    }
    return top;
}

/** package-lock.json of the repository, parsed. */
export function readLockfile(): { packages?: Record<string, { version?: string }> } {
    return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package-lock.json"), "utf8")) as {
        packages?: Record<string, { version?: string }>;
    };
}

/** The first version in a tool's output: "v3.260.0" → "3.260.0", "Kubernetes v1.36.3" → "1.36.3". */
export function versionIn(output: string): string | undefined {
    return /\bv?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(output)?.[1];
}

/** Each check whose reported version differs from the expected one, as a sentence naming the rule. */
export function versionProblems(
    tool: string,
    checks: readonly VersionCheck[],
    reported: Readonly<Record<string, string | undefined>>,
): string[] {
    return checks
        .filter((check) => reported[check.binary] !== check.expected)
        .map((check) => {
            const how = check.ask === "GetPluginInfo" ? "in GetPluginInfo" : `(${[check.binary, ...check.ask].join(" ")})`;
            const got = reported[check.binary] === undefined ? "no version" : `version ${reported[check.binary]}`;
            return `${tool}: ${check.binary} reports ${got} ${how}, but ${check.rule} is ${check.expected}`;
        });
}

/** A tool's go.mod text. */
export function goModOf(dir: string): string {
    return fs.readFileSync(path.join(TOOLS_ROOT, dir, "go.mod"), "utf8");
}

/** "v4.0.0-20260115033456-f47bc2d6f199" → "4.0.0-20260115033456-f47bc2d6f199"; "v3.260.0" → "3.260.0". */
export function semverOf(goVersion: string): string {
    return goVersion.replace(/^v/, "");
}

/**
 * The release an untagged provider module pseudo-version stands for. The kubernetes provider's
 * module has no provider/v4.x tags (pulumi-kubernetes tags only the root and sdk/): the commit of
 * root tag v4.25.0 is f47bc2d6f199, and the matching sdk/v4 tag is required beside it.
 */
export const KUBERNETES_PROVIDER_RELEASE_BY_COMMIT: Readonly<Record<string, string>> = {
    f47bc2d6f199: "4.25.0",
};

export function kubernetesProviderRelease(goMod: string): string {
    const pseudo = requiredVersion(goMod, "github.com/pulumi/pulumi-kubernetes/provider/v4");
    const commit = pseudo.split("-").pop() ?? "";
    const release = KUBERNETES_PROVIDER_RELEASE_BY_COMMIT[commit];
    if (!release) {
        throw new Error(`tools: no release is recorded for pulumi-kubernetes provider commit ${commit} (${pseudo})`);
    }
    const sdk = semverOf(requiredVersion(goMod, "github.com/pulumi/pulumi-kubernetes/sdk/v4"));
    if (sdk !== release) {
        throw new Error(`tools: pulumi-kubernetes provider commit ${commit} is release ${release}, but go.mod requires sdk/v4 ${sdk}`);
    }
    return release;
}

export const CERT_MANAGER_MODULE = "github.com/cert-manager/cert-manager";

/** The ldflags kube components and kwokctl read their version from (kubernetes hack/lib/version.sh). */
export function kubeVersionLdflags(version: string): string[] {
    const [major, minor] = semverOf(version).split(".");
    return ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"].flatMap((pkg) => [
        `-X ${pkg}.gitVersion=${version}`,
        `-X ${pkg}.gitMajor=${major}`,
        `-X ${pkg}.gitMinor=${minor}`,
        `-X ${pkg}.gitTreeState=clean`,
        // A fixed date keeps the binaries, and so the cache, reproducible.
        `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
    ]);
}

/**
 * The dynamic-provider launcher the Pulumi distribution ships beside the CLI: it runs the Node SDK's
 * dynamic provider with node, resolved from the program's directory (pulumi/pulumi
 * sdk/nodejs/dist/pulumi-resource-pulumi-nodejs). Written here, not copied.
 */
const DYNAMIC_PROVIDER_LAUNCHER = `#!/bin/sh
# Runs @pulumi/pulumi's dynamic provider from the program's node_modules.
entry=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider"))') || exit 1
exec node "$entry" "$@"
`;

/** Why each tool's version is what it is: the rules real:tools checks the built binaries against. */
export const VERSION_RULES = {
    cli: "the version package-lock.json resolves for @pulumi/pulumi (the CLI is built from pkg/v3 of the Node SDK's release)",
    kubernetes: "the version package-lock.json resolves for @pulumi/kubernetes (the SDK asks for its own version)",
    tls: "the version package-lock.json resolves for @pulumi/tls (the SDK asks for its own version)",
    goMod: (module: string) => `the ${module} version tools/*/go.mod pins`,
} as const;

/**
 * The pins of the tool modules that must agree with package-lock.json before anything is built: the
 * CLI's pkg/v3 and sdk/v3 with @pulumi/pulumi, the kubernetes provider's release with
 * @pulumi/kubernetes, the tls provider's version (package.json) with @pulumi/tls. Each problem names both.
 */
export function pinProblems(lock = readLockfile()): string[] {
    const problems: string[] = [];
    const sdk = lockfileVersion(lock, "@pulumi/pulumi");
    const pulumiGoMod = goModOf("pulumi");
    for (const module of ["github.com/pulumi/pulumi/pkg/v3", "github.com/pulumi/pulumi/sdk/v3"]) {
        const pinned = semverOf(requiredVersion(pulumiGoMod, module));
        if (pinned !== sdk) {
            problems.push(`tools/pulumi/go.mod requires ${module} ${pinned}, but ${VERSION_RULES.cli} is ${sdk}`);
        }
    }
    const provider = kubernetesProviderRelease(goModOf("kubernetes-provider"));
    const kubernetes = lockfileVersion(lock, "@pulumi/kubernetes");
    if (provider !== kubernetes) {
        problems.push(
            `tools/kubernetes-provider/go.mod builds provider release ${provider}, but ${VERSION_RULES.kubernetes} is ${kubernetes}`,
        );
    }
    const tls = lockfileVersion(lock, "@pulumi/tls");
    if (npmDependencyVersion("@pulumi/tls") !== tls) {
        problems.push(`package.json pins @pulumi/tls ${npmDependencyVersion("@pulumi/tls")}, but ${VERSION_RULES.tls} is ${tls}`);
    }
    return problems;
}

/** A go.mod as `go mod edit -json` prints it (the fields read here). */
export interface GoModJson {
    readonly Require?: ReadonlyArray<{ readonly Path: string; readonly Version: string }>;
    readonly Replace?: ReadonlyArray<{
        readonly Old: { readonly Path: string };
        readonly New: { readonly Path: string; readonly Version?: string };
    }>;
}

/**
 * Tools whose go.mod must select exactly the modules their upstream release's go.mod requires, not
 * merely versions that compile: kube, because the API server is the real tier's oracle. Raising its
 * go-openapi/swag from 1.36.3's v0.23.0 to v0.26.0 (to share a build cache with cert-manager)
 * changed its `multipleOf` verdicts, and structural-schema.real.ts's differential caught it only in
 * a cold run (docs/real-tier.md, "Shared module versions").
 */
export const RELEASE_MODULE_GRAPHS: ReadonlyArray<{ readonly tool: string; readonly module: string }> = [
    { tool: "kube", module: "k8s.io/kubernetes" },
];

/**
 * Each requirement of a tool's go.mod that differs from the release's own: a module at another
 * version, or one the release does not require. The release's local staging modules (`v0.0.0`,
 * replaced by directories) are expected at the release's staging version (v1.36.3 → v0.36.3).
 */
export function releaseGraphProblems(
    tool: string,
    release: { readonly module: string; readonly version: string },
    toolGoMod: GoModJson,
    releaseGoMod: GoModJson,
): string[] {
    const staging = release.version.replace(/^v\d+\./, "v0.");
    const wanted = new Map((releaseGoMod.Require ?? []).map((r) => [r.Path, r.Version === "v0.0.0" ? staging : r.Version]));
    const replaced = new Map(
        (toolGoMod.Replace ?? []).flatMap((r) => (r.New.Version === undefined ? [] : [[r.Old.Path, r.New.Version] as const])),
    );
    const problems: string[] = [];
    for (const requirement of toolGoMod.Require ?? []) {
        if (requirement.Path === release.module) {
            continue;
        }
        const selected = replaced.get(requirement.Path) ?? requirement.Version;
        const expected = wanted.get(requirement.Path);
        if (expected === undefined) {
            problems.push(
                `tools/${tool}/go.mod requires ${requirement.Path} ${selected}, which ${release.module} ${release.version} does not`,
            );
        } else if (selected !== expected) {
            problems.push(
                `tools/${tool}/go.mod selects ${requirement.Path} ${selected}, but ${release.module} ${release.version} requires ${expected}`,
            );
        }
    }
    return problems;
}

/**
 * Every version problem `real:tools` checks before it builds, all at once: the pins against the
 * lockfile (`pinProblems`), then each release-bound tool's go.mod against its release's
 * (`graphProblems(tool, module)`, which fetches and reads them with Go), so one edit can fix them all.
 */
export function versionCheckProblems(graphProblems: (tool: string, module: string) => string[], lock = readLockfile()): string[] {
    return [...pinProblems(lock), ...RELEASE_MODULE_GRAPHS.flatMap(({ tool, module }) => graphProblems(tool, module))];
}

export function toolSpecs(lock = readLockfile()): ToolSpec[] {
    const pulumiVersion = requiredVersion(goModOf("pulumi"), "github.com/pulumi/pulumi/pkg/v3");
    const kubeVersion = requiredVersion(goModOf("kube"), "k8s.io/kubernetes");
    const kubernetesProvider = kubernetesProviderRelease(goModOf("kubernetes-provider"));
    const sdk = lockfileVersion(lock, "@pulumi/pulumi");
    const kube = (binary: string, ask: readonly string[] = ["--version"]): VersionCheck => ({
        binary,
        ask,
        expected: semverOf(kubeVersion),
        rule: VERSION_RULES.goMod("k8s.io/kubernetes"),
    });
    const certManagerVersion = requiredVersion(goModOf("cert-manager"), CERT_MANAGER_MODULE);
    return [
        {
            name: "pulumi",
            dir: "pulumi",
            binaries: ["pulumi", "pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"],
            builds: [
                {
                    // pulumi/pulumi .goreleaser.yml: CGO off, these tags, the version the CLI semver-parses.
                    packages: ["github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", "./cmd/pulumi-language-nodejs"],
                    tags: ["osusergo", "grpcnotrace"],
                    ldflags: [
                        "-s",
                        "-w",
                        `-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${pulumiVersion}`,
                        `-X main.version=${semverOf(pulumiVersion)}`,
                    ],
                    // The language host's own tests, against upstream's behaviour for each RPC the CLI calls.
                    tests: ["./cmd/pulumi-language-nodejs"],
                },
            ],
            scripts: { "pulumi-resource-pulumi-nodejs": DYNAMIC_PROVIDER_LAUNCHER },
            versions: [
                { binary: "pulumi", ask: ["version"], expected: sdk, rule: VERSION_RULES.cli },
                { binary: "pulumi-language-nodejs", ask: ["-version"], expected: sdk, rule: VERSION_RULES.cli },
            ],
        },
        {
            name: "kubernetes-provider",
            dir: "kubernetes-provider",
            binaries: ["pulumi-resource-kubernetes"],
            moduleFiles: [
                {
                    module: "github.com/pulumi/pulumi-kubernetes/provider/v4",
                    files: ["cmd/pulumi-resource-kubernetes/schema.json", "cmd/pulumi-resource-kubernetes/terraform-mapping.json"],
                    into: "sources",
                    under: "assets",
                    schemaVersion: kubernetesProvider,
                },
            ],
            builds: [
                {
                    packages: ["."],
                    output: "pulumi-resource-kubernetes",
                    ldflags: ["-s", "-w", `-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=${kubernetesProvider}`],
                },
            ],
            versions: [
                {
                    binary: "pulumi-resource-kubernetes",
                    ask: "GetPluginInfo",
                    expected: lockfileVersion(lock, "@pulumi/kubernetes"),
                    rule: VERSION_RULES.kubernetes,
                },
            ],
        },
        {
            name: "tls-provider",
            dir: "tls-provider",
            binaries: ["pulumi-resource-tls"],
            builds: [
                {
                    packages: ["."],
                    output: "pulumi-resource-tls",
                    // The bridge refuses an unversioned provider; the version is the @pulumi/tls the program uses.
                    ldflags: ["-s", "-w", `-X main.version=${npmDependencyVersion("@pulumi/tls")}`],
                },
            ],
            versions: [
                {
                    binary: "pulumi-resource-tls",
                    ask: "GetPluginInfo",
                    expected: lockfileVersion(lock, "@pulumi/tls"),
                    rule: VERSION_RULES.tls,
                },
            ],
        },
        {
            name: "kube",
            dir: "kube",
            // kubectl too: the tests drive the cluster with the client of the same release.
            binaries: ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"],
            builds: [
                {
                    packages: [
                        "k8s.io/kubernetes/cmd/kube-apiserver",
                        "k8s.io/kubernetes/cmd/kube-controller-manager",
                        "k8s.io/kubernetes/cmd/kube-scheduler",
                        "k8s.io/kubernetes/cmd/kubectl",
                    ],
                    ldflags: ["-s", "-w", ...kubeVersionLdflags(kubeVersion)],
                },
            ],
            versions: [
                kube("kube-apiserver"),
                kube("kube-controller-manager"),
                kube("kube-scheduler"),
                kube("kubectl", ["version", "--client"]),
            ],
        },
        {
            name: "etcd",
            dir: "etcd",
            binaries: ["etcd"],
            // The main package is the module root, so go would name the binary "v3".
            builds: [{ packages: ["go.etcd.io/etcd/server/v3"], output: "etcd", ldflags: ["-s", "-w"] }],
            versions: [
                {
                    binary: "etcd",
                    ask: ["--version"],
                    expected: semverOf(requiredVersion(goModOf("etcd"), "go.etcd.io/etcd/server/v3")),
                    rule: VERSION_RULES.goMod("go.etcd.io/etcd/server/v3"),
                },
            ],
        },
        {
            name: "kwok",
            dir: "kwok",
            binaries: ["kwok"],
            builds: [{ packages: ["sigs.k8s.io/kwok/cmd/kwok"], ldflags: ["-s", "-w"] }],
            versions: [
                {
                    binary: "kwok",
                    ask: ["--version"],
                    expected: semverOf(requiredVersion(goModOf("kwok"), "sigs.k8s.io/kwok")),
                    rule: VERSION_RULES.goMod("sigs.k8s.io/kwok"),
                },
            ],
            moduleFiles: [
                {
                    // kwok exits with "no stages found" unless given Stage objects (pkg/kwok/cmd/root.go).
                    module: "sigs.k8s.io/kwok",
                    files: [
                        "kustomize/stage/node/fast/node-initialize.yaml",
                        "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
                        "kustomize/stage/pod/fast/pod-ready.yaml",
                        "kustomize/stage/pod/fast/pod-complete.yaml",
                        "kustomize/stage/pod/fast/pod-delete.yaml",
                    ],
                    into: "output",
                    under: "kwok-stages",
                },
            ],
        },
        {
            // cert-manager's controller and cainjector: one main of the project's own against the
            // module's public packages (upstream's cmd/* modules are not served; tools/cert-manager/main.go).
            name: "cert-manager",
            dir: "cert-manager",
            binaries: ["cert-manager"],
            builds: [
                {
                    packages: ["."],
                    output: "cert-manager",
                    // The version upstream's make/00_mod.mk sets; it names the user agent and field managers.
                    ldflags: ["-s", "-w", `-X ${CERT_MANAGER_MODULE}/pkg/util.AppVersion=${certManagerVersion}`],
                },
            ],
            versions: [
                {
                    binary: "cert-manager",
                    ask: ["version"],
                    expected: semverOf(certManagerVersion),
                    rule: VERSION_RULES.goMod(CERT_MANAGER_MODULE),
                },
            ],
            moduleFiles: [
                {
                    // The cert-manager.io API (the ACME CRDs are left out: no ACME controller runs).
                    module: CERT_MANAGER_MODULE,
                    files: [
                        "deploy/crds/cert-manager.io_certificaterequests.yaml",
                        "deploy/crds/cert-manager.io_certificates.yaml",
                        "deploy/crds/cert-manager.io_clusterissuers.yaml",
                        "deploy/crds/cert-manager.io_issuers.yaml",
                    ],
                    into: "output",
                    // Not under crds/: REAL_BIN links each output's top-level entries, and crds/ is the crds tool's.
                    under: "cert-manager-crds",
                },
            ],
        },
        {
            name: "crds",
            dir: "crds",
            binaries: [],
            builds: [],
            // Manifests copied from the modules go.mod pins; no binary reports a version.
            versions: [],
            moduleFiles: [
                {
                    module: "github.com/openshift/api",
                    files: [
                        "payload-manifests/crds/0000_10_config-operator_01_infrastructures-Default.crd.yaml",
                        "payload-manifests/crds/0000_03_config-operator_01_proxies.crd.yaml",
                        "console/v1/zz_generated.crd-manifests/00_consoleyamlsamples.crd.yaml",
                        "sharedresource/v1alpha1/zz_generated.crd-manifests/sharedsecrets.crd.yaml",
                        "sharedresource/v1alpha1/zz_generated.crd-manifests/sharedconfigmaps.crd.yaml",
                    ],
                    into: "output",
                    under: "crds/openshift",
                },
                {
                    module: "github.com/operator-framework/api",
                    files: [
                        "crds/operators.coreos.com_olmconfigs.yaml",
                        "crds/operators.coreos.com_operatorconditions.yaml",
                        "crds/operators.coreos.com_clusterserviceversions.yaml",
                        "crds/operators.coreos.com_operatorgroups.yaml",
                        "crds/operators.coreos.com_subscriptions.yaml",
                    ],
                    into: "output",
                    under: "crds/olm",
                },
            ],
        },
    ];
}

/** Every file under a directory, sorted, skipping the names given. */
function filesUnder(dir: string, skip: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
        if (skip.has(entry.name)) {
            continue;
        }
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            out.push(...filesUnder(full, skip));
        } else {
            out.push(full);
        }
    }
    return out;
}

/**
 * A tool's cache key: the Go version, the module's own files (go.mod, go.sum, its mains) and the
 * recipe. go.sum pins every upstream byte, so equal keys mean equal inputs.
 */
export function cacheKey(spec: ToolSpec, goVersion: string, toolsRoot: string = TOOLS_ROOT): string {
    const hash = createHash("sha256");
    hash.update(`go ${goVersion}\n`);
    const recipe = {
        compile: GO_COMPILE_FLAGS,
        binaries: spec.binaries,
        builds: spec.builds,
        moduleFiles: spec.moduleFiles,
        scripts: spec.scripts,
    };
    hash.update(JSON.stringify(recipe));
    const dir = path.join(toolsRoot, spec.dir);
    for (const file of filesUnder(dir, new Set(["assets"]))) {
        hash.update(`\n${path.relative(dir, file)}\n`);
        hash.update(fs.readFileSync(file));
    }
    return hash.digest("hex").slice(0, 16);
}

/** Where built tools are kept between runs: REAL_CACHE, else ~/.cache/cluster-platform/real. */
export function cacheRoot(env: NodeJS.ProcessEnv): string {
    if (env.REAL_CACHE) {
        return path.resolve(env.REAL_CACHE);
    }
    const base = env.XDG_CACHE_HOME || path.join(env.HOME || "/root", ".cache");
    return path.join(base, "cluster-platform", "real");
}
