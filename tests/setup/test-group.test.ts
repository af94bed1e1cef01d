/**
 * The suite's layout (tests/helpers/test-group.ts): every test folder has an entry of its own and
 * is run by exactly one part, the parts are packed longest first, a file that fails to load fails
 * alone and says why, and with no timings the heaviest folders start first.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FOLDER_SECONDS, PART_COUNT, partsOf, testFolders } from "../helpers/test-group";
import { ROOT } from "../helpers/root";

const TESTS = path.join(ROOT, "tests");
const FolderSequencer = require("./sequencer.js") as new (options: unknown) => { sort(tests: unknown[]): { path: string }[] };

/** The folders with test files, listed here from the directory itself. */
function foldersWithTests(): string[] {
    return fs
        .readdirSync(TESTS, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && fs.readdirSync(path.join(TESTS, entry.name)).some((name) => name.endsWith(".test.ts")))
        .map((entry) => entry.name)
        .sort();
}

describe("the suite's entries: one per test folder, and the parts npm test runs", () => {
    test("GIVEN the test folders WHEN the entries are listed THEN each folder with test files has exactly tests/<folder>.test.ts, which runs that folder, and the parts are tests/part-1 to part-8", () => {
        const entries = fs
            .readdirSync(TESTS)
            .filter((name) => name.endsWith(".test.ts"))
            .sort();
        const parts = ["1", "2", "3", "4", "5", "6", "7", "8"].map((n) => `part-${n}.test.ts`);
        expect(PART_COUNT).toBe(parts.length);
        expect(entries).toEqual([...foldersWithTests().map((folder) => `${folder}.test.ts`), ...parts].sort());
        for (const folder of foldersWithTests()) {
            expect(fs.readFileSync(path.join(TESTS, `${folder}.test.ts`), "utf8")).toContain(
                `runTestFiles(path.join(__dirname, "${folder}"));`,
            );
        }
        parts.forEach((part, index) => expect(fs.readFileSync(path.join(TESTS, part), "utf8")).toContain(`runTestPart(${index + 1});`));
    });

    test("GIVEN the test folders WHEN packed into the parts THEN each folder is in exactly one part, has a recorded time, and no recorded name is stale", () => {
        const folders = foldersWithTests();
        expect(testFolders(TESTS)).toEqual(folders);
        const parts = partsOf(folders, FOLDER_SECONDS, PART_COUNT);
        expect(parts).toHaveLength(PART_COUNT);
        expect(parts.flat().sort()).toEqual(folders);
        expect(Object.keys(FOLDER_SECONDS).sort()).toEqual(folders);
    });

    test("GIVEN recorded times WHEN packed THEN the longest goes first, each into the part with the least time so far (ties to the lower part), and an unrecorded folder weighs the mean", () => {
        // By hand: a 9 → part 1 (0 = 0, the lower); b 8 → 2; new (the mean, 26 / 5 = 5.2) → 2 (8 < 9);
        // c 4 → 1 (9 < 13.2); d 3 → 1 (13 < 13.2); e 2 → 2 (13.2 < 16).
        const seconds = { a: 9, b: 8, c: 4, d: 3, e: 2 };
        expect(partsOf(["e", "d", "c", "b", "a", "new"], seconds, 2)).toEqual([
            ["a", "c", "d"],
            ["b", "e", "new"],
        ]);
        expect(partsOf(["a"], seconds, 3)).toEqual([["a"], [], []]);
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
                // The folders' own entries, as when one is named (the parent's match is the parts').
                testMatch: ["<rootDir>/tests/*.test.ts"],
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
