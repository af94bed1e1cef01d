/**
 * A CSV's `spec.minKubeVersion` as OLM checks it before it installs anything
 * (operator-framework/operator-lifecycle-manager `pkg/controller/operators/olm/requirements.go`,
 * `minKubeVersionStatus`, part of the CSV's requirement status): an empty value is no requirement;
 * otherwise the API server's version (discovery's `ServerVersion()`, its `gitVersion`) with a
 * leading `v` and everything from the first `-` dropped, and the CSV's value with a leading `v`
 * dropped, are read by `github.com/coreos/go-semver` (v0.3.1, the version OLM's go.mod pins), and
 * a CSV whose version is greater than the server's is left Pending with RequirementsNotMet, as is
 * one either version of which does not parse. Nothing of the operator is created then.
 *
 * go-semver reads `MAJOR.MINOR.PATCH[-PRERELEASE][+METADATA]`: metadata is what follows the first
 * `+`, the pre-release what follows the first `-` before it (either may be empty); each is empty or
 * dot-separated identifiers of `[0-9A-Za-z-]`; the three numbers are base-10 int64 (leading zeros
 * allowed). Versions compare by the numbers, then a version without a pre-release is the greater,
 * then pre-release identifiers one by one (numeric ones, as Go's `strconv.Atoi` reads them, below
 * the others; otherwise by value, or by bytes), a longer list the greater when one is a prefix of
 * the other. Metadata does not count. The expectations in tests/operator/min-kube-version.test.ts
 * were computed by Go running that library (tests/catalog/oracle, `go run . minkube`).
 * Pure.
 */
import { formatPath, Problem } from "../shared/problems";

/** A version as go-semver holds it. */
export interface GoSemver {
    readonly major: bigint;
    readonly minor: bigint;
    readonly patch: bigint;
    readonly preRelease: string;
    readonly metadata: string;
}

const IDENTIFIERS = /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/;
const INT64_MAX = 9223372036854775807n;

/** go-semver's `splitOff`: [before, after] at the first `delimiter`, after empty when there is none. */
function splitOff(text: string, delimiter: string): [string, string] {
    const at = text.indexOf(delimiter);
    return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}

/** `strconv.ParseInt(text, 10, 64)` for what can reach it here (no sign survives the splits): the value, or Go's error. */
function parseInt64(text: string): bigint | { error: string } {
    if (!/^[0-9]+$/.test(text)) return { error: `strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax` };
    const value = BigInt(text);
    return value > INT64_MAX ? { error: `strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range` } : value;
}

/** `semver.NewVersion(text)`: the version, or go-semver's reason it is not one. */
export function parseGoSemver(text: string): GoSemver | { error: string } {
    const [rest, metadata] = splitOff(text, "+");
    const [core, preRelease] = splitOff(rest, "-");
    const parts = core.split(".");
    // SplitN(core, ".", 3): a fourth dot stays in the patch, which then does not parse.
    const dotParts = parts.length > 3 ? [parts[0], parts[1], parts.slice(2).join(".")] : parts;
    if (dotParts.length !== 3) return { error: `${core} is not in dotted-tri format` };
    if (preRelease !== "" && !IDENTIFIERS.test(preRelease))
        return { error: `failed to validate pre-release: ${preRelease} is not a valid semver identifier` };
    if (metadata !== "" && !IDENTIFIERS.test(metadata))
        return { error: `failed to validate metadata: ${metadata} is not a valid semver identifier` };
    const numbers = dotParts.map(parseInt64);
    const bad = numbers.find((n) => typeof n !== "bigint");
    if (bad !== undefined && typeof bad !== "bigint") return bad;
    const [major, minor, patch] = numbers as bigint[];
    return { major, minor, patch, preRelease, metadata };
}

/** go-semver's `Version.String()`. */
export function formatGoSemver(version: GoSemver): string {
    return `${version.major}.${version.minor}.${version.patch}${version.preRelease ? `-${version.preRelease}` : ""}${version.metadata ? `+${version.metadata}` : ""}`;
}

/** `strconv.Atoi` on 64-bit Go: a decimal with an optional sign, within int64; undefined otherwise. */
function atoi(text: string): bigint | undefined {
    if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
    const value = BigInt(text);
    return value > INT64_MAX || value < -INT64_MAX - 1n ? undefined : value;
}

function sign(a: bigint | string, b: bigint | string): number {
    return a > b ? 1 : a < b ? -1 : 0;
}

function comparePreRelease(a: string[], b: string[]): number {
    for (let i = 0; ; i++) {
        if (i === a.length) return i === b.length ? 0 : -1;
        if (i === b.length) return 1;
        const [x, y] = [atoi(a[i]), atoi(b[i])];
        if (x !== undefined && y === undefined) return -1;
        if (x === undefined && y !== undefined) return 1;
        const numeric = x !== undefined && y !== undefined ? sign(x, y) : 0;
        if (numeric !== 0) return numeric;
        // Go compares strings by bytes; these are ASCII, where JavaScript's order is the same.
        const text = sign(a[i], b[i]);
        if (text !== 0) return text;
    }
}

/** go-semver's `Version.Compare`: -1, 0 or 1. */
export function compareGoSemver(a: GoSemver, b: GoSemver): number {
    const numbers = sign(a.major, b.major) || sign(a.minor, b.minor) || sign(a.patch, b.patch);
    if (numbers !== 0) return numbers;
    if (a.preRelease === "" && b.preRelease !== "") return 1;
    if (b.preRelease === "" && a.preRelease !== "") return -1;
    return comparePreRelease(a.preRelease.split("."), b.preRelease.split("."));
}

/** OLM's verdict on one CSV: `met`, and the requirement status message it writes (empty when it writes none). */
export interface MinKubeVersionVerdict {
    readonly met: boolean;
    readonly message: string;
}

/** `strings.TrimPrefix(text, "v")`, as requirements.go trims both versions. */
function trimV(text: string): string {
    return text.startsWith("v") ? text.slice(1) : text;
}

/** A value OLM cannot read refuses the CSV on every cluster, so it is reported without one. */
export function minKubeVersionParseProblem(minKubeVersion: string): string | undefined {
    if (minKubeVersion === "") return undefined;
    const parsed = parseGoSemver(trimV(minKubeVersion));
    return "error" in parsed
        ? `${JSON.stringify(minKubeVersion)} is not a version OLM can read (${parsed.error}): OLM leaves the CSV Pending on every cluster, RequirementsNotMet with "CSV version parsing error" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus; github.com/coreos/go-semver)`
        : undefined;
}

/** An API server's `gitVersion` as requirements.go reads it: without its leading `v`, up to its first `-`. */
export function serverVersionOf(gitVersion: string): GoSemver | { error: string } {
    return parseGoSemver(trimV(gitVersion).split("-")[0]);
}

/** `minKubeVersionStatus(name, minKubeVersion)` against a server whose `gitVersion` is given. */
export function minKubeVersionVerdict(minKubeVersion: string, gitVersion: string): MinKubeVersionVerdict {
    if (minKubeVersion === "") return { met: true, message: "" };
    const server = serverVersionOf(gitVersion);
    if ("error" in server) return { met: false, message: "Server version parsing error" };
    const csv = parseGoSemver(trimV(minKubeVersion));
    if ("error" in csv) return { met: false, message: "CSV version parsing error" };
    if (compareGoSemver(csv, server) > 0) {
        return {
            met: false,
            message: `CSV version requirement not met: minKubeVersion (${minKubeVersion}) > server version (${formatGoSemver(server)})`,
        };
    }
    return { met: true, message: `CSV minKubeVersion (${minKubeVersion}) less than server version (${gitVersion})` };
}

/**
 * Why OLM would not install a CSV on the cluster whose version is `gitVersion`, or undefined:
 * the stack refuses it the same way, before anything is registered (a CSV that asks for a newer
 * Kubernetes expects APIs and behaviour this cluster lacks).
 */
export function minKubeVersionProblem(minKubeVersion: string, gitVersion: string): string | undefined {
    const verdict = minKubeVersionVerdict(minKubeVersion, gitVersion);
    if (verdict.met) return undefined;
    return `spec.minKubeVersion ${JSON.stringify(minKubeVersion)}: the cluster's Kubernetes is ${JSON.stringify(gitVersion)}, and OLM leaves this CSV Pending, RequirementsNotMet: "${verdict.message}" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus); install a version of the operator this cluster meets, or upgrade the cluster`;
}

/**
 * The pre-flight's check: each install whose CSV names a minKubeVersion the cluster does not meet,
 * as a problem on its `operators[i].csv`. The server is asked its version only when some CSV names one.
 */
export async function minKubeVersionProblems(
    plans: readonly { config: { name: string; csv: string }; minKubeVersion: string }[],
    operators: readonly { name: string }[],
    serverVersion: () => Promise<string>,
): Promise<Problem[]> {
    const requiring = plans.filter((plan) => plan.minKubeVersion !== "");
    if (requiring.length === 0) return [];
    const gitVersion = await serverVersion();
    return requiring.flatMap((plan) => {
        const problem = minKubeVersionProblem(plan.minKubeVersion, gitVersion);
        const index = operators.findIndex((o) => o.name === plan.config.name);
        return problem === undefined
            ? []
            : [{ path: formatPath(["operators", index, "csv"]), message: `${JSON.stringify(plan.config.csv)} ${problem}` }];
    });
}
