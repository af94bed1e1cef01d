/**
 * A CSV's requirements on the cluster, against the real API server, as OLM's requirements.go
 * checks them before it installs anything:
 * - minKubeVersion (components/operator/min-kube-version.ts): the API server says what it is
 *   (`GET /version`, read here with kubectl, not by the program), and the program must read the
 *   same through the provider's kubeconfig and refuse, before anything is registered, a CSV asking
 *   for the next minor; one asking for exactly the server's version installs.
 * - nativeAPIs (components/operator/native-apis.ts): the API server's discovery (read here with
 *   kubectl) says which kinds it serves; a CSV naming one it lacks is refused, naming exactly those.
 * Nothing is created: the refusals are previews', and the accepted cases are previewed only.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { destroyStack } from "./helpers/destroy";
import { applyObjects, kubectl, kubectlRun } from "./helpers/kubectl";
import { fullStackConfig, OPERATOR_CSV_FILE, operatorBundle, preexistingObjects, requireBuild } from "./helpers/fixtures";
import { realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

let stack: TestStack;
let gitVersion: string;

/** The fixture's operator bundle, copied into `name` with these fields of its CSV's spec set; returns the CSV's path. */
function bundleWith(name: string, fields: Record<string, unknown>): string {
    const original = path.dirname(operatorBundle(realEnv("REAL_WORK")));
    const dir = path.join(realEnv("REAL_WORK"), "bundles", name);
    fs.cpSync(original, dir, { recursive: true });
    const file = path.join(dir, OPERATOR_CSV_FILE);
    const csv = parse(fs.readFileSync(file, "utf8")) as { spec: Record<string, unknown> };
    Object.assign(csv.spec, fields);
    fs.writeFileSync(file, stringify(csv));
    return file;
}

const bundleRequiring = (minKubeVersion: string) => bundleWith(`min-kube-${minKubeVersion}`, { minKubeVersion });

function configRequiring(csv: string): Record<string, unknown> {
    return fullStackConfig({
        subscriptions: { enabled: false },
        caInjection: [],
        operators: [
            {
                name: "node-maintenance",
                csv,
                namespace: "min-kube-version",
                createNamespace: true,
                targetNamespaces: [],
                rbacNamespaces: ["min-kube-version"],
            },
        ],
    });
}

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
    gitVersion = (JSON.parse(kubectl(["get", "--raw", "/version"])) as { gitVersion: string }).gitVersion;
});

afterAll(() => {
    // Only previews ran: the state owns nothing, and the destroy check says so.
    if (stack) destroyStack(stack, []);
});

describe("a CSV's minKubeVersion on the real API server", () => {
    test("GIVEN a CSV asking for the next minor of the API server's version WHEN previewed THEN the preview fails naming both versions and OLM's message, and the same bundle asking for the server's own version previews cleanly", () => {
        const match = /^v(\d+)\.(\d+)\.(\d+)/.exec(gitVersion);
        expect(match).not.toBeNull();
        const [major, minor, patch] = (match as RegExpExecArray).slice(1).map(Number);
        const tooNew = `${major}.${minor + 1}.0`;
        const csv = bundleRequiring(tooNew);
        stack = new TestStack("min-kube-version", configRequiring(csv));

        const refused = stack.preview();
        const output = refused.stdout + refused.stderr;
        expect(refused.status).not.toBe(0);
        expect(output).toContain(
            `cluster-platform:operators[0].csv: ${JSON.stringify(csv)} spec.minKubeVersion "${tooNew}": the cluster's Kubernetes is "${gitVersion}", and OLM leaves this CSV Pending, RequirementsNotMet: "CSV version requirement not met: minKubeVersion (${tooNew}) > server version (${major}.${minor}.${patch}`,
        );
        // Refused in the pre-flight: nothing of the operator was planned.
        expect(output).not.toContain("kubernetes:apps/v1:Deployment");

        stack.setConfig(configRequiring(bundleRequiring(`${major}.${minor}.${patch}`)));
        const accepted = stack.preview();
        expect([accepted.status, accepted.stdout + accepted.stderr]).toEqual([0, expect.not.stringContaining("minKubeVersion")]);
        expect(accepted.stdout).toContain("kubernetes:apps/v1:Deployment");
    });
});

describe("a CSV's nativeAPIs on the real API server's discovery", () => {
    test("GIVEN a CSV naming kinds the API server lists, one its apps/v1 lacks and a group version it does not serve WHEN previewed THEN the preview fails naming exactly the two, and naming only served kinds it previews cleanly", () => {
        // What the API server serves, asked with kubectl (not by the program).
        const apps = JSON.parse(kubectl(["get", "--raw", "/apis/apps/v1"])) as { resources: { kind: string }[] };
        const core = JSON.parse(kubectl(["get", "--raw", "/api/v1"])) as { resources: { kind: string }[] };
        expect(apps.resources.map((r) => r.kind)).toEqual(expect.arrayContaining(["Deployment", "StatefulSet"]));
        expect(apps.resources.map((r) => r.kind)).not.toContain("DeploymentConfig");
        expect(core.resources.map((r) => r.kind)).toContain("Service");
        expect(kubectlRun(["get", "--raw", "/apis/route.openshift.io/v1"]).status).not.toBe(0);
        const served = [
            { group: "apps", version: "v1", kind: "Deployment" },
            { group: "apps", version: "v1", kind: "StatefulSet" },
            { group: "", version: "v1", kind: "Service" },
        ];
        const csv = bundleWith("native-apis-missing", {
            nativeAPIs: [
                ...served,
                { group: "apps", version: "v1", kind: "DeploymentConfig" },
                { group: "route.openshift.io", version: "v1", kind: "Route" },
            ],
        });
        stack ??= new TestStack("min-kube-version", configRequiring(csv));
        stack.setConfig(configRequiring(csv));

        const refused = stack.preview();
        const output = refused.stdout + refused.stderr;
        expect(refused.status).not.toBe(0);
        expect(output).toContain(
            `cluster-platform:operators[0].csv: ${JSON.stringify(csv)} spec.nativeAPIs: this cluster does not serve apps/v1, Kind=DeploymentConfig; route.openshift.io/v1, Kind=Route, and OLM leaves this CSV Pending, RequirementsNotMet: "Native API does not exist"`,
        );
        expect(output).not.toContain("kubernetes:apps/v1:Deployment");

        stack.setConfig(configRequiring(bundleWith("native-apis-served", { nativeAPIs: served })));
        const accepted = stack.preview();
        expect([accepted.status, accepted.stdout + accepted.stderr]).toEqual([0, expect.not.stringContaining("nativeAPIs")]);
        expect(accepted.stdout).toContain("kubernetes:apps/v1:Deployment");
    });
});
