/**
 * One jest entry per test folder: `tests/<area>.test.ts` runs every `tests/<area>/*.test.ts` in one
 * module registry. Jest gives each entry its own registry, and a file that renders the program
 * first loads the Pulumi SDKs and every component into it (about 1.7 s of CPU per file, measured
 * on the suite's 2-core machines); a folder pays that once. Each file's tests and hooks stay
 * inside a describe block named after the file, so a file's beforeEach/afterAll reach only its own
 * tests. One file runs on its own with `npx jest --testMatch '<rootDir>/tests/operator/install.test.ts'`
 * (docs/testing.md, for a list of files).
 */
import * as fs from "node:fs";
import * as path from "node:path";

/** The test files of `folder`, in name order. */
export function testFilesIn(folder: string): string[] {
    return fs
        .readdirSync(folder)
        .filter((name) => name.endsWith(".test.ts"))
        .sort();
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
