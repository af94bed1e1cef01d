import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildPack, packClosure, PACKS_DIR, readPackageJson, undeclaredPackages } from "../../scripts/policy/build";
import { PACKS } from "../../scripts/policy/config";
import { ROOT } from "../helpers/render";
import { analyze, analyzerInfo, diagnosticsOf, startPack } from "./analyzer-process";
import { k8s } from "./support";

const rootPackage = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
};

describe("each pack is a Pulumi policy pack project the CLI can install and run", () => {
    test.each(PACKS)(
        "GIVEN policy-packs/%s WHEN its project files are read THEN it has PulumiPolicy.yaml (nodejs), a version, index.ts as main and exactly pinned dependencies",
        (pack) => {
            expect(fs.readFileSync(path.join(PACKS_DIR, pack, "PulumiPolicy.yaml"), "utf8")).toMatch(/^runtime: nodejs\n/);
            const packageJson = JSON.parse(fs.readFileSync(path.join(PACKS_DIR, pack, "package.json"), "utf8"));
            expect([packageJson.version, packageJson.main]).toEqual(["0.1.0", "index.ts"]);
            // The same versions as the project's, so the pack runs with what its tests ran with.
            const all = { ...rootPackage.dependencies, ...rootPackage.devDependencies };
            for (const [name, version] of Object.entries({ ...packageJson.dependencies, ...packageJson.devDependencies })) {
                expect(`${name}@${version}`).toEqual(`${name}@${all[name]}`);
            }
            expect(Object.keys(packageJson.devDependencies).sort()).toEqual(["@types/node", "typescript"]);
        },
    );

    test.each(PACKS)(
        "GIVEN policy-packs/%s WHEN its import closure is walked THEN it loads only repository modules and the packages it depends on",
        (pack) => {
            const closure = packClosure(pack);
            // Repository modules only (components/, webhook/, policy-packs/): the publishable build compiles exactly these.
            expect(
                closure.files.filter(
                    (f) => f.startsWith("..") || f.includes("node_modules") || f.startsWith("scripts/") || f.startsWith("tests/"),
                ),
            ).toEqual([]);
            expect(closure.files).toEqual(expect.arrayContaining([`policy-packs/${pack}/index.ts`, `policy-packs/${pack}/policies.ts`]));
            expect(undeclaredPackages(pack)).toEqual([]);
            expect(Object.keys(closure.packages).every((p) => p in readPackageJson(pack).dependencies)).toBe(true);
        },
    );

    test("GIVEN a pack whose closure reaches the stack-config schema WHEN checked THEN zod is named as undeclared, with the module that imports it", () => {
        expect(undeclaredPackages("impure", path.join(__dirname, "fixtures", "packs"))).toEqual([
            "zod (imported by components/config/schema.ts)",
        ]);
    });
});

describe("npm run policy:build: a self-contained pack for pulumi policy publish", () => {
    let out: string;
    beforeAll(() => {
        out = fs.mkdtempSync(path.join(os.tmpdir(), "policy-build-"));
    });
    afterAll(() => {
        fs.rmSync(out, { recursive: true, force: true });
    });

    test("GIVEN the k8s-rbac pack WHEN built THEN the directory holds the compiled pack with the components it imports, its package.json pointing at the compiled entry, and it runs", async () => {
        const dir = path.join(out, "k8s-rbac");
        const files = buildPack("k8s-rbac", dir);
        // The evaluator's well-known RBAC objects and the discovered plurals are data its modules import.
        expect(files.filter((f) => !f.endsWith(".js"))).toEqual([
            "PulumiPolicy.yaml",
            "components/shared/api-resources.table.json",
            "components/shared/rbac-well-known.kubernetes.json",
            "components/shared/rbac-well-known.openshift.json",
            "package.json",
        ]);
        expect(files).toEqual(
            expect.arrayContaining([
                "policy-packs/k8s-rbac/index.js",
                "policy-packs/shared/values.js",
                "components/shared/rbac.js",
                "components/shared/pod-security.js",
                "components/admission-webhook/rules.js",
            ]),
        );
        expect(JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))).toEqual({
            name: "@cluster-platform/k8s-rbac-policy",
            version: "0.1.0",
            description: "CrossGuard policy pack: Kubernetes RBAC and webhook safety for cluster-platform stacks",
            license: "Apache-2.0",
            main: "policy-packs/k8s-rbac/index.js",
            dependencies: { "@pulumi/policy": "1.21.0", "@pulumi/pulumi": "3.260.0" },
        });
        // What `npm install` gives the published pack: its dependencies, here the project's same versions.
        fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "dir");
        const pack = await startPack(dir);
        try {
            expect((await analyzerInfo(pack.client)).getName()).toEqual("k8s-rbac");
            const role = k8s({
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: { name: "all" },
                rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }],
            });
            expect(diagnosticsOf(await analyze(pack.client, role)).map((d) => d.policyName)).toEqual(["k8s-no-wildcard-access"]);
        } finally {
            await pack.stop();
        }
    });

    test("GIVEN the aws-tags pack WHEN built THEN the derived taggable list travels with it", () => {
        const files = buildPack("aws-tags", path.join(out, "aws-tags"));
        expect(files).toEqual(
            expect.arrayContaining([
                "components/aws-tags/taggable-types.json",
                "components/aws-tags/rules.js",
                "policy-packs/aws-tags/index.js",
            ]),
        );
        const read = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"));
        expect(read(path.join(out, "aws-tags", "components", "aws-tags", "taggable-types.json"))).toEqual(
            read(path.join(ROOT, "components", "aws-tags", "taggable-types.json")),
        );
    });
});
