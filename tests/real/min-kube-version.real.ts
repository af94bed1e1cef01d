/**
 * A CSV's minKubeVersion against the real API server's version (components/operator/
 * min-kube-version.ts): the API server says what it is (`GET /version`, read here with kubectl,
 * not by the program), and the program must read the same through the provider's kubeconfig and
 * refuse, before anything is registered, a CSV asking for the next minor, as OLM's
 * requirements.go would leave it Pending; one asking for exactly the server's version installs.
 * Nothing is created: the refusal is a preview's, and the accepted case is previewed only.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { destroyStack } from "./helpers/destroy";
import { applyObjects, kubectl } from "./helpers/kubectl";
import { fullStackConfig, OPERATOR_CSV_FILE, operatorBundle, preexistingObjects, requireBuild } from "./helpers/fixtures";
import { realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

let stack: TestStack;
let gitVersion: string;

/** The fixture's operator bundle, copied with its CSV's minKubeVersion set; returns the CSV's path. */
function bundleRequiring(minKubeVersion: string): string {
    const original = path.dirname(operatorBundle(realEnv("REAL_WORK")));
    const dir = path.join(realEnv("REAL_WORK"), "bundles", `min-kube-${minKubeVersion}`);
    fs.cpSync(original, dir, { recursive: true });
    const file = path.join(dir, OPERATOR_CSV_FILE);
    const csv = parse(fs.readFileSync(file, "utf8")) as { spec: Record<string, unknown> };
    csv.spec.minKubeVersion = minKubeVersion;
    fs.writeFileSync(file, stringify(csv));
    return file;
}

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
