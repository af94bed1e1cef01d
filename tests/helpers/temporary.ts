/**
 * Temporary directories a test file does not remove itself: made under os.tmpdir() (the run's
 * private TMPDIR, tests/setup/private-tmpdir.js) and removed after the test file's last test by
 * tests/setup/temporary-directories.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const created: string[] = [];

/** A new empty directory named `<prefix><random>`, removed after the test file. */
export function temporaryDirectory(prefix: string): string {
    const directory = mkdtempSync(path.join(os.tmpdir(), prefix));
    created.push(directory);
    return directory;
}

/** Removes every directory `temporaryDirectory` made so far. */
export function removeTemporaryDirectories(): void {
    for (const directory of created.splice(0)) {
        rmSync(directory, { recursive: true, force: true });
    }
}
