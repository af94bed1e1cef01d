/**
 * The suite's layout (tests/helpers/test-group.ts): every test folder is run by one entry, a file
 * that fails to load fails alone and says why, and with no timings the heaviest folders start first.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { testFilesIn } from "../helpers/test-group";
import { ROOT } from "../helpers/root";

const TESTS = path.join(ROOT, "tests");
const FolderSequencer = require("./sequencer.js") as new (options: unknown) => { sort(tests: unknown[]): { path: string }[] };

function foldersWithTests(): string[] {
    return fs
        .readdirSync(TESTS, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && testFilesIn(path.join(TESTS, entry.name)).length > 0)
        .map((entry) => entry.name)
        .sort();
}

describe("one jest entry per test folder", () => {
    test("GIVEN the test folders WHEN the entries are listed THEN each folder with test files has exactly tests/<folder>.test.ts, which runs that folder", () => {
        const entries = fs
            .readdirSync(TESTS)
            .filter((name) => name.endsWith(".test.ts"))
            .sort();
        expect(entries).toEqual(
            foldersWithTests()
                .map((folder) => `${folder}.test.ts`)
                .sort(),
        );
        for (const folder of foldersWithTests()) {
            expect(fs.readFileSync(path.join(TESTS, `${folder}.test.ts`), "utf8")).toContain(
                `runTestFiles(path.join(__dirname, "${folder}"));`,
            );
        }
    });

    test("GIVEN a folder whose first file throws while loading WHEN its entry runs THEN that file fails once with the error's own line, and the next file's tests still pass", () => {
        const project = fs.mkdtempSync(path.join(os.tmpdir(), "test-group-"));
        try {
            fs.mkdirSync(path.join(project, "tests", "area"), { recursive: true });
            fs.writeFileSync(
                path.join(project, "tests", "area", "a.test.ts"),
                'const error = new Error("skopeo is not installed (Debian package skopeo)");\nerror.stack = error.message;\nthrow error;\n',
            );
            fs.writeFileSync(path.join(project, "tests", "area", "b.test.ts"), 'test("b passes", () => expect(1).toBe(1));\n');
            fs.writeFileSync(
                path.join(project, "tests", "area.test.ts"),
                `const { runTestFiles } = require(${JSON.stringify(path.join(ROOT, "tests", "helpers", "test-group.ts"))});\nrunTestFiles(require("node:path").join(__dirname, "area"));\n`,
            );
            const base = require(path.join(ROOT, "jest.config.js")) as { transform: Record<string, [string, unknown]> };
            const [, swcOptions] = base.transform["^.+\\.ts$"];
            const config = {
                ...base,
                rootDir: project,
                transform: { "^.+\\.ts$": [require.resolve("@swc/jest"), swcOptions] },
                setupFilesAfterEnv: [],
                testSequencer: undefined,
                globalSetup: undefined,
                globalTeardown: undefined,
            };
            const run = spawnSync(
                process.execPath,
                [
                    path.join(ROOT, "node_modules", "jest", "bin", "jest.js"),
                    "--config",
                    JSON.stringify(config),
                    "--json",
                    "--ci",
                    "--cacheDirectory",
                    path.join(project, "cache"),
                ],
                { cwd: project, encoding: "utf8" },
            );
            expect(run.stderr).toContain("Tests:       1 failed, 1 passed, 2 total");
            const report = JSON.parse(run.stdout) as {
                testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
            };
            const results = report.testResults.flatMap((file) => file.assertionResults);
            expect(results.map(({ fullName, status }) => ({ fullName, status }))).toEqual([
                { fullName: "a.test.ts loads", status: "failed" },
                { fullName: "b.test.ts b passes", status: "passed" },
            ]);
            expect(results[0].failureMessages).toEqual(["skopeo is not installed (Debian package skopeo)"]);
            expect(run.status).toBe(1);
        } finally {
            fs.rmSync(project, { recursive: true, force: true });
        }
    });

    test("GIVEN no recorded timings WHEN the entries are ordered THEN the folder whose test files weigh most runs first, and an entry with no folder weighs its own size", () => {
        const root = fs.mkdtempSync(path.join(os.tmpdir(), "sequencer-"));
        try {
            const entry = (name: string, folderFiles: Record<string, number>) => {
                fs.writeFileSync(path.join(root, `${name}.test.ts`), "x".repeat(50));
                for (const [file, bytes] of Object.entries(folderFiles)) {
                    fs.mkdirSync(path.join(root, name), { recursive: true });
                    fs.writeFileSync(path.join(root, name, file), "x".repeat(bytes));
                }
                return path.join(root, `${name}.test.ts`);
            };
            // light: 300 bytes of tests; heavy: 500 (its helper.ts is not a test file); lone: no folder, its own 50 bytes.
            const entries = [
                entry("light", { "a.test.ts": 300 }),
                entry("lone", {}),
                entry("heavy", { "a.test.ts": 200, "b.test.ts": 300, "helper.ts": 9000 }),
            ];
            const context = {
                config: { cacheDirectory: path.join(root, "cache"), id: "cluster-platform" },
                hasteFS: { getSize: () => 100 },
            };
            const sorted = new FolderSequencer({ contexts: [context], globalConfig: {} }).sort(entries.map((p) => ({ path: p, context })));
            expect(sorted.map((test) => path.basename(test.path))).toEqual(["heavy.test.ts", "light.test.ts", "lone.test.ts"]);
        } finally {
            fs.rmSync(root, { recursive: true, force: true });
        }
    });
});
