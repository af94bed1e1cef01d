/**
 * `npm run upgrade-check`'s pure parts (scripts/upgrade/check.ts): which commit a release names,
 * and how the two previews split into the upgrade, drift and what no release may plan. The
 * previews themselves come from the real CLI in tests/real/upgrade.real.ts.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { comparePlans, releaseCommit } from "../../scripts/upgrade/check";
import { ROOT } from "../helpers/root";
import { temporaryDirectory } from "../helpers/temporary";

const CHANGELOG = "# Changelog\n\n## Unreleased\n\n## 0.1.0: commit 25fb0e9 (2026-11-27)\n\n- first\n";
const known: Record<string, string> = { "25fb0e9": "25fb0e98ca8ebf0d52bc07b7a5882e35631fc32e", main: "aaaa" };
const revParse = (rev: string) => known[rev];

describe("upgrade-check", () => {
    test("GIVEN a release of CHANGELOG.md, a commit-ish and an unknown name THEN the release resolves to its commit, the commit-ish to itself, and the unknown is refused naming it and the rule", () => {
        expect(releaseCommit("0.1.0", CHANGELOG, revParse)).toBe("25fb0e98ca8ebf0d52bc07b7a5882e35631fc32e");
        expect(releaseCommit("main", CHANGELOG, revParse)).toBe("aaaa");
        expect(() => releaseCommit("0.9.0", CHANGELOG, revParse)).toThrow(
            '--from "0.9.0" is neither a release of CHANGELOG.md (## <version>: commit <hash>) nor a commit of this repository',
        );
    });

    test("GIVEN the release's and the current program's planned steps THEN steps both plan are drift, the rest the upgrade, and its deletes or replacements of a Namespace or CRD are dangerous", () => {
        const ns = "urn:pulumi:s::cluster-platform::cluster-platform:operator:Operators$kubernetes:core/v1:Namespace::namespace-widgets";
        const crd =
            "urn:pulumi:s::cluster-platform::cluster-platform:operator:Operators$kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::widgets";
        const role =
            "urn:pulumi:s::cluster-platform::cluster-platform:operator:Operators$kubernetes:rbac.authorization.k8s.io/v1:Role::old";
        const drift = { op: "update", urn: "urn:pulumi:s::cluster-platform::kubernetes:core/v1:ConfigMapPatch::trust", paths: ["data"] };
        const plan = comparePlans(
            "0.1.0",
            "abc",
            [drift],
            [
                drift,
                { op: "delete", urn: role, paths: [] },
                { op: "replace", urn: crd, paths: ["spec"] },
                { op: "delete", urn: ns, paths: [] },
                { op: "update", urn: ns, paths: ["metadata.labels"] },
            ],
        );
        expect(plan.drift).toEqual([drift]);
        expect(plan.upgrade.map((s) => `${s.op} ${s.urn.split("::").pop()}`)).toEqual([
            "delete old",
            "replace widgets",
            "delete namespace-widgets",
            "update namespace-widgets",
        ]);
        expect(plan.dangerous.map((s) => `${s.op} ${s.urn.split("::").pop()}`)).toEqual(["replace widgets", "delete namespace-widgets"]);
    });

    test("GIVEN a stack whose state holds a pending create (an update killed half-way) WHEN upgrade-check runs THEN it stops before any checkout or preview with the recovery commands of docs/operations.md, no stack trace, exit 2", () => {
        const dir = temporaryDirectory("upgrade-check-");
        const bin = path.join(dir, "bin");
        fs.mkdirSync(bin);
        fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: cluster-platform\nruntime: nodejs\n");
        const urn = "urn:pulumi:prod::cluster-platform::kubernetes:core/v1:Namespace::namespace-widgets";
        // A stand-in `pulumi` (not the CLI): logs its arguments and answers `stack export` as the CLI
        // prints it (sdk/go/common/apitype/core.go, DeploymentV3.PendingOperations).
        const exported = JSON.stringify({
            version: 3,
            deployment: { resources: [], pending_operations: [{ resource: { urn }, type: "creating" }] },
        });
        fs.writeFileSync(
            path.join(bin, "pulumi"),
            `#!/bin/sh\necho "$*" >> "${path.join(dir, "calls")}"\n[ "$1 $2" = "stack export" ] && echo '${exported}'\n`,
            { mode: 0o755 },
        );
        const run = spawnSync(
            path.join(ROOT, "node_modules", ".bin", "tsx"),
            [path.join(ROOT, "scripts", "upgrade", "check.ts"), "--from", "0.1.0", "--stack", "prod", "--cwd", dir],
            { env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` }, encoding: "utf8", timeout: 60_000 },
        );
        expect({ status: run.status, stderr: run.stderr.split("\n"), calls: fs.readFileSync(path.join(dir, "calls"), "utf8") }).toEqual({
            status: 2,
            stderr: [
                'upgrade-check: stack prod was left by an interrupted or running update (docs/operations.md, "Interrupted updates"):',
                `  pending operation: creating ${urn}`,
                "recover with:",
                "  pulumi refresh --stack prod --clear-pending-creates --yes",
                "  pulumi up --stack prod",
                "  pulumi preview --stack prod --expect-no-changes",
                "",
            ],
            calls: "stack export --stack prod --non-interactive\n",
        });
    }, 60_000);
});
