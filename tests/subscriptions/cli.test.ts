import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { ROOT } from "../helpers/render";
import { tsxCommand } from "../helpers/tsx";

function render(args: string[]) {
    return spawnSync(...tsxCommand(path.join(ROOT, "scripts", "render", "cli.ts"), args), {
        cwd: ROOT,
        encoding: "utf8",
    });
}

/** The error lines of the CLI's stderr (other capabilities may warn). */
const errorLines = (stderr: string) =>
    stderr.split("\n").filter((line) => !line.startsWith("warning: ") && !line.startsWith("info: ") && line !== "");

describe("npm run render with the cluster's existing objects", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "render-subs-"));
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
    const config = "examples/openshift-aws.yaml";
    const clusterFile = "tests/fixtures/certificates/openshift-aws.cluster.yaml";

    test("GIVEN every referenced object exists WHEN rendered THEN it exits 0", () => {
        const result = render(["--config", config, "--cluster", clusterFile, "--out", path.join(tmp, "ok")]);
        expect(errorLines(result.stderr)).toEqual([]);
        expect(result.status).toBe(0);
    });

    test("GIVEN the entitlement Secret is missing from the cluster file WHEN rendered THEN it exits 1 naming bundle, kind, namespace and name, and writes nothing", () => {
        const objects = parseAllDocuments(fs.readFileSync(path.join(ROOT, clusterFile), "utf8")).map((d) => d.toJS() as { kind: string });
        const withoutSecret = path.join(tmp, "without-secret.yaml");
        fs.writeFileSync(
            withoutSecret,
            objects
                .filter((o) => o.kind !== "Secret")
                .map((o) => stringify(o))
                .join("---\n"),
        );
        const out = path.join(tmp, "missing");
        const result = render(["--config", config, "--cluster", withoutSecret, "--out", out]);
        expect(result.status).toBe(1);
        expect(errorLines(result.stderr)).toEqual([
            "error: invalid configuration: 1 problem",
            '  - cluster-platform:subscriptions.clusterBundles[0].entitlements[0]: Secret "openshift-config/etc-pki-entitlement" does not exist in the cluster: ClusterBundle "cluster" shares it (SharedSecret cluster-entitlement-etc-pki-entitlement-d0e25df8); create it first',
        ]);
        expect(fs.existsSync(out)).toBe(false);
    });
});
