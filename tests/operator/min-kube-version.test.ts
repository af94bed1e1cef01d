import {
    compareGoSemver,
    formatGoSemver,
    type GoSemver,
    minKubeVersionParseProblem,
    minKubeVersionProblem,
    minKubeVersionProblems,
    minKubeVersionVerdict,
    parseGoSemver,
} from "../../components/operator/min-kube-version";
import { CURRENT_CLUSTER_VERSION } from "../../scripts/render/render";
import { readCsv, renderOperators, writeBundle } from "../helpers/operators";

/**
 * Computed by Go, not by the module under test: tests/catalog/oracle `go run . minkube
 * minkube-cases.json > minkube-cases.expected.json`, which judges each (minKubeVersion,
 * gitVersion) pair with OLM's steps (operator-lifecycle-manager pkg/controller/operators/olm/
 * requirements.go, minKubeVersionStatus) over github.com/coreos/go-semver v0.3.1, and reads and
 * orders each version string with that library.
 */
const GO = require("../catalog/oracle/minkube-cases.expected.json") as {
    requirements: { minKubeVersion: string; gitVersion: string; met: boolean; message: string }[];
    parse: Record<string, string>;
    strings: Record<string, string>;
    order: string[];
};

describe("a CSV's minKubeVersion as OLM judges it (requirements.go over coreos/go-semver)", () => {
    test("GIVEN every (minKubeVersion, server gitVersion) pair of Go's table WHEN judged THEN met and OLM's status message are Go's", () => {
        const got = GO.requirements.map(({ minKubeVersion, gitVersion }) => ({
            minKubeVersion,
            gitVersion,
            ...minKubeVersionVerdict(minKubeVersion, gitVersion),
        }));
        expect(got).toEqual(GO.requirements);
        // The table holds each outcome: no requirement, met, not met, and both parsing errors.
        expect(new Set(GO.requirements.map((r) => (r.message === "" ? "none" : r.message.split(":")[0].split(" (")[0])))).toEqual(
            new Set([
                "none",
                "CSV minKubeVersion",
                "CSV version requirement not met",
                "CSV version parsing error",
                "Server version parsing error",
            ]),
        );
    });

    test("GIVEN version strings WHEN read THEN each is accepted, or refused with go-semver's own error text, and written back as its String() writes it", () => {
        const got = Object.fromEntries(
            Object.keys(GO.parse).map((text) => {
                const parsed = parseGoSemver(text);
                return [text, "error" in parsed ? parsed.error : ""];
            }),
        );
        expect(got).toEqual(GO.parse);
        // And each readable one written back as go-semver's String() writes it (the message's server version).
        const written = Object.fromEntries(Object.keys(GO.strings).map((text) => [text, formatGoSemver(parseGoSemver(text) as GoSemver)]));
        expect(written).toEqual(GO.strings);
        expect(Object.keys(GO.strings)).toEqual(Object.keys(GO.parse).filter((text) => GO.parse[text] === ""));
    });

    test("GIVEN every pair of the readable versions WHEN compared THEN the order is go-semver's (pre-releases, numeric identifiers, Atoi's signs)", () => {
        const readable = Object.keys(GO.parse).filter((text) => GO.parse[text] === "");
        const order = GO.order.map((line) => {
            const [a, , b] = line.split(" ");
            return `${a} ${compareGoSemver(parseGoSemver(a) as GoSemver, parseGoSemver(b) as GoSemver)} ${b}`;
        });
        expect(order).toEqual(GO.order);
        expect(GO.order).toHaveLength((readable.length * (readable.length - 1)) / 2);
    });

    test("GIVEN a requirement the cluster does not meet WHEN reported THEN the problem names the field, both versions, OLM's message and where OLM decides it", () => {
        expect(minKubeVersionProblem("1.34.0", "v1.33.5+openshift")).toBe(
            'spec.minKubeVersion "1.34.0": the cluster\'s Kubernetes is "v1.33.5+openshift", and OLM leaves this CSV Pending, RequirementsNotMet: "CSV version requirement not met: minKubeVersion (1.34.0) > server version (1.33.5+openshift)" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus); install a version of the operator this cluster meets, or upgrade the cluster',
        );
        expect(minKubeVersionProblem("1.33.5", "v1.33.5")).toBeUndefined();
        expect(minKubeVersionProblem("", "garbage")).toBeUndefined();
    });

    test("GIVEN a minKubeVersion OLM cannot read WHEN planned without a cluster THEN it is refused with go-semver's reason; a readable or empty one is not", () => {
        expect(minKubeVersionParseProblem("1.25")).toBe(
            '"1.25" is not a version OLM can read (1.25 is not in dotted-tri format): OLM leaves the CSV Pending on every cluster, RequirementsNotMet with "CSV version parsing error" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus; github.com/coreos/go-semver)',
        );
        // Go's table says which values parse: the parse problem agrees with it on every one.
        for (const { minKubeVersion, message } of GO.requirements) {
            expect([minKubeVersion, minKubeVersionParseProblem(minKubeVersion) !== undefined]).toEqual([
                minKubeVersion,
                message === "CSV version parsing error",
            ]);
        }
    });
});

/** The real node-maintenance bundle (minKubeVersion 1.23.0 as shipped), its CSV's minKubeVersion set (removed when undefined); returns the CSV's path. */
function bundle(minKubeVersion: unknown): string {
    const csv = readCsv("node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
    if (minKubeVersion === undefined) delete csv.spec.minKubeVersion;
    else csv.spec.minKubeVersion = minKubeVersion;
    return writeBundle(csv);
}

const install = (csv: string, name = "op") => ({ name, csv, namespace: name, createNamespace: true, targetNamespaces: [] });
const render = (csv: string, serverVersion?: string) =>
    renderOperators([install(csv)], { render: serverVersion === undefined ? {} : { serverVersion } });

describe("the pre-flight refuses an operator whose CSV's minKubeVersion the cluster does not meet", () => {
    test("GIVEN installs whose CSVs name no minKubeVersion WHEN checked THEN the API server is not asked its version; GIVEN two that do THEN it is asked once and each is judged", async () => {
        const asked: string[] = [];
        const server = async () => (asked.push("GET /version"), "v1.30.2");
        const plan = (name: string, minKubeVersion: string) => ({ config: { name, csv: `${name}.yaml` }, minKubeVersion });
        const operators = [{ name: "a" }, { name: "b" }, { name: "c" }];
        expect(await minKubeVersionProblems([plan("a", ""), plan("b", "")], operators, server)).toEqual([]);
        expect(asked).toEqual([]);
        const problems = await minKubeVersionProblems([plan("a", "1.30.2"), plan("b", ""), plan("c", "1.31.0")], operators, server);
        expect(asked).toEqual(["GET /version"]);
        expect(problems).toEqual([
            {
                path: "operators[2].csv",
                message:
                    '"c.yaml" spec.minKubeVersion "1.31.0": the cluster\'s Kubernetes is "v1.30.2", and OLM leaves this CSV Pending, RequirementsNotMet: "CSV version requirement not met: minKubeVersion (1.31.0) > server version (1.30.2)" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus); install a version of the operator this cluster meets, or upgrade the cluster',
            },
        ]);
    });

    test("GIVEN a CSV asking for a newer Kubernetes than the API server's WHEN previewed THEN nothing is registered and the problem names the install, the file, both versions and OLM's message", async () => {
        const csv = bundle("1.35.0");
        const result = await render(csv, "v1.34.2+rke2r1");
        expect(result.resources).toEqual([]);
        expect(result.errors).toEqual([
            `invalid configuration: 1 problem\n  - cluster-platform:operators[0].csv: ${JSON.stringify(csv)} spec.minKubeVersion "1.35.0": the cluster's Kubernetes is "v1.34.2+rke2r1", and OLM leaves this CSV Pending, RequirementsNotMet: "CSV version requirement not met: minKubeVersion (1.35.0) > server version (1.34.2+rke2r1)" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus); install a version of the operator this cluster meets, or upgrade the cluster`,
        ]);
    });

    test("GIVEN a CSV whose minKubeVersion equals the server's, one as shipped (1.23.0), one with none, and one that is empty WHEN previewed THEN each installs", async () => {
        for (const minKubeVersion of ["v1.34.2", "1.23.0", undefined, ""]) {
            const result = await render(bundle(minKubeVersion), "v1.34.2-eks-5c1f1e1");
            expect([minKubeVersion, result.errors]).toEqual([minKubeVersion, []]);
            expect(result.resources.some((r) => r.type === "kubernetes:apps/v1:Deployment")).toBe(true);
        }
    });

    test("GIVEN the render's default cluster WHEN a CSV asks for its version THEN it installs, and one minor above is refused", async () => {
        const [major, minor] = CURRENT_CLUSTER_VERSION.slice(1).split(".").map(Number);
        expect((await render(bundle(`${major}.${minor}.0`))).errors).toEqual([]);
        const refused = await render(bundle(`${major}.${minor + 1}.0`));
        expect(refused.errors).toHaveLength(1);
        expect(refused.errors[0]).toContain(`> server version (${major}.${minor}.`);
    });

    test("GIVEN a minKubeVersion OLM cannot read, or not a string WHEN planned THEN it is refused at its field, whatever the cluster", async () => {
        const unreadable = bundle("1.25");
        const number = bundle(1.25);
        const result = await renderOperators([install(unreadable), install(number, "other")]);
        expect(result.resources).toEqual([]);
        const lines = result.errors.join("\n").split("\n  - cluster-platform:");
        expect(lines).toContainEqual(
            `operators[0].csv: ${JSON.stringify(unreadable)} spec.minKubeVersion: "1.25" is not a version OLM can read (1.25 is not in dotted-tri format): OLM leaves the CSV Pending on every cluster, RequirementsNotMet with "CSV version parsing error" (operator-lifecycle-manager pkg/controller/operators/olm/requirements.go, minKubeVersionStatus; github.com/coreos/go-semver)`,
        );
        expect(lines.filter((line) => line.startsWith("operators[1].csv:") && line.includes("spec.minKubeVersion"))).toHaveLength(1);
    });
});
