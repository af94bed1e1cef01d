/**
 * The suite's jest entries. Jest gives each entry its own module registry, and a file that renders
 * the program first loads the Pulumi SDKs and every component into it (about 1.7 s of CPU per
 * file, measured on the suite's 2-core machines). So:
 *
 * - `npm test` runs the folders in a few parts, `tests/part-<n>.test.ts` (`runTestPart`), each one
 *   registry for several folders, packed from each folder's recorded time so that the parts take
 *   about as long as each other and the workers end together (docs/performance.md, "Fewer
 *   registries", for the figures that chose this over one entry per folder);
 * - `npx jest tests/<area>.test.ts` runs one folder in one registry (`runTestFiles`);
 * - `npx jest tests/<area>/<file>.test.ts` runs that one file (jest.config.js switches the match).
 *
 * Each file's tests and hooks stay inside a describe block named after the file, so a file's
 * beforeEach/afterAll reach only its own tests.
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** tests/: its folders hold the test files, its top-level files are jest's entries. */
export const TESTS_DIRECTORY = path.resolve(__dirname, "..");

/**
 * How many parts `npm test` runs: two per worker (jest.config.js runs four), so one long part cannot
 * hold a worker alone at the end.
 */
export const PART_COUNT = 8;

/**
 * Seconds each folder took as its own entry in `npm test` inside two clean-clone `.ci/run`s (the
 * means of 78d65eb's and 3a9b233's, 2-vCPU machine, 2026-11-29; jest prints no time under 5 s,
 * counted as 2): a fresh clone's times, with jest's transform cache cold, which is how CI runs.
 * Only the proportions matter: they pack the parts. A folder missing here fails
 * tests/setup/test-group.test.ts.
 */
export const FOLDER_SECONDS: Readonly<Record<string, number>> = {
    "admission-webhook": 2,
    "aws-assets": 2,
    "aws-tags": 20,
    certificates: 22,
    composition: 12,
    config: 2,
    fleet: 42,
    integration: 7,
    mutation: 2,
    operator: 57,
    policy: 82,
    reconcile: 19,
    render: 27,
    setup: 2,
    shared: 12,
    start: 6,
    subscriptions: 38,
    toolchain: 2,
    upgrade: 2,
    verify: 2,
    webhook: 56,
    "webhook-image": 76,
};

/** The test files of `folder`, in name order. */
export function testFilesIn(folder: string): string[] {
    return fs
        .readdirSync(folder)
        .filter((name) => name.endsWith(".test.ts"))
        .sort();
}

/** The folders under `directory` that hold test files, in name order. */
export function testFolders(directory: string = TESTS_DIRECTORY): string[] {
    return fs
        .readdirSync(directory, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && testFilesIn(path.join(directory, entry.name)).length > 0)
        .map((entry) => entry.name)
        .sort();
}

/**
 * `folders` in `count` parts: longest first, each into the part with the least time so far (ties:
 * the lower part); a folder with no recorded time weighs the mean of those that have one. Each
 * part lists its folders in name order.
 */
export function partsOf(folders: readonly string[], seconds: Readonly<Record<string, number>>, count: number): string[][] {
    const recorded = Object.values(seconds);
    const fallback = recorded.length > 0 ? recorded.reduce((sum, value) => sum + value, 0) / recorded.length : 1;
    const weight = (folder: string) => seconds[folder] ?? fallback;
    const parts = Array.from({ length: count }, () => ({ folders: [] as string[], seconds: 0 }));
    for (const folder of [...folders].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
        const lightest = parts.reduce((best, part) => (part.seconds < best.seconds ? part : best));
        lightest.folders.push(folder);
        lightest.seconds += weight(folder);
    }
    return parts.map((part) => part.folders.sort());
}

/**
 * Registers every test file of `folder`. A file that throws while loading (a suite whose Debian
 * tool is missing says so that way) becomes one failing test with that error; the folder's other
 * files still run.
 */
export function runTestFiles(folder: string): void {
    for (const name of testFilesIn(folder)) {
        describe(name, () => {
            try {
                require(path.join(folder, name));
            } catch (error) {
                test("loads", () => {
                    throw error;
                });
            }
        });
    }
}

/** Registers the folders of part `part` (1-based), each in a describe block of its name. */
export function runTestPart(part: number, directory: string = TESTS_DIRECTORY): void {
    const folders = partsOf(testFolders(directory), FOLDER_SECONDS, PART_COUNT)[part - 1];
    if (folders === undefined) {
        throw new Error(`there is no test part ${part}: parts are 1 to ${PART_COUNT}`);
    }
    for (const folder of folders) {
        describe(folder, () => runTestFiles(path.join(directory, folder)));
    }
}
